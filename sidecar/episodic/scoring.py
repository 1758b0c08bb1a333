"""How a recalled memory is scored, and the parts ``explain`` shows.

``importance`` (the default): ``similarity × importance × (0.5 + 0.5 × confidence)``,
where importance is the entry's decayed importance (its seed, the priority over ten, moved by
feedback, times recency and reference boost) and confidence its feedback-moved confidence: a
memory its readers voted down ranks below its twin at full confidence, yet still ranks.

``activation``: ``0.6 × similarity + 0.2 × priority + 0.1 × confidence + 0.1 × recency``,
priority the user-assigned 1-10 over ten. Recency is Ebbinghaus retention, ``exp(−t / S)``: ``t``
the days since the entry was last recalled (or written), ``S`` its stability, ``STABILITY_DAYS ×
(1 + recalls)``, so every recall makes a memory fade more slowly. Frequency
(``log2(1 + recalls) / log2(1 + FREQUENCY_CAP)``, at most 1) is shown by ``explain`` but weighs
nothing: the activation formula has no such term, and recalls already slow the fading of recency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from sidecar.clock import age_days

__all__ = [
    "ACTIVATION_WEIGHTS",
    "FREQUENCY_CAP",
    "SCORINGS",
    "STABILITY_DAYS",
    "Parts",
    "frequency",
    "retention",
    "score",
]

SCORINGS = ("importance", "activation")
ACTIVATION_WEIGHTS = {"similarity": 0.6, "priority": 0.2, "confidence": 0.1, "recency": 0.1}
#: A memory never recalled keeps e^-1 (37%) of its recency after this many days.
STABILITY_DAYS = 7.0
FREQUENCY_CAP = 32


def retention(last_touched: datetime, recalls: int, now: datetime) -> float:
    """Ebbinghaus retention in (0, 1]: 1.0 just after a write or a recall."""
    stability = STABILITY_DAYS * (1 + max(0, recalls))
    return math.exp(-age_days(last_touched, now) / stability)


def frequency(recalls: int) -> float:
    return min(1.0, math.log2(1 + max(0, recalls)) / math.log2(1 + FREQUENCY_CAP))


@dataclass(frozen=True, slots=True)
class Parts:
    """One hit's score and what it is made of."""

    scoring: str
    similarity: float
    similarity_source: str  # "cosine", or "bm25_rank" when the dense leg could not run
    importance: float
    recency: float
    frequency: float
    score: float
    priority: float = 0.5
    confidence: float = 1.0

    def to_json(self) -> dict[str, float | str]:
        parts: dict[str, float | str] = {
            "scoring": self.scoring,
            "similarity": round(self.similarity, 6),
            "similarity_source": self.similarity_source,
            "importance": round(self.importance, 6),
            "recency": round(self.recency, 6),
            "frequency": round(self.frequency, 6),
            "priority": round(self.priority, 6),
            "confidence": round(self.confidence, 6),
            "score": round(self.score, 6),
        }
        if self.scoring == "activation":
            parts["weights"] = ", ".join(f"{k} {v}" for k, v in ACTIVATION_WEIGHTS.items())
        return parts


def score(
    scoring: str,
    *,
    similarity: float,
    similarity_source: str,
    importance: float,
    last_touched: datetime,
    recalls: int,
    now: datetime,
    priority: float = 0.5,
    confidence: float = 1.0,
) -> Parts:
    """One hit's score by ``scoring``; ``priority`` is the user's 1-10 over ten, ``confidence`` 0-1."""
    similarity = min(1.0, max(0.0, similarity))
    importance = max(0.0, importance)
    priority, confidence = min(1.0, max(0.0, priority)), min(1.0, max(0.0, confidence))
    recency, freq = retention(last_touched, recalls, now), frequency(recalls)
    if scoring == "activation":
        w = ACTIVATION_WEIGHTS
        total = (
            w["similarity"] * similarity
            + w["priority"] * priority
            + w["confidence"] * confidence
            + w["recency"] * recency
        )
    else:
        total = similarity * importance * (0.5 + 0.5 * confidence)
    return Parts(scoring, similarity, similarity_source, importance, recency, freq, total, priority, confidence)
