"""A change read by meaning when the line nearest the standing fact names the new value without
saying the change ("Kiln firing from 04:30 UTC cooled evenly": the standing line's mould with other
words), and another later line naming that value says it ("Moved the kiln firing to 04:30 UTC so it
misses the evening tariff"): the change is read from the line that says it
(``changes.changed_by_meaning``). A later line that only reports the new value, with no line saying
the change, changes nothing."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim

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


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _lines(*later: tuple[str, int]) -> list[Said]:
    lines = [_said(OLD, day, 0) for day in (0, 8, 15)]
    lines += [_said(fact, day, 1 + n) for n, fact in enumerate(FACTS) for day in (1, 9, 17, 40)]
    lines += [_said(text, day, 10 + n) for n, (text, day) in enumerate(later)]
    return lines + [_said(f"Packed {n * 7 + 20} mugs for the market stall.", n, 30) for n in range(70)]


def _read(lines: list[Said]) -> dict[str, str]:
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def test_the_change_is_read_from_the_line_that_says_it_beside_a_nearer_report() -> None:
    assert _read(_lines((REPORT, 60), (CHANGE, 62))) == {"kiln firings kick off 21 00 utc": f"- {CHANGE}"}


def test_a_report_of_the_new_value_alone_changes_nothing() -> None:
    assert _read(_lines((REPORT, 60))) == {}
