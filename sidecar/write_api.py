"""Write and read routes: ``POST /memory/write`` (201 once durable) and ``GET /memory/read``."""

from __future__ import annotations

from aiohttp import web

from sidecar.appkeys import WRITES
from sidecar.durable import read_file
from sidecar.edge import read_json_object
from sidecar.errors import BadRequest, NotFound
from sidecar.paths import check_rel_path
from sidecar.writes import TIERS, WriteRequest

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.post("/memory/write")
async def write(request: web.Request) -> web.Response:
    req = WriteRequest.from_json(await read_json_object(request))
    body = await request.app[WRITES].write(req)
    return web.json_response(body, status=201)


@routes.get("/memory/read")
async def read(request: web.Request) -> web.Response:
    tier = request.query.get("tier", "agent")
    if tier not in TIERS:
        raise BadRequest("tier must be agent or crew", code="invalid_tier")
    if "path" not in request.query:
        raise BadRequest("missing parameter: path", code="invalid_path")
    rel = check_rel_path(request.query["path"])
    data = read_file(request.app[WRITES].read_root(tier), rel)
    if data is None:
        raise NotFound(f"no memory file {rel!r} in the {tier} tier", code="no_such_file")
    text = data.decode("utf-8", errors="replace")
    return web.json_response({"tier": tier, "path": rel, "bytes": len(data), "content": text})
