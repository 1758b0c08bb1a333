"""Importance of an embedded entry: a baseline at indexing, then nightly decay and reinforcement.

``importance = base × RecencyFactor × (1 + ReferenceBoost / 8)`` with
``RecencyFactor = max(0.1, 1 − days/180)`` (days since indexing; the floor keeps old-but-critical
memories above zero) and ``ReferenceBoost = log2(refs + 1)`` (the /8 keeps a runaway recall loop
from dominating rare-but-critical entries). Recall sorts by ``cosine × importance``.
The product is not clamped: a fresh, often-recalled entry may exceed 1.0, which keeps its order
above an equally fresh entry that nobody recalls.
"""

from __future__ import annotations

import math

__all__ = [
    "HORIZON_DAYS",
    "PRIORITY_FLOORS",
    "RECENCY_FLOOR",
    "base_importance",
    "decayed_importance",
    "recency_factor",
    "reference_boost",
]

HORIZON_DAYS = 180.0
RECENCY_FLOOR = 0.1
#: Operator-applied priority markers floor the baseline.
PRIORITY_FLOORS = {"pin": 0.80, "high": 0.85, "permanent": 0.95}

# Escalations and eval regressions seed high; routine info events seed 0.5.
_TYPE_BASE = {
    "peer.escalation": 0.9,
    "eval.regression_detected": 0.9,
    "approval.denied": 0.8,
    "memory.consolidated": 0.75,
    "summary.generated": 0.7,
}
_SEVERITY_BASE = {"debug": 0.3, "info": 0.5, "warn": 0.65, "error": 0.8}


def base_importance(entry_type: str, severity: str, priority: str | int | None) -> float:
    """The seed in [0, 1]: the higher of the type's and the severity's value, floored by priority.

    A numeric priority (1-10, the importance its user assigns) is the seed itself: ``priority / 10``.
    """
    if isinstance(priority, int):
        return max(0.0, min(1.0, priority / 10.0))
    base = max(_TYPE_BASE.get(entry_type, 0.0), _SEVERITY_BASE.get(severity, 0.5))
    return max(base, PRIORITY_FLOORS.get(priority or "", 0.0))


def recency_factor(days: float) -> float:
    """``max(0.1, 1 − days/180)``."""
    return max(RECENCY_FLOOR, 1.0 - max(0.0, days) / HORIZON_DAYS)


def reference_boost(refs: int) -> float:
    """``log2(refs + 1)``: 0 for a never-recalled entry."""
    return math.log2(max(0, refs) + 1)


def decayed_importance(base: float, days: float, refs: int) -> float:
    """The nightly recomputation of one row (see the module docstring)."""
    return base * recency_factor(days) * (1.0 + reference_boost(refs) / 8.0)
