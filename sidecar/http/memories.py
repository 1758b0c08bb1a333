"""Typed memories over HTTP: ``POST /memory/remember``, ``/memory/recall``, ``/memory/feedback``,
``/memory/restore``, ``/memory/forget`` and ``GET /memory/memories``, over ``sidecar.ops.memories``
(which the MCP tools and the lead's crew listener call too, so the answers cannot drift apart)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import memories

__all__ = ["HANDLERS"]


async def _remember(request: web.Request) -> web.Response:
    sc, body = request.app[SIDECAR], await read_json_object(request)
    answer = await memories.remember(sc, memories.remember_request(sc.settings, body), body)
    return json_answer(answer, status=201)


async def _recall(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    return json_answer(await memories.recall(sc, memories.recall_request(sc.settings, await read_json_object(request))))


async def _feedback(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    return json_answer(
        await memories.feedback(sc, memories.feedback_request(sc.settings, await read_json_object(request)))
    )


async def _restore(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    return json_answer(
        await memories.restore(sc, memories.restore_request(sc.settings, await read_json_object(request)))
    )


async def _forget(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    return json_answer(await memories.forget(sc, memories.forget_request(sc.settings, await read_json_object(request))))


async def _memories(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    return json_answer(await memories.listed(sc, memories.MemoriesRequest.from_query(sc.settings, request.query)))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "remember": _remember,
    "recall": _recall,
    "feedback": _feedback,
    "restore": _restore,
    "forget": _forget,
    "memories": _memories,
}
