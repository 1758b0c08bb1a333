"""How the sidecar's HTTP servers take connections, under the application (``SidecarRunner``):

- A client that shuts its sending side once its request is out (a half-close) still gets the
  answer. asyncio closes a connection at end of input unless its protocol asks to keep it, and
  aiohttp's does not ask: such a client lost the answer to a write that was durable all the
  same. Here the connection stays open for writing until the request in hand is answered, and
  closes after.
- A request aiohttp's own parser refuses (a bad request line or header, a ``Content-Encoding``
  it cannot decode) is answered in the one error shape, as every other error is; an unsupported
  content coding is a 415 ``unsupported_encoding``.
- ``max_connections``: past that many open connections, a new one is answered 503
  ``too_many_connections`` and closed at once (the crew listener, which faces the network).
"""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import structlog
from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from sidecar.http.errors import error_for_status, error_response

__all__ = ["SidecarRunner", "client_done"]

log = structlog.get_logger("sidecar.http.connections")


def _busy_response(limit: int) -> bytes:
    body = orjson.dumps(
        {"error": {"code": "too_many_connections", "message": f"over {limit} open connections; retry shortly"}}
    )
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def client_done(request: web.Request) -> bool:
    """Whether the client of ``request`` has closed its side of the connection (or the whole
    connection): long work it asked for may stop, nobody will read more than its answer."""
    transport = request.transport
    if transport is None or transport.is_closing():
        return True
    return isinstance(request.protocol, _Handler) and request.protocol.input_ended


class _Handler(RequestHandler):
    """aiohttp's connection protocol, answering half-closed clients and parser errors as above."""

    __slots__ = ("input_ended",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.input_ended = False

    def eof_received(self) -> bool:  # type: ignore[override]  # asyncio's protocol returns bool | None
        self.input_ended = True
        # A request is in hand when one is queued, or when the connection has had one and is not
        # waiting for the next (the waiter exists only between requests).
        if self._messages or (self._request_count > 0 and self._waiter is None):
            self.close()  # no further requests: close once the answer is out
            return True  # keep the connection open for writing that answer
        return False  # idle: nothing to answer, let it close

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        super().handle_error(request, status, exc, message)  # logs it; raises if an answer was begun
        if isinstance(exc, ContentEncodingError):  # from the headers: no decoder for that coding
            response = error_response(
                415,
                "unsupported_encoding",
                "this Content-Encoding is not supported; send the body as is, or gzip or deflate compressed",
            )
            response.headers["Accept-Encoding"] = "gzip, deflate"
        elif status >= 500:
            response = error_response(500, "internal_error", "internal error; see the sidecar log")
        else:
            response = error_for_status(status, message or "the request could not be parsed")
        response.force_close()
        return response


class _Server(web.Server):
    """aiohttp's server, making ``_Handler`` connections, at most ``max_connections`` at a time."""

    def __init__(self, made: web.Server, max_connections: int | None) -> None:
        # The same handler, request factory and settings aiohttp's runner gave ``made``.
        super().__init__(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
        self.max_connections = max_connections
        self.refused = 0

    def __call__(self) -> RequestHandler:
        return _Handler(self, loop=self._loop, **self._kwargs)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        limit = self.max_connections
        if limit is not None and len(self._connections) >= limit:
            self.refused += 1
            if self.refused == 1 or self.refused % 100 == 0:
                log.warning("http.connections_refused", limit=limit, refused=self.refused)
            transport.write(_busy_response(limit))
            handler.force_close()  # the handler never registers: it is closed before it reads
            return
        super().connection_made(handler, transport)


class SidecarRunner(web.AppRunner):
    """``web.AppRunner`` whose server answers half-closed clients, refuses what aiohttp's parser
    cannot read in the one error shape, and keeps at most ``max_connections`` connections."""

    def __init__(self, app: web.Application, *, max_connections: int | None = None, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.max_connections = max_connections

    async def _make_server(self) -> web.Server:
        return _Server(await super()._make_server(), self.max_connections)
