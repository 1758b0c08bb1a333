"""A change read by its words' meaning (no embedding model) when the newer line gives one value
anew and leaves out a detail of another kind the older line gave beside it: "Choir practice 19:30,
Calloway hall + Zoom link for absentees" then "Choir practice is at 20:15." The newer line lost two
value phrases; one held a time and the time is what it gives, the other named a place, which it
does not say at all. Two phrases of the kind given (a table row naming another subject's name and
number) are not read so."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 2, 2)  # a Monday
OTHER = [  # standing lines of other subjects, said in two weeks
    "The minibus insurance renews with Zurich in April.",
    "Hymn books are ordered from Canterbury Press.",
    "The organ tuner visits every spring from Harrison Organs.",
    "Parish newsletter goes out on the first Sunday.",
    "The hall keys are kept by Margery.",
]
PRACTICE = "Choir practice 19:30, Calloway hall + Zoom link for absentees"
MOVED = "Choir practice is at 20:15."


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _read(changes: list[tuple[str, str]]) -> dict[str, str]:
    lines = [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]
    for n, (old, new) in enumerate(changes):
        lines += [_said(old, day, n) for day in (0, 8, 15)] + [_said(new, 60 + n, n)]
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def test_a_value_given_anew_with_a_detail_of_another_kind_left_out_is_a_change() -> None:
    assert _read([(PRACTICE, MOVED)]) == {"choir practice 19 30 calloway hall zoom link for absentees": f"- {MOVED}"}


def test_both_lost_phrases_given_anew_are_no_detail_left_out() -> None:
    # the newer line gives a time and a place: each lost phrase holds a kind it gives, so neither
    # is a detail left out; words alone cannot tell two slots given anew from a row of the same
    # mould for another subject, and this reading leaves it to the other rules
    row = "Choir practice 21:00, Marlow hall."
    assert _read([(PRACTICE, row)]) == {}
