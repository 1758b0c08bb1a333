"""How current a chunk's text is, by where it sits: a search ranks stale text below current text.

Consolidation keeps everything it rolls up: daily notes move to ``archive/`` (kept readable, out
of the prompt) and a line whose value a newer line changed moves under a ``## Superseded``
heading of its summary. Both stay searchable, so nothing is lost, but a query about a fact should
show its current value first. A hit's score is multiplied by its standing: 1 for live text,
``ARCHIVED`` under ``archive/``, ``SUPERSEDED`` under a ``Superseded`` heading (both when both).

Dated notes (``daily/YYYY-MM-DD.md``, its archived copy, a weekly summary ``YYYY-Www.md``) also
lose up to ``RECENCY`` of their score with age, linearly over ``RECENCY_DAYS``: of two notes that
match a query alike, the newer one ranks first, which is what a fact stated again with a new value
needs before any consolidation has run. Undated files (the evergreen file, topic files) keep 1.
The factor only reorders hits a query earned; it never makes or removes one. ``explain`` shows it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Protocol, TypeVar

__all__ = ["ARCHIVED", "RECENCY", "RECENCY_DAYS", "SLACK", "SUPERSEDED", "by_standing", "note_date", "standing"]

ARCHIVED = 0.5
SUPERSEDED = 0.25
RECENCY = 0.2
RECENCY_DAYS = 365
#: Extra hits a search reads beyond its limit, so live text ranked just below it can move up.
SLACK = 10
_SUPERSEDED_HEADING = "Superseded"
_DAY = re.compile(r"(?:^|/)(\d{4})-(\d{2})-(\d{2})\.md$")
_WEEK = re.compile(r"(?:^|/)(\d{4})-W(\d{2})\.md$")


class _Ranked(Protocol):
    @property
    def path(self) -> str: ...
    @property
    def heading(self) -> str: ...
    @property
    def score(self) -> float: ...


R = TypeVar("R", bound=_Ranked)


def standing(path: str, heading: str, today: date | None = None) -> float:
    """The factor a hit's score is multiplied by (module docstring)."""
    return _standing(path, heading, today or datetime.now(UTC).date())


@lru_cache(maxsize=4096)
def _standing(path: str, heading: str, today: date) -> float:
    """``standing`` on a given day: a pure function of its arguments, kept for the hits searches
    meet again (it costs a few microseconds a hit, a visible share of a BM25 answer)."""
    factor = ARCHIVED if path.startswith("archive/") else 1.0
    if heading.rsplit(" > ", 1)[-1].strip() == _SUPERSEDED_HEADING:
        factor *= SUPERSEDED
    day = note_date(path)
    if day is not None:
        age = (today - day).days
        factor *= 1.0 - RECENCY * min(max(age, 0), RECENCY_DAYS) / RECENCY_DAYS
    return factor


def by_standing(hits: Sequence[R], today: date | None = None) -> list[tuple[R, float, float]]:
    """BM25 ``hits`` (best first) reranked by score times standing: ``(hit, standing, score)``, ties
    in their BM25 order. The one ranking of a BM25 answer, whoever asks (the server, the CLI)."""
    today = today or datetime.now(UTC).date()  # once for the answer, not once a hit
    weighed = [(hit, factor := _standing(hit.path, hit.heading, today), hit.score * factor) for hit in hits]
    weighed.sort(key=lambda item: -item[2])  # stable
    return weighed


def note_date(path: str) -> date | None:
    """The day a dated note stands for (a weekly summary: its Sunday); None for any other file."""
    try:
        if match := _DAY.search(path):
            return date(int(match[1]), int(match[2]), int(match[3]))
        if match := _WEEK.search(path):
            return date.fromisocalendar(int(match[1]), int(match[2]), 7)
    except ValueError:
        return None  # a name that is no day ("2026-02-30.md", "2026-W99.md")
    return None
