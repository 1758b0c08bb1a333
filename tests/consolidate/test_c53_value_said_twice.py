"""A value a line names twice is one value phrase: a later line that gives it anew changes the
line, read by meaning as a line naming it once is (``changes._Meaning.restates``); two values
lost are still two phrases."""

from __future__ import annotations

from datetime import date

from tests.support.said import by_meaning

START = date(2026, 3, 2)
OLD = "Studio glaze orders go through Tregarn, so the glaze stock sheet is really Tregarn's prices."
NEW = "Studio glaze orders are with Brackley; their price list is in the office drawer."
FACTS = [
    "The kiln is serviced by Pembury Thermal every spring.",
    "The studio alarm code is held by Ottoline Vance.",
    "Clay deliveries come on Thursdays from the Ashdown yard.",
]


def _read(old: str, new: str) -> dict[str, str]:
    return by_meaning(START, old, FACTS, [(new, 60)], "Fired {} pots in the big kiln.")


def test_a_value_named_twice_given_anew_is_a_change() -> None:
    assert _read(OLD, NEW) == {
        "studio glaze orders go through tregarn so the glaze stock sheet is really tregarn s prices": f"- {NEW}"
    }


def test_two_values_lost_are_still_two_phrases() -> None:
    old = "Studio glaze orders go through Tregarn, so the glaze stock sheet is really Halloran's prices."
    assert _read(old, NEW) == {}
