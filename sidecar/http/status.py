"""The index routes over ``sidecar.ops.status``: ``GET /healthz``, ``GET /memory/status`` and
``POST /memory/reindex`` (which stops when its client closes the connection)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.http.connections import client_done
from sidecar.http.state import SIDECAR
from sidecar.ops import status as ops

__all__ = ["HANDLERS"]


async def healthz(request: web.Request) -> web.Response:
    return web.json_response(ops.healthz(request.app[SIDECAR]))


async def status(request: web.Request) -> web.Response:
    return web.json_response(await ops.status(request.app[SIDECAR], ops.StatusRequest.from_query(request.query)))


async def reindex(request: web.Request) -> web.Response:
    req = ops.StatusRequest.from_query(request.query)
    return web.json_response(await ops.reindex(request.app[SIDECAR], req, lambda: client_done(request)))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "healthz": healthz,
    "status": status,
    "reindex": reindex,
}
