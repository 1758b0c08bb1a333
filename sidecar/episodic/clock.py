"""Timestamps of the journal: timezone-aware UTC in Python, one fixed ISO 8601 text form in SQLite.

Every stored timestamp goes through :func:`to_iso`, so text comparison in SQL orders them correctly.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["age_days", "parse_iso", "to_iso", "utcnow"]

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(when: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; a naive datetime is taken to be UTC already."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime(_FORMAT)


def parse_iso(text: str) -> datetime:
    """Parse any ISO 8601 form (``Z`` suffix included) into an aware UTC datetime."""
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def age_days(then: datetime, now: datetime) -> float:
    """Days from ``then`` to ``now`` (never negative: a clock skewed into the future counts as 0)."""
    return max(0.0, (now - then).total_seconds() / 86400.0)
