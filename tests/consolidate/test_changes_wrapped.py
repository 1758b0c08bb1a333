"""One wrapper said around two statements (the same opening and closing words, and between them
two things that share no word) is no change of the first statement by the second."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)  # a Monday
OTHER = [  # the rest of a tier: standing lines of other subjects, said in two weeks
    "The loading bay key is kept by Oskar.",
    "Invoices are raised on the 3rd through Xero.",
    "Merges to main need a green pipeline on Gitea.",
]
WRAPPED = (
    "It came up again over coffee that the rescue radio channel for the crag is 0176 844 2210, and nobody objected."
)
OTHER_WRAPPED = (
    "It came up again over coffee that the bunk room sleeps 14 on six bunks and two singles, and nobody objected."
)


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _changed(old: str, newer: str) -> dict[str, str]:
    lines = [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]
    lines += [_said(old, day, 0) for day in (0, 8, 15)]
    lines.append(_said(newer, 40, 1))
    return {old: said.text for old, said in changed_by_value(lines).items()}


def test_another_statement_in_the_same_wrapper_changes_nothing() -> None:
    assert _changed(WRAPPED, OTHER_WRAPPED) == {}


def test_the_same_statement_with_another_value_in_the_wrapper_still_changes_it() -> None:
    moved = WRAPPED.replace("0176 844 2210", "0176 844 3355")
    assert list(_changed(WRAPPED, moved).values()) == [f"- {moved}"]
