"""The index routes over ``sidecar.ops.status``: ``GET /healthz``, ``GET /memory/status`` and
``POST /memory/reindex`` (which stops when its client closes the connection)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.errors import BadRequest
from sidecar.http.connections import client_done
from sidecar.http.state import SIDECAR
from sidecar.ops import status as ops

__all__ = ["HANDLERS"]


def _scope_param(request: web.Request) -> str:
    scope = request.query.get("scope", "agent")
    if scope not in ("agent", "crew"):
        raise BadRequest("scope must be agent or crew", code="invalid_scope")
    return scope


async def healthz(request: web.Request) -> web.Response:
    return web.json_response(ops.healthz(request.app[SIDECAR]))


async def status(request: web.Request) -> web.Response:
    return web.json_response(await ops.status(request.app[SIDECAR], _scope_param(request)))


async def reindex(request: web.Request) -> web.Response:
    scope = _scope_param(request)
    return web.json_response(await ops.reindex(request.app[SIDECAR], scope, lambda: client_done(request)))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "healthz": healthz,
    "status": status,
    "reindex": reindex,
}
