"""The registry's rules on every HTTP route, in one middleware (``sidecar.ops.registry``).

With ``--api-token`` (required to serve beyond loopback), every request but ``/healthz`` must
carry it as ``Authorization: Bearer <token>`` first: 401 otherwise.

The route a request matched names its operation; before the route runs, memory off refuses an
operation on memory (403 ``memory_disabled``), a field the operation does not take, in the
query string or the JSON body, is 400 ``unknown_field``, and a value no store keeps (NUL, a lone
surrogate, an integer over 64 bits) is 400 naming its field. The body read here is kept on the request,
so the route reads it without parsing it twice.
"""

from __future__ import annotations

import hmac

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.http.errors import error_response
from sidecar.http.jsonio import read_json_object
from sidecar.http.state import SETTINGS
from sidecar.ops.registry import Operation, admit, check_values, find, refuse_unknown

__all__ = ["MEMORY_OFF", "bearer_token", "operation_of", "policy_middleware"]

#: Set on a request whose operation answers empty because memory is off (the block).
MEMORY_OFF: web.RequestKey[bool] = web.RequestKey("memory_off", bool)


def operation_of(request: web.Request) -> Operation | None:
    """The registry's operation for the route ``request`` matched (HEAD as its GET); None for a
    request no route matched (404, 405)."""
    resource = request.match_info.route.resource
    if resource is None:
        return None
    method = "GET" if request.method == "HEAD" else request.method
    return find(method, resource.canonical)


@web.middleware
async def policy_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[SETTINGS].api_token
    if token and request.path != "/healthz" and not _bearer_matches(request, token):
        response = error_response(401, "unauthorized", "missing or wrong API token (Authorization: Bearer ...)")
        response.headers["WWW-Authenticate"] = 'Bearer realm="memory-sidecar"'
        return response
    op = operation_of(request)
    if op is None:
        return await handler(request)
    if not admit(op, memory_enabled=request.app[SETTINGS].memory_enabled):
        request[MEMORY_OFF] = True
    if op.query is not None:
        refuse_unknown(request.query.keys(), op.query)
        check_values(request.query)
    if op.body is not None:
        body = await read_json_object(request)
        refuse_unknown(body.keys(), op.body)
        check_values(body)
    return await handler(request)


def _bearer_matches(request: web.Request, token: str) -> bool:
    """Whether the request carries ``Authorization: Bearer <token>``."""
    return hmac.compare_digest(bearer_token(request.headers.get("Authorization", "")), token.encode())


def bearer_token(header: str) -> bytes:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme in any case, as RFC
    9110 has it), or b"" when it is not one. The agent API and the crew listener both read it so."""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return b""
    return rest.strip().encode("utf-8", errors="surrogateescape")
