"""``GET /openapi.json``: the OpenAPI document of ``sidecar.http.openapi``."""

from __future__ import annotations

from aiohttp import web

__all__ = ["routes"]

routes = web.RouteTableDef()


@routes.get("/openapi.json")
async def openapi_json(request: web.Request) -> web.Response:
    # Imported here: the document (and the schemas it gathers) is about 1 MB that only this route reads.
    from sidecar.http.openapi import DOCUMENT

    return web.json_response(DOCUMENT)
