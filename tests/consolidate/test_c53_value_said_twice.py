"""A value a line names twice is one value phrase: a later line that gives it anew changes the
line, read by meaning as a line naming it once is (``changes._Meaning.restates``); two values
lost are still two phrases."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)
OLD = "Studio glaze orders go through Tregarn, so the glaze stock sheet is really Tregarn's prices."
NEW = "Studio glaze orders are with Brackley; their price list is in the office drawer."
FACTS = [
    "The kiln is serviced by Pembury Thermal every spring.",
    "The studio alarm code is held by Ottoline Vance.",
    "Clay deliveries come on Thursdays from the Ashdown yard.",
]


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _read(old: str, new: str) -> dict[str, str]:
    lines = [_said(old, day, 0) for day in (0, 8, 15)]
    lines += [_said(fact, day, 1 + n) for n, fact in enumerate(FACTS) for day in (1, 9, 17, 40)]
    lines += [_said(new, 60, 9)]
    lines += [_said(f"Fired {n * 7 + 20} pots in the big kiln.", n, 30) for n in range(70)]
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def test_a_value_named_twice_given_anew_is_a_change() -> None:
    assert _read(OLD, NEW) == {
        "studio glaze orders go through tregarn so the glaze stock sheet is really tregarn s prices": f"- {NEW}"
    }


def test_two_values_lost_are_still_two_phrases() -> None:
    old = "Studio glaze orders go through Tregarn, so the glaze stock sheet is really Halloran's prices."
    assert _read(old, NEW) == {}
