"""A change read by meaning when the line nearest the standing fact names the new value without
saying the change ("Kiln firing from 04:30 UTC cooled evenly": the standing line's mould with other
words), and another later line naming that value says it ("Moved the kiln firing to 04:30 UTC so it
misses the evening tariff"): the change is read from the line that says it
(``changes.changed_by_meaning``). A later line that only reports the new value, with no line saying
the change, changes nothing."""

from __future__ import annotations

from datetime import date

from tests.support.said import by_meaning

START = date(2026, 2, 2)
OLD = "Kiln firings kick off 21:00 UTC."
REPORT = "Kiln firing from 04:30 UTC cooled evenly."
CHANGE = "Moved the kiln firing to 04:30 UTC so it misses the evening tariff."
#: the studio's other standing facts, each said in three weeks
FACTS = [
    "The kiln shelves come from Tregarn Supplies in sealed crates.",
    "The studio alarm code is held by Ottoline Vance.",
    "Clay is delivered by Merrow Clayworks on Thursdays.",
]


def _read(*later: tuple[str, int]) -> dict[str, str]:
    return by_meaning(START, OLD, FACTS, later, "Packed {} mugs for the market stall.")


def test_the_change_is_read_from_the_line_that_says_it_beside_a_nearer_report() -> None:
    assert _read((REPORT, 60), (CHANGE, 62)) == {"kiln firings kick off 21 00 utc": f"- {CHANGE}"}


def test_a_report_of_the_new_value_alone_changes_nothing() -> None:
    assert _read((REPORT, 60)) == {}
