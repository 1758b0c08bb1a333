"""Recalled hits as a prompt-ready block: fresher hits first, fitted to a character budget, fenced
as untrusted hints by :func:`sidecar.prompt.recalled.render_recalled`."""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.episodic.query import RecalledEntry
from sidecar.prompt.recalled import RecalledHit, render_recalled

__all__ = ["FRESHNESS_HALF_LIFE_DAYS", "freshness_weight", "render_injection"]

#: A hit this many days old counts half as much as an identical one from today.
FRESHNESS_HALF_LIFE_DAYS = 30.0


def freshness_weight(age_seconds: float) -> float:
    """``0.5 ** (age in days / 30)``: 1.0 now, 0.5 at a month, 0.25 at two."""
    return float(0.5 ** (max(0.0, age_seconds) / 86400.0 / FRESHNESS_HALF_LIFE_DAYS))


def render_injection(hits: Sequence[RecalledEntry], max_chars: int) -> str:
    """The ``<recalled-memory>`` block for ``hits``, at most ``max_chars`` long ("" if none fit).

    Each hit is weighted ``score × freshness_weight(age)`` and the block lists them heaviest
    first, so when the budget is tight the stale, weak ones are the ones left out.
    """
    weighted = sorted(hits, key=lambda h: -h.score * freshness_weight(h.age_seconds))
    recalled = [
        RecalledHit(
            text=h.summary,
            source=f"journal {h.entry_type}" + (f" by {h.agent_id}" if h.agent_id else ""),
            age_seconds=h.age_seconds,
            score=h.score * freshness_weight(h.age_seconds),
        )
        for h in weighted
    ]
    return render_recalled(recalled, max_chars)
