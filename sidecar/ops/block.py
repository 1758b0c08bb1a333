"""The memory block an orchestrator puts into the agent's system prompt (``POST /memory/block``, the
MCP prompt and the memory browser's block view).

The block is built from the files (recall does not depend on the index); with a ``query`` the
chunks are picked in the order this sidecar's own search ranks them. The rankings are fetched
first, on the loop, and the block is then assembled in a thread: reading and scanning the files
is blocking work.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import cast

import structlog

from sidecar.contract import MAX_LIMIT, TOKEN, BlockAnswer, BlockRequest, LayerPart, SearchRequest
from sidecar.episodic.render import freshness_weight
from sidecar.errors import BadRequest, SidecarError
from sidecar.ops.kg import block_facts
from sidecar.ops.sidecar import Sidecar
from sidecar.retrieval.search import SearchService

__all__ = ["ESSENTIALS_SHARE_PERCENT", "RECALL_SHARE_PERCENT", "block"]

log = structlog.get_logger("sidecar.block")
#: The most of the block's budget recalled memories may take.
RECALL_SHARE_PERCENT = 25
#: The most of the budget the journal's essentials (L1) may take, and how many memories L1 ranks.
ESSENTIALS_SHARE_PERCENT = 15
ESSENTIALS_CANDIDATES = 500


async def block(sc: Sidecar, req: BlockRequest) -> BlockAnswer:
    """The memory block for a request: what ``POST /memory/block`` answers, and what the MCP prompt
    and the memory browser show. Empty with memory off."""
    settings = sc.settings
    if not settings.memory_enabled:  # memory: false: the block injects nothing
        off: BlockAnswer = {"text": "", "used": 0, "budget": req.budget, "omitted": [], "blocked": []}
        return {**off, "layers": [], "match_count": 0, "top_score": None}
    from sidecar.palace.relevance import is_trivial

    if req.query is not None and is_trivial(req.query):  # "ok", "thanks": nothing to recall
        req = dataclasses.replace(req, query=None, layers=tuple(x for x in req.layers if x != "L3"))
    crew_dir = settings.crew_dir if settings.has_crew else None
    recall = "L3" in req.layers
    rankings = await _rankings(sc.search, req.query if recall else None, crew=crew_dir is not None)
    recalled, recalled_ids, recalled_best = await _recalled(sc, req) if recall else ("", [], None)
    essentials, essential_count = await _essentials(sc, req)
    nudges = [*req.nudges, *await _journal_nudges(sc, req)]
    # The block's modules (the assembler and the injection scanner, which compiles its rules on
    # import) load on the first request for a block, not at start-up.
    from sidecar.prompt.block import build_memory_block
    from sidecar.scanner.in_process import semantic_layer

    # The in-process model's semantic layer judges the sections the rules leave clean (flag only,
    # each section's answer kept); built once, in a thread: it embeds its prototype intents.
    semantic = await asyncio.to_thread(semantic_layer, sc.embedder)
    build = functools.partial(
        build_memory_block,
        agent_dir=settings.memory_dir,
        crew_dir=crew_dir,
        role=req.role,
        user_id=req.user_id,
        # The operator model a lead's consolidation writes is keyed on --workspace-id: a request
        # that names no workspace means that one, as for its journal memories.
        workspace_id=req.workspace_id or settings.workspace_id,
        budget=req.budget,
        query=req.query,
        search=(lambda scope, _query: rankings.get(scope, [])) if rankings else None,
        peer_context=req.peer_context,
        nudges=nudges,
        recalled=recalled,
        layers=req.layers,
        room=req.room,
        spotlight=req.spotlight,
        semantic=semantic,
        threshold=settings.inject_threshold,
        essentials=essentials,
        essentials_count=essential_count,
        # the knowledge graph's, for the query's entities: recall (L3), like the ranked chunks
        facts=await block_facts(sc, req.query if recall else None, _journal_owner(sc, req).get("workspace_id")),
    )
    try:
        block = await asyncio.to_thread(build)
    except ValueError as exc:  # the budget leaves no room once peer context and nudges are placed
        raise BadRequest(str(exc), code="budget_too_small") from None
    answer: BlockAnswer = {
        "text": block.text,
        "used": block.used,
        "budget": block.budget,
        "omitted": block.omitted,
        "blocked": [
            {
                "label": b.label,
                "category": b.category,
                "pattern": b.pattern,
                "level": "flag" if b.level == "flag" else "block",
                "line_start": b.line_start,
                "line_end": b.line_end,
            }
            for b in block.blocked
        ],
        "layers": [cast(LayerPart, part.to_json()) for part in block.layers],
        # Recalled journal memories count as matches too, and top_score is one measure over both:
        # the share of the query's content words a chunk or a recalled memory holds (``_recalled``).
        "match_count": block.match_count + len(recalled_ids),
        "top_score": max((s for s in (block.top_score, recalled_best) if s is not None), default=None),
    }
    if recalled:
        shown = sum(1 for i in recalled_ids if i in recalled)
        answer["layers"].append({"layer": "L3", "part": "recalled", "label": "journal", "chunks": shown})
    if req.recall:
        answer["recalled"] = recalled_ids if recalled else []
    return answer


def _journal_owner(sc: Sidecar, req: BlockRequest) -> dict[str, str]:
    """Whose journal the block recalls and nudges for: the request's agent and workspace (when the
    workspace is an id: the operator model's workspace may be any string), else the settings'."""
    body = {"agent_id": req.agent_id or sc.settings.agent_id}
    if req.workspace_id and TOKEN.match(req.workspace_id):
        body["workspace_id"] = req.workspace_id
    return body


async def _recalled(sc: Sidecar, req: BlockRequest) -> tuple[str, list[str], float | None]:
    """With ``recall`` and a query: the recalled memories, freshest and strongest first, fenced as
    untrusted hints within RECALL_SHARE_PERCENT of the budget (their text, the ids shown and the
    best relevance among them: the share of the query's content words a memory holds, the measure
    the block's chunks are scored by, not the recall's own score, a cosine or a rank fusion score);
    hits the injection scanner would block are left out. Recall failing leaves the block without
    them, never without memory."""
    if not req.recall or req.query is None:
        return "", [], None
    from sidecar.ops.memories import recall, recall_request
    from sidecar.prompt.recalled import RecalledHit, render_recalled
    from sidecar.scanner.scan import scan

    try:
        asked = recall_request(sc.settings, {"query": req.query, "k": req.recall_k, **_journal_owner(sc, req)})
        found = await recall(sc, asked)
    except SidecarError as exc:
        log.warning("memory_block.recall_failed", error=exc.code)
        return "", [], None
    hits = [h for h in found["hits"] if scan(h["content"]) is None]
    weighted = sorted(hits, key=lambda h: -float(h["score"]) * freshness_weight(float(h["age_seconds"])))
    shown = [
        RecalledHit(
            text=h["content"],
            source=f"{h['source']} {h['memory_type'] or h['entry_type']}" + (f" {h['id']}" if h.get("id") else ""),
            age_seconds=float(h["age_seconds"]),
            score=float(h["score"]) * freshness_weight(float(h["age_seconds"])),
        )
        for h in weighted
    ]
    text = render_recalled(shown, req.budget * RECALL_SHARE_PERCENT // 100)
    from sidecar.palace.relevance import Relevance

    ids = [h["id"] for h in weighted if h["id"] in text]
    said = [h["content"] for h in weighted if h["id"] in ids]
    relevance = Relevance(req.query, said)
    return text, ids, max((relevance.score(content) for content in said), default=None)


async def _essentials(sc: Sidecar, req: BlockRequest) -> tuple[str, int]:
    """L1's journal part: the typed memories of the highest importance x recency (the scanner
    keeps out any it would block), rendered within ESSENTIALS_SHARE_PERCENT of the budget."""
    store = sc.journal
    if "L1" not in req.layers:
        return "", 0
    from sidecar.palace.layers import ESSENTIALS_MAX_CHARS, Essential, rank_essentials, render_essentials
    from sidecar.scanner.scan import scan

    settings = sc.settings
    owner = _journal_owner(sc, req)
    workspace = owner.get("workspace_id", settings.workspace_id)
    crew = settings.crew_id if settings.has_crew else None
    try:  # the agent's own memories and its crew's, in this sidecar's namespace: never another agent's
        entries = await store.memories(
            workspace, settings.namespace, ESSENTIALS_CANDIDATES, agent_id=owner["agent_id"], crew_id=crew
        )
    except Exception as exc:  # the block never fails for the journal
        log.warning("memory_block.essentials_failed", error=type(exc).__name__)
        return "", 0
    found = [
        Essential(e.id, e.memory_type or "memory", e.summary, e.base_importance, e.ts)
        for e in entries
        if e.status == "live" and scan(e.summary) is None
    ]
    ranked = rank_essentials(found, datetime.now(UTC))
    limit = min(ESSENTIALS_MAX_CHARS, req.budget * ESSENTIALS_SHARE_PERCENT // 100)
    return render_essentials(ranked, limit)


async def _journal_nudges(sc: Sidecar, req: BlockRequest) -> list[str]:
    """With a session id: the journal's nudges due for this agent, each once per session."""
    if req.session_id is None:
        return []
    owner = _journal_owner(sc, req)
    workspace = owner.get("workspace_id", sc.settings.workspace_id)
    return await sc.nudger.nudges(workspace, owner["agent_id"], req.session_id)


async def _rankings(search: SearchService, query: str | None, *, crew: bool) -> dict[str, Sequence[tuple[str, int]]]:
    """Scope -> (path, line_start) in rank order; a scope whose search fails keeps file order."""
    if query is None:
        return {}
    out: dict[str, Sequence[tuple[str, int]]] = {}
    for scope in ("agent", "crew") if crew else ("agent",):
        try:
            found = await search.search(SearchRequest(query, MAX_LIMIT, scope))
        except Exception as exc:  # recall must not depend on the index: this scope keeps file order
            code = exc.code if isinstance(exc, SidecarError) else type(exc).__name__
            log.warning("memory_block.search_failed", scope=scope, error=code)
            continue
        out[scope] = [(hit["path"], int(hit["line_start"])) for hit in found["results"]]
    return out
