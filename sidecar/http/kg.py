"""The knowledge graph over HTTP: ``POST /kg/add``, ``/kg/query``, ``/kg/invalidate``,
``/kg/timeline``, ``/kg/traverse``, ``/kg/tunnels`` and ``GET /kg/stats``, over ``sidecar.ops.kg``
(which the MCP tools call too, so the answers cannot drift apart)."""

from __future__ import annotations

from aiohttp import web

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.kg.requests import KgRequest
from sidecar.ops.kg import run

__all__ = ["routes"]

routes = web.RouteTableDef()


async def _answer(request: web.Request, operation: str, status: int = 200) -> web.Response:
    req = KgRequest.from_json(operation, await read_json_object(request))
    return json_answer(await run(request.app[SIDECAR], req), status=status)


@routes.post("/kg/add")
async def kg_add(request: web.Request) -> web.Response:
    return await _answer(request, "add", 201)


@routes.post("/kg/query")
async def kg_query(request: web.Request) -> web.Response:
    return await _answer(request, "query")


@routes.post("/kg/invalidate")
async def kg_invalidate(request: web.Request) -> web.Response:
    return await _answer(request, "invalidate")


@routes.post("/kg/timeline")
async def kg_timeline(request: web.Request) -> web.Response:
    return await _answer(request, "timeline")


@routes.post("/kg/traverse")
async def kg_traverse(request: web.Request) -> web.Response:
    return await _answer(request, "traverse")


@routes.post("/kg/tunnels")
async def kg_tunnels(request: web.Request) -> web.Response:
    return await _answer(request, "tunnels")


@routes.get("/kg/stats")
async def kg_stats(request: web.Request) -> web.Response:
    return json_answer(await run(request.app[SIDECAR], KgRequest.from_json("stats", dict(request.query))))
