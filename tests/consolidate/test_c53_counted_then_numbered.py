"""A line that counts things ("The drying rack holds 8 boards") is not changed by a later line that
names one of them by its number ("Drying rack board 5 warped over the weekend"): one thing of
those counted, not a new count (``changes._other_subject``). A new count of the same things is
still a change."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said
from tests.support.said import changed_after

START = date(2026, 5, 4)
FACTS = [
    "Kiln firings are logged by Pembury Thermal.",
    "Glaze powders come from Tregarn Supplies.",
    "The studio alarm code is held by Ottoline Vance.",
]
OLD = "The drying rack holds 8 boards."


def _changed(old: str, new: str) -> dict[str, Said]:
    return changed_after(START, FACTS, old, new)


def test_one_of_the_things_counted_named_by_its_number_is_no_new_count() -> None:
    assert normalised(OLD) not in _changed(OLD, "Drying rack board 5 warped over the weekend.")


def test_a_new_count_of_the_same_things_is_a_change() -> None:
    new = "The drying rack holds 12 boards."
    assert _changed(OLD, new)[normalised(OLD)].text == new
