"""``GET /openapi.json``: the OpenAPI document of ``sidecar.http.openapi``."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

__all__ = ["HANDLERS"]


async def openapi_json(request: web.Request) -> web.Response:
    # Imported here: the document (and the schemas it gathers) is about 1 MB that only this route reads.
    from sidecar.http.openapi import DOCUMENT

    return web.json_response(DOCUMENT)


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "openapi": openapi_json,
}
