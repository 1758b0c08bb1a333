"""A line restated with one value replaced, where the values kept are nearly all its subject, is a
change only when the value given is of the kind of the value lost: a vendor table's row naming the
product beside its contract number is no new version of it."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.job import _stale
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)


def _dated(*lines: tuple[int, str]) -> list[Said]:
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), 0), claim(text))
        for d, text in lines
    ]


def _three_times(text: str) -> list[tuple[int, str]]:
    return [(0, text), (8, text), (16, text)]


def test_a_contract_number_beside_the_product_is_no_new_version() -> None:
    old = "**EHR:** we're on Medisphere 2023.2."
    said = _dated(*_three_times(old), (40, "| Medisphere | EHR | - | MED-42687 |"))
    assert normalised(old) not in changed_by_value(said)
    assert normalised(old) not in _stale(said)


def test_another_version_of_the_product_is_one() -> None:
    old = "**EHR:** we're on Medisphere 2023.2."
    for new in ("**EHR:** we're on Medisphere 2024.1.", "Medisphere upgraded to 2024.1 over the weekend."):
        stale = _stale(_dated(*_three_times(old), (40, new)))
        assert stale[normalised(old)].text == new


def test_a_subject_of_two_words_kept_word_for_word_needs_no_value_of_one_kind() -> None:
    old = "The staging database lives on db-stage-3."
    new = "The staging database lives on 10.20.4.17 since the move."
    stale = changed_by_value(_dated(*_three_times(old), (40, new)))
    assert stale[normalised(old)].text == new
