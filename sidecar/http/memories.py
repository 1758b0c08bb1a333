"""Typed memories over HTTP: ``POST /memory/remember``, ``/memory/recall``, ``/memory/feedback``,
``/memory/restore``, ``/memory/forget`` and ``GET /memory/memories``, over ``sidecar.ops.memories``
(which the MCP tools and the lead's crew listener call too, so the answers cannot drift apart)."""

from __future__ import annotations

from aiohttp import web

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import memories

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/memory/remember")
async def _remember(request: web.Request) -> web.Response:
    return json_answer(await memories.remember(request.app[SIDECAR], await read_json_object(request)), status=201)


@routes.post("/memory/recall")
async def _recall(request: web.Request) -> web.Response:
    return json_answer(await memories.recall(request.app[SIDECAR], await read_json_object(request)))


@routes.post("/memory/feedback")
async def _feedback(request: web.Request) -> web.Response:
    return json_answer(await memories.feedback(request.app[SIDECAR], await read_json_object(request)))


@routes.post("/memory/restore")
async def _restore(request: web.Request) -> web.Response:
    return json_answer(await memories.restore(request.app[SIDECAR], await read_json_object(request)))


@routes.post("/memory/forget")
async def _forget(request: web.Request) -> web.Response:
    return json_answer(await memories.forget(request.app[SIDECAR], await read_json_object(request)))


@routes.get("/memory/memories")
async def _memories(request: web.Request) -> web.Response:
    return json_answer(await memories.listed(request.app[SIDECAR], dict(request.query)))
