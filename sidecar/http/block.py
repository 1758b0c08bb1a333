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

from sidecar.contract import MAX_BUDGET, MAX_LIMIT, BlockAnswer, BlockRequest, SearchRequest
from sidecar.errors import BadRequest, Forbidden, SidecarError
from sidecar.http.jsonio import read_json_object
from sidecar.keys import SEARCH, SETTINGS
from sidecar.retrieval.search import SearchService

__all__ = ["MAX_BUDGET", "BlockRequest", "routes"]

log = structlog.get_logger("sidecar.block")
routes = web.RouteTableDef()


@routes.post("/memory/block")
async def memory_block(request: web.Request) -> web.Response:
    if "Origin" in request.headers:  # the block is the agent's memory: no browser may read it (DNS rebinding)
        raise Forbidden("requests from a browser origin are refused", code="origin_refused")
    settings = request.app[SETTINGS]
    req = BlockRequest.from_json(await read_json_object(request), settings)
    crew_dir = settings.crew_dir if settings.has_crew else None
    rankings = await _rankings(request.app[SEARCH], req.query, crew=crew_dir is not None)
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
        nudges=req.nudges,
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
    return web.json_response(answer)


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
