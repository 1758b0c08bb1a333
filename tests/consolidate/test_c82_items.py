"""A terse log written as lines of items ("FV2 racked, 12 kegs; Hose 3 leaking - taped; Cask
wash 4 done."): a fact noted as one item among the day's chores is read item by item, so the fact
stays a fact while its routine neighbours go to the log (``routine.apart``, ``periods.line_items``)."""

from __future__ import annotations

from sidecar.consolidate.periods import apart_parts, line_items, said_inside
from sidecar.consolidate.routine import apart, routine

FACT = "- FV3 racked, 33 kegs; Kings Head contact Sam Hird; Cask wash 13 done."


def _week() -> list[tuple[str, str]]:
    """A week of a brewery's terse log, each line two of its chores."""
    lines = []
    for day in range(7):
        for k in range(6):
            n = day * 6 + k
            chores = [f"FV{n % 6} racked, {n + 4} kegs", f"Hose {n % 9} leaking - taped", f"Cask wash {n} done"]
            del chores[n % 3]
            lines.append((f"daily/d{day}.md", f"- {'; '.join(chores)}."))
    return lines


def _read(lines: list[tuple[str, str]]) -> dict[str, list[str]]:
    return {
        text: (apart_parts(text, at) if at is not None else [text])
        for (_, text), at in zip(lines, apart(lines), strict=True)
    }


def test_a_fact_noted_between_chores_is_read_item_by_item() -> None:
    lines = _week()
    lines.insert(12, ("daily/d2.md", FACT))
    assert routine(lines)[12]  # the line holds the week's moulds
    read = _read(lines)
    assert read[FACT] == ["- FV3 racked, 33 kegs", "- Kings Head contact Sam Hird", "- Cask wash 13 done."]
    # the week's summary reads the parts again: the fact item is no routine line, its neighbours are
    parts = [(source, part) for source, text in lines for part in read[text]]
    flags = dict(zip((text for _, text in parts), routine(parts), strict=True))
    assert not flags["- Kings Head contact Sam Hird"]
    assert flags["- FV3 racked, 33 kegs"]
    assert flags["- Cask wash 13 done."]


def test_a_line_of_chores_alone_stays_whole() -> None:
    lines = _week()
    assert routine(lines) == [True] * len(lines)
    assert apart(lines) == [None] * len(lines)


def test_an_items_outcome_stays_with_it() -> None:
    assert line_items("- Mains water stopcock behind FV5 - BT1 CIP - done - Floor squeegeed") == [
        "- Mains water stopcock behind FV5",
        "- BT1 CIP - done",
        "- Floor squeegeed",
    ]
    assert line_items("- Keg line 7 -> taproom") == ["- Keg line 7 -> taproom"]


def test_a_later_run_knows_an_item_as_its_notes() -> None:
    assert "- Kings Head contact Sam Hird" in said_inside(FACT)


def test_an_item_written_with_the_mould_line_after_line_is_the_moulds_own() -> None:
    """In a quiet week a mould of two items is written too seldom for its first item's words to be
    frequent: that item goes with the framed one line after line, and the line stays one mould."""
    names = ("Ben", "Hana", "Aisha", "Carlos")
    lines = [
        (
            f"daily/d{day}.md",
            f"- Looked at the {('orders', 'refunds', 'stock', 'payroll')[day % 4]} dashboard lag; traced it to a late update.",
        )
        for day in range(4)
    ] + [
        (
            f"daily/d{day + 3}.md",
            f"- Answered a question from {names[day]} about why stg_orders has {day + 7} duplicate keys; traced it to a late update.",
        )
        for day in range(4)
    ]
    fact = ("daily/d2.md", "- Kings Head contact Sam Hird; traced it to a late update.")
    lines.append(fact)
    read = _read(lines)
    assert read[fact[1]] == ["- Kings Head contact Sam Hird", "- traced it to a late update."]
    assert all(read[text] == [text] for _, text in lines if text.startswith("- Answered"))
