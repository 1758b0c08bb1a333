"""Write and read routes: ``POST /memory/write`` (201 once durable) and ``GET /memory/read``, over
``sidecar.ops.files``.

A write may carry an ``Idempotency-Key`` header: a retry with the same key writes nothing and
answers the first write's answer again, marked ``Idempotent-Replayed: true``
(``sidecar.write.idempotency``)."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.contract import ReadRequest, WriteRequest
from sidecar.http.jsonio import read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import files

__all__ = ["HANDLERS", "IDEMPOTENCY_KEY", "REPLAYED"]

IDEMPOTENCY_KEY = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"


async def write(request: web.Request) -> web.Response:
    req = WriteRequest.from_json(await read_json_object(request))
    body, replayed = await files.write(request.app[SIDECAR], req, request.headers.get(IDEMPOTENCY_KEY))
    status = 200 if "duplicate_of" in body else 201  # 200: memory already held it, nothing written
    return web.json_response(body, status=status, headers={REPLAYED: "true"} if replayed else None)


async def read(request: web.Request) -> web.Response:
    fields = ("tier", "path", "line_start", "line_end")
    query = {name: request.query[name] for name in fields if name in request.query}
    return web.json_response(await files.read(request.app[SIDECAR], ReadRequest.from_json(query)))


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "write": write,
    "read": read,
}
