"""The knowledge graph over HTTP: ``POST /kg/add``, ``/kg/query``, ``/kg/invalidate``,
``/kg/timeline``, ``/kg/traverse``, ``/kg/tunnels`` and ``GET /kg/stats``, over ``sidecar.ops.kg``
(which the MCP tools call too, so the answers cannot drift apart)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.kg.requests import KgRequest
from sidecar.ops.kg import run

__all__ = ["HANDLERS"]


async def _answer(request: web.Request, operation: str, status: int = 200) -> web.Response:
    req = KgRequest.from_json(operation, await read_json_object(request))
    return json_answer(await run(request.app[SIDECAR], req), status=status)


async def kg_add(request: web.Request) -> web.Response:
    return await _answer(request, "add", 201)


async def kg_query(request: web.Request) -> web.Response:
    return await _answer(request, "query")


async def kg_invalidate(request: web.Request) -> web.Response:
    return await _answer(request, "invalidate")


async def kg_timeline(request: web.Request) -> web.Response:
    return await _answer(request, "timeline")


async def kg_traverse(request: web.Request) -> web.Response:
    return await _answer(request, "traverse")


async def kg_tunnels(request: web.Request) -> web.Response:
    return await _answer(request, "tunnels")


async def kg_stats(request: web.Request) -> web.Response:
    return json_answer(await run(request.app[SIDECAR], KgRequest.from_json("stats", dict(request.query))))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "kg_add": kg_add,
    "kg_query": kg_query,
    "kg_invalidate": kg_invalidate,
    "kg_timeline": kg_timeline,
    "kg_traverse": kg_traverse,
    "kg_tunnels": kg_tunnels,
    "kg_stats": kg_stats,
}
