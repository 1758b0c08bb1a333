"""A change read by meaning when it is said twice: a second later line naming the value the
nearest one gives anew says that change again, so it is no sibling fact whose nearness would
leave the reading in doubt (``changes.changed_by_meaning``); a line in the same frame with a
value of its own still is."""

from __future__ import annotations

from datetime import date

from tests.support.said import by_meaning

START = date(2026, 3, 2)
OLD = "Survey maps are printed by Calloway Press on heavy stock."
NEAREST = "We've gone with Marlow Bindery for the survey maps, heavy stock as before."
AGAIN = "Marlow Bindery binds our survey maps in heavy stock, trimmed square."
#: the workshop's other standing facts, each said in three weeks
FACTS = [
    "The kiln is serviced by Pembury Thermal every spring.",
    "Glaze powders come from Tregarn Supplies in sealed tubs.",
    "The studio alarm code is held by Ottoline Vance.",
]


def _read(*later: tuple[str, int]) -> dict[str, str]:
    return by_meaning(START, OLD, FACTS, later, "Fired {} pots in the big kiln.")


def test_a_change_said_again_in_other_words_is_still_read() -> None:
    assert _read((NEAREST, 60)) == {"survey maps are printed by calloway press on heavy stock": f"- {NEAREST}"}
    found = _read((NEAREST, 60), (AGAIN, 75))
    assert found.keys() == {"survey maps are printed by calloway press on heavy stock"}
    assert set(found.values()) <= {f"- {NEAREST}", f"- {AGAIN}"}


def test_a_sibling_with_a_value_of_its_own_still_leaves_it_in_doubt() -> None:
    sibling = "We've gone with Hobart Print for the survey charts, heavy stock as before."
    assert _read((NEAREST, 60), (sibling, 75)) == {}
