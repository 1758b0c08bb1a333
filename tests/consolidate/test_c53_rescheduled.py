"""A schedule moved with every other word kept: a newer line the same as a standing one but for
its one value phrase, a weekday or a time (or both) given anew as a weekday or a time, changes it
(``changes._rescheduled``). Another subject in the same mould, or a phrase that may hold the
subject (a name, a code), is still no change."""

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
OLD = "Glaze mixing is Tuesday 09:30."


def _changed(old: str, new: str) -> dict[str, Said]:
    return changed_after(START, FACTS, old, new)


def test_a_day_and_time_given_anew_with_every_other_word_kept_is_a_change() -> None:
    new = "Glaze mixing Thursday 14:00."
    assert _changed(OLD, new)[normalised(OLD)].text == new


def test_another_subject_in_the_mould_or_a_name_in_the_slot_is_no_change() -> None:
    assert normalised(OLD) not in _changed(OLD, "Glaze firing is Thursday 14:00.")
    old = "Kiln log for shelf-a: KLX4471."
    assert normalised(old) not in _changed(old, "Kiln log for shelf-b: KLX9902.")
