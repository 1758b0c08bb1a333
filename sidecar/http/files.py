"""Write and read routes: ``POST /memory/write`` (201 once durable) and ``GET /memory/read``."""

from __future__ import annotations

from aiohttp import web

from sidecar.contract import WriteRequest
from sidecar.http.jsonio import read_json_object
from sidecar.keys import WRITES
from sidecar.write.reader import read_memory

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/memory/write")
async def write(request: web.Request) -> web.Response:
    req = WriteRequest.from_json(await read_json_object(request))
    body = await request.app[WRITES].write(req)
    return web.json_response(body, status=201)


@routes.get("/memory/read")
async def read(request: web.Request) -> web.Response:
    body = await read_memory(
        request.app, {"tier": request.query.get("tier", "agent"), "path": request.query.get("path")}
    )
    return web.json_response(body)
