"""Search across scopes: the agent tier, the crew tier (own index on a lead, the lead's
sidecar on a member) and both, fused by reciprocal rank fusion.

A scope that does not exist here is a 503; in ``both``, a failing tier degrades the answer
(``degraded``) instead of failing it; only when every scope failed is it a 500.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from sidecar.errors import BadRequest, EngineUnavailable, SearchFailed, SidecarError
from sidecar.index.query import check_query
from sidecar.retrieval.fusion import rrf

if TYPE_CHECKING:
    from sidecar.index.tier import Tier
    from sidecar.retrieval.hybrid import HybridSearcher

__all__ = ["MAX_LIMIT", "SCOPES", "CrewSource", "SearchRequest", "SearchService"]

log = structlog.get_logger("sidecar.retrieval.search")

MAX_LIMIT = 50
SCOPES = ("agent", "crew", "both")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    limit: int = 10
    scope: str = "agent"
    raw_fts: bool = False
    after_seq: int | None = None
    explain: bool = False

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SearchRequest:
        """Validate a client's search body; every problem is a 400 naming the field."""
        if "query" not in body:
            raise BadRequest("missing field: query", code="missing_query")
        query = check_query(body["query"])
        limit = body.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise BadRequest("limit must be an integer from 1 to 50", code="invalid_limit")
        if limit < 1:
            raise BadRequest("limit must be at least 1", code="invalid_limit")
        scope = body.get("scope", "agent")
        if scope not in SCOPES:
            raise BadRequest(f"scope must be one of {', '.join(SCOPES)}", code="invalid_scope")
        syntax = body.get("syntax", "text")
        if syntax not in ("text", "fts5"):
            raise BadRequest('syntax must be "text" or "fts5"', code="invalid_syntax")
        after_seq = body.get("after_seq")
        if after_seq is not None and (isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0):
            raise BadRequest("after_seq must be a non-negative integer", code="invalid_after_seq")
        explain = body.get("explain", False)
        if not isinstance(explain, bool):
            raise BadRequest("explain must be true or false", code="invalid_explain")
        return cls(query, min(limit, MAX_LIMIT), scope, syntax == "fts5", after_seq, explain)


class CrewSource(Protocol):
    """Where crew-scope results come from on a member: the lead's sidecar (hits, degraded legs)."""

    async def search(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]: ...


class SearchService:
    def __init__(self, agent: Tier, crew_tier: Tier | None = None, crew_remote: CrewSource | None = None) -> None:
        self.agent = agent
        self.crew_tier = crew_tier
        self.crew_remote = crew_remote
        # Dense + BM25 over the local tiers, set once the embedder context started; None: BM25 only.
        self.hybrid: HybridSearcher | None = None
        # Told the scope and seconds of every answered search (the server's metrics); None: nobody.
        self.on_search: Callable[[str, float], None] | None = None

    @property
    def has_crew(self) -> bool:
        return self.crew_tier is not None or self.crew_remote is not None

    async def search(self, req: SearchRequest) -> dict[str, Any]:
        started = time.perf_counter()
        if req.scope != "agent" and not self.has_crew:
            raise EngineUnavailable("this agent has no crew tier (role solo): use scope agent", code="no_crew_tier")
        if req.scope == "both":
            results, degraded = await self._both(req)
        else:
            results, degraded = await self.search_scope(req.scope, req)
        return _answer(req, results, degraded, started)

    async def search_scope(self, scope: str, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]:
        """One scope's ranked hits and what had to be left out of them (``dense``)."""
        if scope == "crew" and self.crew_tier is None:
            assert self.crew_remote is not None
            return await self.crew_remote.search(req)
        tier = self.agent if scope == "agent" else self.crew_tier
        assert tier is not None
        try:
            if self.hybrid is not None and not req.raw_fts:
                return await self.hybrid.search(tier, req.query, req.limit, req.explain)
            hits = await tier.search(req.query, req.limit, req.raw_fts)
        except SidecarError:
            raise
        except Exception as exc:
            log.exception("search.failed", tier=scope)
            raise SearchFailed(f"{scope} search failed: {type(exc).__name__}") from exc
        return [h.as_json(scope) for h in hits], []

    async def _both(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]:
        legs: list[list[dict[str, Any]]] = []
        degraded: list[str] = []
        errors: list[SidecarError] = []
        for scope in ("agent", "crew"):
            try:
                hits, leg_degraded = await self.search_scope(scope, req)
                legs.append(hits)
                degraded += [d for d in leg_degraded if d not in degraded]
            except BadRequest:
                raise
            except SidecarError as exc:
                degraded.append(scope)
                errors.append(exc)
                log.warning("search.degraded", scope=scope, code=exc.code)
        if not legs:
            raise SearchFailed("search failed in every scope", code="search_failed", causes=[e.code for e in errors])
        return _fuse(legs, req.limit), degraded


def _fuse(legs: list[list[dict[str, Any]]], limit: int) -> list[dict[str, Any]]:
    """RRF (k = 60) over the tiers' rankings; each hit keeps its source, score becomes the fused one."""
    by_key: dict[tuple[str, str, int], dict[str, Any]] = {}
    rankings: list[list[tuple[str, str, int]]] = []
    for leg in legs:
        keys = []
        for hit in leg:
            key = (hit["source"], hit["path"], hit["line_start"])
            by_key.setdefault(key, hit)
            keys.append(key)
        rankings.append(keys)
    fused = rrf(rankings, k=60)[:limit]
    return [{**by_key[key], "score": round(score, 6)} for key, score in fused]


def _answer(req: SearchRequest, results: list[dict[str, Any]], degraded: list[str], started: float) -> dict[str, Any]:
    out: dict[str, Any] = {"results": results, "scope": req.scope}
    if degraded:
        out["degraded"] = degraded
    out["took_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return out
