"""Lines said on dated notes, as the change search reads them: a few standing facts said in three
weeks, then the lines a test is about, each on its day of a note."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, changed_by_value, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim


def said_on(start: date, facts: Sequence[str], *lines: tuple[int, str]) -> list[Said]:
    """``facts`` said on days 1, 9 and 17 after ``start``, then each ``(day, text)`` of ``lines``."""
    every = [(d, f) for d in (1, 9, 17) for f in facts] + list(lines)
    return [
        Said(text, f"daily/{(start + timedelta(days=d)).isoformat()}.md", (start + timedelta(days=d), n), claim(text))
        for n, (d, text) in enumerate(every)
    ]


def changed_after(start: date, facts: Sequence[str], old: str, new: str) -> dict[str, Said]:
    """The change search's reading by value of ``old`` said on days 0, 8 and 15 and ``new`` on day 40."""
    return changed_by_value(said_on(start, facts, (0, old), (8, old), (15, old), (40, new)))


def by_meaning(
    start: date, old: str, facts: Sequence[str], later: Sequence[tuple[str, int]], filler: str
) -> dict[str, str]:
    """The change search's reading by meaning (words, no model) of ``old`` said on days 0, 8 and 15,
    ``facts`` each said on days 1, 9, 17 and 40, each ``(text, day)`` of ``later``, and seventy days of
    a routine line (``filler`` formatted with a count): each old line's key to the newer line's text."""

    def said(text: str, day: int, order: int) -> Said:
        when = start + timedelta(days=day)
        return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))

    lines = [said(old, day, 0) for day in (0, 8, 15)]
    lines += [said(fact, day, 1 + n) for n, fact in enumerate(facts) for day in (1, 9, 17, 40)]
    lines += [said(text, day, 10 + n) for n, (text, day) in enumerate(later)]
    lines += [said(filler.format(n * 7 + 20), n, 30) for n in range(70)]
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {key: newer.text for key, newer in found.items()}
