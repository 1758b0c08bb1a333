"""``POST /memory/block``: the memory block an orchestrator puts into the agent's system prompt,
over ``sidecar.ops.block`` (which the MCP prompt and the memory browser call too)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.contract import BlockRequest
from sidecar.errors import Forbidden
from sidecar.http.jsonio import read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops.block import block

__all__ = ["HANDLERS"]


async def memory_block(request: web.Request) -> web.Response:
    if "Origin" in request.headers:  # the block is the agent's memory: no browser may read it (DNS rebinding)
        raise Forbidden("requests from a browser origin are refused", code="origin_refused")
    sc = request.app[SIDECAR]
    return web.json_response(await block(sc, BlockRequest.from_json(await read_json_object(request), sc.settings)))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "block": memory_block,
}
