"""Lines said on dated notes, as the change search reads them: a few standing facts said in three
weeks, then the lines a test is about, each on its day of a note."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
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
