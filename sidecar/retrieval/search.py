"""Search across scopes: the agent tier, the crew tier (own index on a lead, the lead's
sidecar on a member) and both, merged by score. A hit's score is the one its tier's ranking gave
it (the hybrid's fused score, or BM25 times standing without an embedder) in every scope, so the
same hit shows the same score alone or in ``both``; ``both`` shows identical text once, the
agent's own copy first.

A scope that does not exist here is a 503; in ``both``, a failing tier degrades the answer
(``degraded``) instead of failing it; only when every scope failed is it a 500.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from sidecar.contract import MAX_LIMIT, SCOPES, SearchRequest
from sidecar.errors import BadRequest, NoCrewTier, SearchFailed, SidecarError
from sidecar.index.query import terms
from sidecar.index.snippet import Snippet, mark_markdown, query_tokens
from sidecar.retrieval.context import with_section
from sidecar.retrieval.flags import FlagCache
from sidecar.retrieval.lift import BoostPlan, SearchBoost, candidate_of, mark, pick, wanted
from sidecar.retrieval.priority import Admission, calm, default_slots
from sidecar.store.base import block_only

if TYPE_CHECKING:
    from sidecar.index.tier import Tier
    from sidecar.retrieval.hybrid import HybridSearcher

__all__ = ["MAX_LIMIT", "SCOPES", "BoostPlan", "CrewSource", "SearchBoost", "SearchRequest", "SearchService"]

log = structlog.get_logger("sidecar.retrieval.search")
#: The most crew hits ranked to fill an answer the operator models took places in.
_CREW_WIDEST = 400


class CrewSource(Protocol):
    """Where crew-scope results come from on a member: the lead's sidecar (hits, degraded legs)."""

    async def search(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]: ...


class SearchService:
    def __init__(
        self,
        agent: Tier,
        crew_tier: Tier | None = None,
        crew_remote: CrewSource | None = None,
        *,
        hybrid: HybridSearcher | None = None,
        boost: SearchBoost | None = None,
        on_search: Callable[[str, float], None] | None = None,
        crew_copy: Path | None = None,
        flags: FlagCache | None = None,
    ) -> None:
        self.agent = agent
        self.crew_tier = crew_tier
        self.crew_remote = crew_remote
        # Dense + BM25 over the local tiers; None: BM25 only.
        self.hybrid = hybrid
        # Told the scope and seconds of every answered search (the server's metrics); None: nobody.
        self.on_search = on_search
        # The injection scanner's verdicts on shown files; the command line's remembers clean files.
        self.flags = flags if flags is not None else FlagCache()
        # The knowledge graph's lift of hits for the entities a query names; None: no lift.
        self.boost = boost
        # A member's copy of the crew's files from a server crew store (sidecar.store.copy): its
        # crew hits' sections are read there. None: the crew's files are not here.
        self.crew_copy = crew_copy
        # How many ordinary hybrid searches do their work at once; the others wait before their
        # first stage (urgent ones never do). Read when the first search runs.
        self.slots = default_slots()
        self._admission: Admission | None = None

    @property
    def _embeds(self) -> bool:
        """Whether searches here embed their query (hybrid): their stages are then CPU-heavy."""
        return self.hybrid is not None and self.hybrid.embedder is not None

    @property
    def has_crew(self) -> bool:
        return self.crew_tier is not None or self.crew_remote is not None

    def prepare(self, req: SearchRequest) -> None:
        """Start what ``search(req)`` will need and can have before it runs: the query's vector, for
        a search that first waits for a write to be indexed."""
        local = req.scope != "crew" or self.crew_tier is not None
        if self.hybrid is not None and local and not req.raw_fts:
            self.hybrid.prefetch(req.query)

    async def search(self, req: SearchRequest, *, fallback: bool = False) -> dict[str, Any]:
        """Run ``req`` in its scope. ``fallback``: an ``agent`` search that finds nothing in the
        agent's own tier answers from the crew tier instead, and the answer says ``fell_back``
        (a member's default: the crew's memory is the leader's)."""
        started = time.perf_counter()
        if req.scope != "agent" and not self.has_crew:
            raise NoCrewTier("this agent has no crew tier (role solo): use scope agent")
        if not self._embeds:  # BM25 alone: its stages take less than a wait in line would
            return await self._search(req, fallback, started)
        if self._admission is None:
            self._admission = Admission(self.slots)
        async with self._admission.admitted():  # a few hybrid searches at once; urgent work goes in at once
            return await self._search(req, fallback, started)

    async def _search(self, req: SearchRequest, fallback: bool, started: float) -> dict[str, Any]:
        if self._embeds:  # a hybrid search's stages are CPU: urgent work in flight goes first
            await calm()
        fell_back = False
        if req.scope == "both":
            results, degraded = await self._both(req)
        else:
            results, degraded = await self.search_scope(req.scope, req)
        if fallback and req.scope == "agent" and not results and self.has_crew:
            results, degraded, fell_back = await self._fall_back(req, degraded)
        if req.context == "section":
            if self._embeds:
                await calm()
            results = await asyncio.to_thread(self._sections, results, query_tokens(terms(req.query)))
        if results:
            results = await self.flags.mark(results, self._roots())
        return _answer(req, results, degraded, started, fell_back)

    async def _fall_back(self, req: SearchRequest, degraded: list[str]) -> tuple[list[dict[str, Any]], list[str], bool]:
        """The crew tier's hits for an agent search that found none (a failing crew tier degrades)."""
        try:
            hits, crew_degraded = await self.search_scope("crew", req)
        except BadRequest:
            raise
        except SidecarError as exc:
            log.warning("search.fallback_failed", code=exc.code)
            return [], [*degraded, "crew"], False
        return hits, [*degraded, *(d for d in crew_degraded if d not in degraded)], bool(hits)

    def _roots(self) -> dict[str, Path]:
        """The tier dirs this process reads its hits' files from, by source."""
        return {"agent": self.agent.root, **({"crew": self.crew_tier.root} if self.crew_tier else {})}

    def _sections(self, results: list[dict[str, Any]], tokens: list[str]) -> list[dict[str, Any]]:
        """Each local hit with its whole heading section (a member's crew hits come with theirs, or
        from its copy of the crew's files)."""
        roots = {**({"crew": self.crew_copy} if self.crew_copy else {}), **self._roots()}
        return [
            with_section(roots[hit["source"]], hit, tokens) if hit["source"] in roots and "section" not in hit else hit
            for hit in results
        ]

    async def search_scope(self, scope: str, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]:
        """One scope's ranked hits and what had to be left out of them (``dense``)."""
        if scope == "crew" and self.crew_tier is None:
            assert self.crew_remote is not None
            return await self.crew_remote.search(req)
        tier = self.agent if scope == "agent" else self.crew_tier
        assert tier is not None
        plan = None if req.raw_fts else await self._boost_plan(scope, req.query)
        if scope == "agent":
            return await self._ranked(scope, tier, req, plan, req.limit)
        # The crew's operator models are the block's alone: ranked, then left out, asking for more
        # while they took places the answer needs (a crew without them ranks once).
        limit = req.limit
        while True:
            found, degraded = await self._ranked(scope, tier, req, plan, limit)
            kept = [hit for hit in found if not block_only(hit["path"])]
            if len(kept) >= req.limit or len(found) < limit or limit >= _CREW_WIDEST:
                return kept[: req.limit], degraded
            limit = min(limit * 4, _CREW_WIDEST)

    async def _ranked(
        self, scope: str, tier: Tier, req: SearchRequest, plan: BoostPlan | None, limit: int
    ) -> tuple[list[dict[str, Any]], list[str]]:
        try:
            if self.hybrid is not None and not req.raw_fts:
                return await self.hybrid.search(tier, req.query, limit, req.explain, plan)
            hits = await tier.search(req.query, wanted(plan, limit), req.raw_fts)
        except SidecarError:
            raise
        except Exception as exc:
            log.exception("search.failed", tier=scope)
            raise SearchFailed(f"{scope} search failed: {type(exc).__name__}") from exc
        found = []
        for hit, lifted in pick(plan, hits, lambda h: candidate_of(h, round(h.score, 6)), limit):
            result = hit.as_json(scope)
            mark(result, lifted, req.explain)
            found.append(result)
        return found, []

    async def _boost_plan(self, scope: str, query: str) -> BoostPlan | None:
        """The lift for this query's entities; None without one (a failing graph leaves search as it is)."""
        if self.boost is None:
            return None
        try:
            return await self.boost.plan(scope, query)
        except Exception:
            log.exception("search.boost_failed", tier=scope)
            return None

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
    """The tiers' hits merged by score (every tier scores on the same scale: the hybrid's fused
    score, or BM25's), the agent's first on a tie; a hit whose text an earlier tier's hit already
    shows is left out, so the agent's own copy wins over the crew's."""
    merged: list[tuple[int, int, dict[str, Any]]] = []
    for order, leg in enumerate(legs):
        merged += [(order, rank, hit) for rank, hit in enumerate(leg)]
    merged.sort(key=lambda item: (-item[2]["score"], item[0], item[1]))
    seen: dict[str, str] = {}
    out = []
    for _, _, hit in merged:
        text = " ".join(hit["snippet"].split())
        if seen.setdefault(text, hit["source"]) != hit["source"]:
            continue
        out.append(hit)
        if len(out) == limit:
            break
    return out


def _answer(
    req: SearchRequest, results: list[dict[str, Any]], degraded: list[str], started: float, fell_back: bool = False
) -> dict[str, Any]:
    if req.highlight == "markdown":
        results = [_marked(hit) for hit in results]
    out: dict[str, Any] = {"results": results, "scope": req.scope}
    if fell_back:
        out["fell_back"] = "crew"
    if degraded:
        out["degraded"] = degraded
    out["took_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return out


def _marked(hit: dict[str, Any]) -> dict[str, Any]:
    """The hit with its matched terms wrapped in ``**`` in the snippet (and the offsets moved)."""
    shown = mark_markdown(Snippet(hit["snippet"], [(a, b) for a, b in hit.get("highlights", [])]))
    return {**hit, "snippet": shown.text, "highlights": [[a, b] for a, b in shown.highlights]}
