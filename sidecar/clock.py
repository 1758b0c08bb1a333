"""Timestamps: timezone-aware UTC in Python, one fixed ISO 8601 text form in SQLite (the journal's,
and what ingest and the graph read from requests).

Every stored timestamp goes through :func:`to_iso`, so text comparison in SQL orders them correctly.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["age_days", "parse_iso", "to_iso", "utcnow"]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_iso(when: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ`` in UTC; a naive datetime is taken to be UTC already. The
    year has four digits always (``strftime`` writes year 999 as ``999``, which sorts after 2026)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    at = when.astimezone(UTC)
    return (
        f"{at.year:04d}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:{at.second:02d}.{at.microsecond:06d}Z"
    )


def parse_iso(text: str) -> datetime:
    """Parse any ISO 8601 form (``Z`` suffix included) into an aware UTC datetime."""
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59:59-14:00 is past the last instant a datetime holds
        raise ValueError(f"{text!r} is out of range once in UTC") from None


def age_days(then: datetime, now: datetime) -> float:
    """Days from ``then`` to ``now`` (never negative: a clock skewed into the future counts as 0)."""
    return max(0.0, (now - then).total_seconds() / 86400.0)
