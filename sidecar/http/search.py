"""``POST /memory/search``: the agent's search route over the search operation (``sidecar.ops.search``),
and ``search_memory``, the same answer for the MCP tool and the memory browser."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from sidecar.contract import SearchAnswer, SearchRequest
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.keys import CREW_PROXY, QUEUE, SEARCH, SETTINGS
from sidecar.ops.search import SearchParts, search

__all__ = ["routes", "search_memory"]

routes = web.RouteTableDef()


@routes.post("/memory/search")
async def search_route(request: web.Request) -> web.Response:
    return json_answer(await search_memory(request.app, await read_json_object(request)))


async def search_memory(app: web.Application, body: dict[str, Any]) -> SearchAnswer:
    """Validate ``body`` and run the search operation on this app's parts."""
    return await search(_parts(app), SearchRequest.from_json(body))


def _parts(app: web.Application) -> SearchParts:
    proxy = app[CREW_PROXY]
    barrier = getattr(proxy, "wait_for_seq", None)  # only a member reading a server crew store has one
    return SearchParts(app[SETTINGS], app[QUEUE], app[SEARCH], barrier)
