"""The palace routes over ``sidecar.ops.palace``: the taxonomy of memory (``/memory/list``,
``/memory/taxonomy``), deletes (``/memory/delete``), the identity (``/memory/identity``), the
diary (``/memory/diary``), the ingest of conversation turns (``/memory/ingest``) and the
per-agent settings file (``/memory/agent-settings``). The MCP tools call the same operations, so
the two answers cannot drift apart."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.contract import (
    DeleteRequest,
    DiaryReadRequest,
    DiaryWriteRequest,
    IdentityRequest,
    IngestRequest,
    ListRequest,
    TaxonomyRequest,
)
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import palace

__all__ = ["HANDLERS"]


async def _list(request: web.Request) -> web.Response:
    return json_answer(await palace.listed(request.app[SIDECAR], ListRequest.from_json(dict(request.query))))


async def _taxonomy(request: web.Request) -> web.Response:
    return json_answer(await palace.taxonomy_of(request.app[SIDECAR], TaxonomyRequest.from_json(dict(request.query))))


async def _delete(request: web.Request) -> web.Response:
    return json_answer(
        await palace.delete(request.app[SIDECAR], DeleteRequest.from_json(await read_json_object(request)))
    )


async def _identity(request: web.Request) -> web.Response:
    return json_answer(
        await palace.set_identity(request.app[SIDECAR], IdentityRequest.from_json(await read_json_object(request)))
    )


async def _diary_write(request: web.Request) -> web.Response:
    return json_answer(
        await palace.diary_write(request.app[SIDECAR], DiaryWriteRequest.from_json(await read_json_object(request))),
        status=201,
    )


async def _diary_read(request: web.Request) -> web.Response:
    return json_answer(await palace.diary_read(request.app[SIDECAR], DiaryReadRequest.from_json(dict(request.query))))


async def _ingest(request: web.Request) -> web.Response:
    return json_answer(
        await palace.ingest(request.app[SIDECAR], IngestRequest.from_json(await read_json_object(request)))
    )


async def _agent_settings(request: web.Request) -> web.Response:
    return json_answer(palace.agent_settings(request.app[SIDECAR]))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "list": _list,
    "taxonomy": _taxonomy,
    "delete": _delete,
    "identity": _identity,
    "diary_write": _diary_write,
    "diary_read": _diary_read,
    "ingest": _ingest,
    "agent_settings": _agent_settings,
}
