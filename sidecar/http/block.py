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
from dataclasses import dataclass
from typing import Any

import structlog
from aiohttp import web

from sidecar.errors import BadRequest, Forbidden, SidecarError
from sidecar.http.jsonio import read_json_object
from sidecar.keys import SEARCH, SETTINGS
from sidecar.retrieval.search import MAX_LIMIT, SearchRequest, SearchService
from sidecar.settings import ROLES, Settings

__all__ = ["MAX_BUDGET", "BlockRequest", "routes"]

log = structlog.get_logger("sidecar.block")
routes = web.RouteTableDef()
MAX_BUDGET = 200_000


@dataclass(frozen=True, slots=True)
class BlockRequest:
    role: str
    budget: int
    nudges: list[str]
    user_id: str | None = None
    workspace_id: str | None = None
    peer_context: str | None = None
    query: str | None = None

    @classmethod
    def from_json(cls, body: dict[str, Any], settings: Settings) -> BlockRequest:
        """Validate an orchestrator's body; every problem is a 400 naming the field."""
        role = body.get("role", settings.role)
        if role not in ROLES:
            raise BadRequest(f"role must be one of {', '.join(ROLES)}", code="invalid_role")
        budget = body.get("budget", settings.prompt_budget)
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
            raise BadRequest(f"budget must be an integer from 1 to {MAX_BUDGET}", code="invalid_budget")
        nudges = body.get("nudges", [])
        if not isinstance(nudges, list) or not all(isinstance(n, str) for n in nudges):
            raise BadRequest("nudges must be a list of strings", code="invalid_nudges")
        query = _optional_str(body, "query")
        query = query if query is not None and query.strip() else None  # blank: no ranking, file order
        if query is not None:
            SearchRequest.from_json({"query": query})  # the same query rules as /memory/search
        return cls(
            role,
            budget,
            nudges,
            user_id=_optional_id(body, "user_id"),
            workspace_id=_optional_id(body, "workspace_id"),
            peer_context=_optional_str(body, "peer_context"),
            query=query,
        )


def _optional_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"{name} must be a string", code=f"invalid_{name}")
    return value


def _optional_id(body: dict[str, Any], name: str) -> str | None:
    from sidecar.prompt.block import USER_SLUG_SEPARATOR  # see memory_block: loaded on the first block request

    value = _optional_str(body, name)
    if value is not None and USER_SLUG_SEPARATOR in value:
        raise BadRequest(f"{name} must not contain U+001F", code=f"invalid_{name}")
    return value


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
    return web.json_response(
        {
            "text": block.text,
            "used": block.used,
            "budget": block.budget,
            "omitted": block.omitted,
            "blocked": [{"label": b.label, "category": b.category, "pattern": b.pattern} for b in block.blocked],
        }
    )


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
