"""How a search lets something outside the index reorder its hits (the knowledge graph's lift,
set by the server): a plan for one query is asked for ``candidates`` hits and picks the ``limit``
it shows. The hits are described by what the lift reads (file, line span, heading, the chunk's
text, the score as shown), so the snippets are cut only for the hits it picks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

if TYPE_CHECKING:
    from sidecar.index.tier_index import RankedChunk

__all__ = ["BoostPlan", "Candidate", "Lifted", "SearchBoost", "candidate_of", "mark", "pick", "wanted"]

T = TypeVar("T")


class Candidate(NamedTuple):
    """A hit as the lift reads it; ``score`` as the answer shows it (rounded to 6 places)."""

    path: str
    heading: str
    line_start: int
    line_end: int
    text: str
    score: float


class Lifted(NamedTuple):
    """A picked hit: its index among the candidates, its lifted score, what the lift was made of."""

    at: int
    score: float
    why: dict[str, Any]


class BoostPlan(Protocol):
    """How one query lifts a tier's hits: asked for ``candidates`` hits, it orders them anew."""

    candidates: int

    def order(self, hits: Sequence[Candidate], limit: int) -> list[Lifted]: ...


class SearchBoost(Protocol):
    """Lifts the hits of a tier for a query (the knowledge graph's entities, set by the server)."""

    async def plan(self, source: str, query: str) -> BoostPlan | None: ...


def candidate_of(hit: RankedChunk, score: float) -> Candidate:
    """A BM25 hit as the lift reads it, shown with ``score``."""
    return Candidate(hit.path, hit.heading, hit.line_start, hit.line_end, hit.text, score)


def wanted(plan: BoostPlan | None, limit: int) -> int:
    """How many hits to rank for an answer of ``limit``: the plan's candidates, when there is one."""
    return limit if plan is None else max(limit, plan.candidates)


def pick(
    plan: BoostPlan | None, hits: Sequence[T], candidate: Callable[[T], Candidate], limit: int
) -> list[tuple[T, Lifted | None]]:
    """The ``limit`` hits an answer shows, each with its lift: the first ones without a plan, else
    those the plan picks (``candidate`` says how it reads a hit), best first."""
    if plan is None:
        return [(hit, None) for hit in hits[:limit]]
    return [(hits[choice.at], choice) for choice in plan.order([candidate(hit) for hit in hits], limit)]


def mark(result: dict[str, Any], lifted: Lifted | None, explain: bool) -> None:
    """Give a picked hit's answer its lifted score (and, with ``explain``, what the lift was made
    of); nothing without a lift."""
    if lifted is None:
        return
    result["score"] = lifted.score
    if explain:
        result["explain"] = {**result.get("explain", {}), "kg": lifted.why}
