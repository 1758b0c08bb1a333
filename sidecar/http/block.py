"""``POST /memory/block``: the memory block an orchestrator puts into the agent's system prompt.

The block is built from the files (recall does not depend on the index); with a ``query`` the
chunks are picked in the order this sidecar's own search ranks them. The rankings are fetched
first, on the loop, and the block is then assembled in a thread: reading and scanning the files
is blocking work.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence

import structlog
from aiohttp import web

from sidecar.contract import MAX_BUDGET, MAX_LIMIT, TOKEN, BlockAnswer, BlockRequest, SearchRequest
from sidecar.episodic.lifecycle import JOURNAL, NUDGER
from sidecar.episodic.render import freshness_weight
from sidecar.errors import BadRequest, Forbidden, SidecarError
from sidecar.http.jsonio import read_json_object
from sidecar.keys import SEARCH, SETTINGS
from sidecar.retrieval.search import SearchService

__all__ = ["MAX_BUDGET", "BlockRequest", "routes"]

log = structlog.get_logger("sidecar.block")
#: The most of the block's budget recalled memories may take.
RECALL_SHARE_PERCENT = 25
routes = web.RouteTableDef()


@routes.post("/memory/block")
async def memory_block(request: web.Request) -> web.Response:
    if "Origin" in request.headers:  # the block is the agent's memory: no browser may read it (DNS rebinding)
        raise Forbidden("requests from a browser origin are refused", code="origin_refused")
    settings = request.app[SETTINGS]
    req = BlockRequest.from_json(await read_json_object(request), settings)
    crew_dir = settings.crew_dir if settings.has_crew else None
    rankings = await _rankings(request.app[SEARCH], req.query, crew=crew_dir is not None)
    recalled, recalled_ids = await _recalled(request.app, req)
    nudges = [*req.nudges, *await _journal_nudges(request.app, req)]
    # The block's modules (the assembler and the injection scanner, which compiles its rules on
    # import) load on the first request for a block, not at start-up.
    from sidecar.prompt.block import build_memory_block

    build = functools.partial(
        build_memory_block,
        agent_dir=settings.memory_dir,
        crew_dir=crew_dir,
        role=req.role,
        user_id=req.user_id,
        workspace_id=req.workspace_id,
        budget=req.budget,
        query=req.query,
        search=(lambda scope, _query: rankings.get(scope, [])) if rankings else None,
        peer_context=req.peer_context,
        nudges=nudges,
        recalled=recalled,
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
    }
    if req.recall:
        answer["recalled"] = recalled_ids if recalled else []
    return web.json_response(answer)


def _who(app: web.Application, req: BlockRequest) -> dict[str, str]:
    """Whose journal the block recalls and nudges for: the request's agent and workspace (when the
    workspace is an id: the operator model's workspace may be any string), else the settings'."""
    body = {"agent_id": req.agent_id or app[SETTINGS].agent_id}
    if req.workspace_id and TOKEN.match(req.workspace_id):
        body["workspace_id"] = req.workspace_id
    return body


async def _recalled(app: web.Application, req: BlockRequest) -> tuple[str, list[str]]:
    """With ``recall`` and a query: the recalled memories, freshest and strongest first, fenced as
    untrusted hints within RECALL_SHARE_PERCENT of the budget; hits the injection scanner would
    block are left out. Recall failing leaves the block without them, never without memory."""
    if not req.recall or req.query is None or JOURNAL not in app:
        return "", []
    from sidecar.http.memories import recall_op
    from sidecar.prompt.recalled import RecalledHit, render_recalled
    from sidecar.prompt.scan import scan

    try:
        found = await recall_op(app, {"query": req.query, "k": req.recall_k, **_who(app, req)})
    except SidecarError as exc:
        log.warning("memory_block.recall_failed", error=exc.code)
        return "", []
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
    return text, [h["id"] for h in weighted if h["id"] in text]


async def _journal_nudges(app: web.Application, req: BlockRequest) -> list[str]:
    """With a session id: the journal's nudges due for this agent, each once per session."""
    if req.session_id is None or NUDGER not in app:
        return []
    who = _who(app, req)
    workspace = who.get("workspace_id", app[SETTINGS].workspace_id)
    return await app[NUDGER].nudges(workspace, who["agent_id"], req.session_id)


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
