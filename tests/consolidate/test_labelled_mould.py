"""A mould whose only fixed words are its label ("Kennel round: <dog> in <run>, <state>") is a
log: its two label words are a frame whatever the line's length, so each of the week's lines is
routine and no line of it is read as a new value of another's."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.routine import routine

START = date(2026, 3, 2)  # a Monday
DOGS = ["Biscuit", "Juno", "Pepper", "Marlowe", "Tilly", "Otto", "Rufus", "Nell", "Bramble"]
RUNS = ["the Larches", "the Hollies", "the Beeches", "the Rowans"]
STATES = ["ate well, lively", "off her food, watching it", "limping a little, vet told", "settled, quiet night"]


def _week() -> list[tuple[str, str]]:
    out = []
    for d in range(6):
        source = f"daily/{START + timedelta(days=d)}.md"
        for k in range(2):
            n = 2 * d + k
            dog, run, state = DOGS[n % len(DOGS)], RUNS[(n * 3) % len(RUNS)], STATES[(n * 5) % len(STATES)]
            out.append((source, f"Kennel round: {dog} in {run}, {state}."))
        out.append((source, f"Paid the feed invoice number {400 + d} by card."))
    out.append((f"daily/{START}.md", "Kennel round: the Larches gate latch needs oiling"))
    out.append((f"daily/{START}.md", "The boarding licence is held by Fernhill Kennels."))
    return out


def test_a_labelled_mould_of_varying_slots_is_routine() -> None:
    week = _week()
    flags = routine(week)
    for (_, text), flag in zip(week, flags, strict=True):
        assert flag == text.startswith("Kennel round: "), text
    # a label said on a few lines of the week is no mould's: a fact under it stands
    few = [item for item in week if not item[1].startswith("Kennel round: ")][:8]
    few += [(f"daily/{START}.md", "Card machine: Zettle, rented monthly.")]
    assert not any(routine(few))
