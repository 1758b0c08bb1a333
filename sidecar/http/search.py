"""``POST /memory/search``: the agent's search route over the search operation (``sidecar.ops.search``),
which the MCP tool and the memory browser call too."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.contract import SearchRequest
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops.search import search

__all__ = ["HANDLERS"]


async def search_route(request: web.Request) -> web.Response:
    req = SearchRequest.from_json(await read_json_object(request))
    return json_answer(await search(request.app[SIDECAR], req))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "search": search_route,
}
