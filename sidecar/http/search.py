"""``POST /memory/search``: the agent's search route over the search operation (``sidecar.ops.search``),
which the MCP tool and the memory browser call too."""

from __future__ import annotations

from aiohttp import web

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops.search import search_json

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/memory/search")
async def search_route(request: web.Request) -> web.Response:
    return json_answer(await search_json(request.app[SIDECAR], await read_json_object(request)))
