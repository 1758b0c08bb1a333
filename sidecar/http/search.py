"""``POST /memory/search``: the agent's search route (the answer is built in sidecar.retrieval.answer)."""

from __future__ import annotations

from aiohttp import web

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.retrieval.answer import search_memory

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/memory/search")
async def search(request: web.Request) -> web.Response:
    return json_answer(await search_memory(request.app, await read_json_object(request)))
