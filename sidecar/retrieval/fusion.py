"""Rank fusion: merge several ranked lists (BM25, dense, two tiers) into one.

Pure functions, generic over the key type. ``rrf`` is reciprocal rank fusion (k=60);
``weighted`` is a min-max normalised weighted sum of raw scores. ``fuse`` runs either and keeps,
per key, its rank and raw score in every leg for a search's ``"explain": true``. Scores are always
higher-is-better: a caller holding FTS5 ``bm25()`` values (lower is better) negates them first.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

__all__ = ["DEFAULT_K", "FusedHit", "LegHit", "explain", "fuse", "rrf", "weighted"]

K = TypeVar("K", bound=Hashable)

#: The RRF constant of the original RRF paper; further tuning gains little.
DEFAULT_K = 60


def rrf(rankings: Sequence[Sequence[K]], k: int = DEFAULT_K) -> list[tuple[K, float]]:
    """Reciprocal rank fusion: each key scores the sum of ``1 / (k + rank)`` over the rankings.

    Ranks are 1-based; a key repeated within one ranking counts at its best rank only. Equal scores
    keep the order of first appearance (ranking 0 first, then ranking 1, ...).
    """
    if k < 0:
        raise ValueError(f"rrf: k must be >= 0; got {k}")
    scores: dict[K, float] = {}
    for ranking in rankings:
        seen: set[K] = set()
        for rank, key in enumerate(ranking, start=1):
            if key in seen:
                continue
            seen.add(key)
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return _sorted(scores)


def weighted(scored: Sequence[Mapping[K, float]], weights: Sequence[float]) -> list[tuple[K, float]]:
    """Sum over legs of ``weight * min-max normalised score``; a key missing from a leg gets 0 there.

    A leg whose scores are all equal (one item included) normalises to 1.0 for its members, so a
    lone hit is not erased. Equal fused scores keep the order of first appearance.
    """
    if len(scored) != len(weights):
        raise ValueError(f"weighted: {len(scored)} legs but {len(weights)} weights")
    fused: dict[K, float] = {}
    for leg, weight in zip(scored, weights, strict=True):
        for key, norm in _normalised(leg).items():
            fused[key] = fused.get(key, 0.0) + weight * norm
    return _sorted(fused)


@dataclass(frozen=True, slots=True)
class LegHit:
    """Where a key stood in one leg: 1-based rank and raw score, both None if the leg missed it."""

    rank: int | None
    score: float | None


@dataclass(frozen=True, slots=True)
class FusedHit(Generic[K]):
    """One fused result with its fused score and its standing in every leg (for explain)."""

    key: K
    score: float
    legs: tuple[LegHit, ...]

    def explain(self, leg_names: Sequence[str]) -> dict[str, Any]:
        """JSON-ready ``{"score", "legs": {name: {"rank", "score"}}}``, legs named in order."""
        if len(leg_names) != len(self.legs):
            raise ValueError(f"explain: {len(leg_names)} names for {len(self.legs)} legs")
        return {
            "score": self.score,
            "legs": {name: {"rank": h.rank, "score": h.score} for name, h in zip(leg_names, self.legs, strict=True)},
        }


def explain(fused: Sequence[tuple[K, float]], legs: Sequence[Sequence[tuple[K, float]]]) -> list[FusedHit[K]]:
    """Attach to each fused ``(key, score)`` its rank and raw score in every leg (ranked lists)."""
    standings: list[dict[K, LegHit]] = []
    for leg in legs:
        where: dict[K, LegHit] = {}
        for rank, (key, raw) in enumerate(leg, start=1):
            where.setdefault(key, LegHit(rank, raw))
        standings.append(where)
    missing = LegHit(None, None)
    return [FusedHit(key, score, tuple(s.get(key, missing) for s in standings)) for key, score in fused]


def fuse(
    legs: Sequence[Sequence[tuple[K, float]]],
    method: Literal["rrf", "weighted"] = "rrf",
    *,
    k: int = DEFAULT_K,
    weights: Sequence[float] | None = None,
) -> list[FusedHit[K]]:
    """Fuse ranked legs of ``(key, raw score)`` (best first) and explain every hit.

    ``rrf`` uses only the order of each leg; ``weighted`` uses the raw scores, with equal weights
    unless ``weights`` is given.
    """
    if method == "rrf":
        fused = rrf([[key for key, _ in leg] for leg in legs], k=k)
    elif method == "weighted":
        maps = [_first_scores(leg) for leg in legs]
        fused = weighted(maps, [1.0] * len(legs) if weights is None else weights)
    else:
        raise ValueError(f"fuse: unknown method {method!r}")
    return explain(fused, legs)


def _normalised(leg: Mapping[K, float]) -> dict[K, float]:
    if not leg:
        return {}
    values = list(leg.values())
    if not all(math.isfinite(v) for v in values):
        raise ValueError("weighted: scores must be finite")
    low, high = min(values), max(values)
    if high == low:
        return dict.fromkeys(leg, 1.0)
    span = high - low
    return {key: (value - low) / span for key, value in leg.items()}


def _first_scores(leg: Sequence[tuple[K, float]]) -> dict[K, float]:
    scores: dict[K, float] = {}
    for key, raw in leg:
        scores.setdefault(key, raw)
    return scores


def _sorted(scores: dict[K, float]) -> list[tuple[K, float]]:
    # sorted() is stable and dicts keep insertion order, so ties stay in first-appearance order.
    return sorted(scores.items(), key=lambda item: -item[1])
