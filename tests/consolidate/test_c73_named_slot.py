"""A customer, a colleague, a place named in half a week's lines is the slot of its moulds, not a
mould of its own: a fact said once of it ("The contact at St Aidan's School is Carys Pryce") is a
fact, where the mould lines that name it ("Folded and boxed 588 flyers for St Aidan's School")
stay routine (``routine.py``), in its week and through the run's moulds in a quieter one."""

from __future__ import annotations

from sidecar.consolidate.routine import routine, routine_by, run_frames

CUSTOMERS = ("St Aidan's School", "Wren Theatre Club")
FACTS = (
    "The contact at St Aidan's School is Carys Pryce",
    "St Aidan's School collects its orders on Tuesdays",
)


def _day(week: int, day: int) -> list[str]:
    """A print shop's day: moulds with a customer and a number in each."""
    n = week * 7 + day
    out = []
    for k, customer in enumerate(CUSTOMERS):
        out += [
            f"Folded and boxed {100 + n * 7 + k} flyers for {customer}",
            f"Printed {300 + n * 11 + k} leaflets for {customer} on the Riso",
            f"Sent the {customer} posters proofs over at {9 + (n + k) % 8}:00",
        ]
    return out


def _week(week: int, days: int = 7) -> list[tuple[str, str]]:
    return [(f"daily/{week}-{day}.md", line) for day in range(days) for line in _day(week, day)]


def test_a_fact_said_of_a_named_slot_is_no_mould_line() -> None:
    lines = _week(0)
    lines.insert(9, ("daily/0-1.md", FACTS[0]))
    lines.insert(20, ("daily/0-3.md", FACTS[1]))
    flags = dict(zip((text for _, text in lines), routine(lines), strict=True))
    assert not flags[FACTS[0]]
    assert not flags[FACTS[1]]
    assert all(flag for text, flag in flags.items() if text not in FACTS)


def test_a_named_slot_frames_no_fact_through_the_run() -> None:
    weeks = [_week(w) for w in range(4)]
    quiet = [*_week(4, days=2), ("daily/4-1.md", FACTS[0])]
    frames = run_frames([*weeks, quiet])
    flags = routine(quiet, frames)
    assert not flags[-1]
    assert all(flags[:-1])
    items = [(w, source, text) for w, week in enumerate([*weeks, quiet]) for source, text in week]
    assert routine_by(items)[-1] is False
