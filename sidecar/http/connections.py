"""How the sidecar's HTTP servers take connections, under the application (``SidecarRunner``):

- A client that shuts its sending side once its request is out (a half-close) still gets the
  answer. asyncio closes a connection at end of input unless its protocol asks to keep it, and
  aiohttp's does not ask: such a client lost the answer to a write that was durable all the
  same. Here the connection stays open for writing until the request in hand is answered, and
  closes after. A client that shuts its side before the whole body of its request is out will
  never send the rest: the body's reader learns it at once (``BodyCut``), instead of waiting out
  the body deadline with the connection's slot held and shutdown held behind it.
- A request aiohttp's own parser refuses (a bad request line or header, a ``Content-Encoding``
  it cannot decode) is answered in the one error shape, as every other error is; an unsupported
  content coding is a 415 ``unsupported_encoding``.
- ``max_connections``: past that many open connections, a new one is answered 503
  ``too_many_connections`` and closed at once (both servers: the agent API's cap is the
  ``max_connections`` setting, the crew listener's its own).
- ``Trust``: a server facing the network keeps its slots for peers that prove who they are
  (``trusted``, called once a request's credentials check out). A connection not yet trusted
  has ``deadline`` seconds to be (to send a whole request, which its credentials then decide,
  however long the server takes to read it); at most ``per_peer`` of them per peer address and
  ``untrusted`` in all are kept, and past either bound an older such connection (that
  address's oldest; of all, the oldest of the address holding the most) is closed to make room
  for the new one. At the connection cap such a connection gives way too: a newcomer is refused
  only when every slot is trusted. Idle sockets from strangers thus never lock out a peer with the
  token: a new connection takes the place of a waiting stranger's, one address past its share
  only ever displaces its own, and a peer with a single connection waiting is displaced last.
"""

from __future__ import annotations

import asyncio
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

import orjson
import structlog
from aiohttp import web
from aiohttp.http_exceptions import ContentEncodingError
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from sidecar.http.errors import error_for_status, error_response

__all__ = ["BodyCut", "SidecarRunner", "Trust", "client_done", "trusted"]

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


@dataclass(frozen=True, slots=True)
class Trust:
    """How a server keeps its slots for peers that authenticate (see the module's text)."""

    untrusted: int  # connections not yet trusted, at most
    per_peer: int  # ... of them from one peer address, at most
    deadline: float  # seconds a connection has to become trusted


def trusted(request: web.Request) -> None:
    """Mark the connection of ``request`` trusted: its peer holds the credentials. It keeps its
    slot from now on (bounded by the connection cap and the keep-alive timeout alone)."""
    protocol = request.protocol
    if isinstance(protocol, _Handler) and isinstance(protocol._manager, _Server):
        protocol._manager.trust(protocol)


def client_done(request: web.Request) -> bool:
    """Whether the client of ``request`` has closed its side of the connection (or the whole
    connection): long work it asked for may stop, nobody will read more than its answer."""
    transport = request.transport
    if transport is None or transport.is_closing():
        return True
    return isinstance(request.protocol, _Handler) and request.protocol.input_ended


class BodyCut(web.RequestPayloadError):
    """The client closed its sending side before the whole body of its request arrived."""


class _Handler(RequestHandler):
    """aiohttp's connection protocol, answering half-closed clients and parser errors as above."""

    __slots__ = ("input_ended",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.input_ended = False

    async def start(self) -> None:
        if self._manager is None:  # closed before it began (refused at the cap): nothing to serve
            return
        await super().start()

    def eof_received(self) -> bool:  # type: ignore[override]  # asyncio's protocol returns bool | None
        self.input_ended = True
        # Nothing more can arrive: after an answer that left its body unread, aiohttp would linger
        # reading the rest, and the cut body's reader below raises there, outside every handler.
        self._lingering_time = 0.0
        # A body still short of its length (or its last chunk) will never be whole: its reader,
        # if one waits, learns it now (one that starts later sees ``client_done``).
        waiting = [payload for _, payload in self._messages]
        if self._current_request is not None:
            waiting.append(self._current_request.content)
        for payload in waiting:
            if not payload.is_eof():
                payload.set_exception(BodyCut("the client closed its side of the connection before the whole body"))
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
    """aiohttp's server, making ``_Handler`` connections, at most ``max_connections`` at a time,
    and keeping slots for trusted peers when given a ``Trust``."""

    def __init__(self, made: web.Server, max_connections: int | None, trust: Trust | None) -> None:
        # The same handler, request factory and settings aiohttp's runner gave ``made``.
        super().__init__(
            made.request_handler,
            request_factory=made.request_factory,
            handler_cancellation=made.handler_cancellation,
            loop=made._loop,
            **made._kwargs,
        )
        self.max_connections = max_connections
        self.trust_policy = trust
        self.refused = 0
        self.evicted = 0
        self._live: set[RequestHandler] = set()  # admitted and not closed by us (aiohttp's own set lags)
        # Connections not yet trusted, oldest first, with their peer address and deadline timer.
        self._untrusted: OrderedDict[RequestHandler, tuple[str, asyncio.TimerHandle]] = OrderedDict()

    def __call__(self) -> RequestHandler:
        return _Handler(self, loop=self._loop, **self._kwargs)

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        policy = self.trust_policy
        peer = _peer(transport)
        if policy is not None:
            mine = [h for h, (p, _) in self._untrusted.items() if p == peer]
            if len(mine) >= policy.per_peer:
                self._evict(mine[0], "per_peer")
            if len(self._untrusted) >= policy.untrusted:
                self._evict(self._displaced(), "untrusted")
        limit = self.max_connections
        if limit is not None and len(self._live) >= limit:
            if self._untrusted:
                self._evict(self._displaced(), "connection_cap")
            else:
                self._refuse(handler, transport, limit)
                return
        super().connection_made(handler, transport)
        self._live.add(handler)
        if policy is not None:
            timer = self._loop.call_later(policy.deadline, self._expire, handler)
            self._untrusted[handler] = (peer, timer)

    def connection_lost(self, handler: RequestHandler, exc: BaseException | None = None) -> None:
        self._live.discard(handler)
        self._forget(handler)
        super().connection_lost(handler, exc)

    def trust(self, handler: RequestHandler) -> None:
        self._forget(handler)

    def _forget(self, handler: RequestHandler) -> None:
        found = self._untrusted.pop(handler, None)
        if found is not None:
            found[1].cancel()

    def _displaced(self) -> RequestHandler:
        """The untrusted connection that gives way: the oldest of the address holding the most
        (a peer with one connection waiting, as a member is, is the last to lose it)."""
        held = Counter(peer for peer, _ in self._untrusted.values())
        most = max(held.values())
        return next(h for h, (peer, _) in self._untrusted.items() if held[peer] == most)

    def _expire(self, handler: RequestHandler) -> None:
        found = self._untrusted.get(handler)
        if found is None or self.trust_policy is None:
            return
        if handler._request_count > 0:
            # A whole request arrived (in time: the loop reads what came before it runs a timer
            # that fell due meanwhile) and waits for its credentials to be checked, which trusts
            # the connection or closes it; a loop held past the deadline does not drop it.
            timer = self._loop.call_later(self.trust_policy.deadline, self._expire, handler)
            self._untrusted[handler] = (found[0], timer)
            return
        self._evict(handler, "deadline")

    def _evict(self, handler: RequestHandler, why: str) -> None:
        """Close a connection not yet trusted, to make room (or at its deadline)."""
        self._forget(handler)
        self._live.discard(handler)
        self.evicted += 1
        if self.evicted == 1 or self.evicted % 100 == 0:
            log.warning("http.untrusted_closed", reason=why, closed=self.evicted)
        handler.force_close()

    def _refuse(self, handler: RequestHandler, transport: asyncio.Transport, limit: int) -> None:
        self.refused += 1
        if self.refused == 1 or self.refused % 100 == 0:
            log.warning("http.connections_refused", limit=limit, refused=self.refused)
        transport.write(_busy_response(limit))
        handler.force_close()  # the handler never registers: it is closed before it reads


def _peer(transport: asyncio.Transport) -> str:
    """The peer's address (without its port): what a per-peer bound counts by."""
    name = transport.get_extra_info("peername")
    return str(name[0]) if isinstance(name, tuple) and name else str(name)


class SidecarRunner(web.AppRunner):
    """``web.AppRunner`` whose server answers half-closed clients, refuses what aiohttp's parser
    cannot read in the one error shape, keeps at most ``max_connections`` connections and, given
    a ``Trust``, keeps its slots for peers that authenticate."""

    def __init__(
        self,
        app: web.Application,
        *,
        max_connections: int | None = None,
        trust: Trust | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self.max_connections = max_connections
        self.trust = trust

    async def _make_server(self) -> web.Server:
        return _Server(await super()._make_server(), self.max_connections, self.trust)
