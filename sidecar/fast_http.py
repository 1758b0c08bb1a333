"""The fast path for the one hot request, ``POST /memory/search``, without aiohttp.

aiohttp's request machinery (the request and response objects, the middleware chain, the header
writer) costs several times what it takes to parse a small request and write its answer directly,
and a search answered from the in-memory postings is not much more than that. So each connection
the sidecar or a read worker accepts starts as a ``FastConnection``: while its requests are plain
searches in the simplest HTTP/1.1 form, the ``Answer`` function of its process answers them and
the answer is written here, in order. The first request that is anything else (another route, a
header this path does not take, a body the answer function will not take: a client mistake
deserves aiohttp's 400) and everything after it on that connection go to aiohttp: the
connection's protocol becomes aiohttp's (``transport.set_protocol``) and gets the unanswered bytes
as they came. What the client sees is the same either way, but for which code wrote the answer.

A request is taken here only when every one of these holds, else aiohttp has it (and may refuse it):
the request line is exactly ``POST /memory/search HTTP/1.1``; headers are well-formed tokens and
values, at most ``MAX_HEADERS`` and ``MAX_HEAD`` bytes in all; exactly one ``Host`` naming this
sidecar; exactly one ``Content-Length`` (digits, at most the body limit); no ``Transfer-Encoding``,
``Content-Encoding``, ``Expect``, ``Upgrade`` or ``Origin``; ``Connection`` absent or keep-alive.

Time limits match the aiohttp server's: a request that is not whole ``STALL_S`` after its first
bytes is handed to aiohttp (whose header and body deadlines then apply), and a connection idle for
``idle_s`` with nothing pending is closed, as aiohttp's keep-alive timeout would.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from email.utils import formatdate
from typing import TYPE_CHECKING

import structlog
from aiohttp.http import SERVER_SOFTWARE

from sidecar.edge_guard import HEADER_TIMEOUT_S, allowed_hosts

if TYPE_CHECKING:
    from sidecar.settings import Settings

__all__ = ["MAX_HEAD", "MAX_HEADERS", "STALL_S", "Answer", "FastConnection", "FastConnections", "listen"]

log = structlog.get_logger("sidecar.fast_http")

MAX_HEAD = 8190  # request line and headers (aiohttp's max_line_size is per line; this is all of them)
MAX_HEADERS = 64
STALL_S = 1.0
_REQUEST_LINE = b"POST /memory/search HTTP/1.1"
_TOKEN = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")  # no control characters (obs-text allowed)
_REFUSED = frozenset({b"transfer-encoding", b"content-encoding", b"expect", b"upgrade", b"origin"})
_TICK_S = 1.0

# A request's JSON body -> the answer's JSON body, or None for "aiohttp answers this one", or an
# awaitable of either when the answer needs a thread (the caller writes it when it comes).
Answer = Callable[[bytes], bytes | Awaitable[bytes | None] | None]


def _content_length(head: bytes, hosts: frozenset[bytes], max_body: int) -> int | None:
    """The body length of a search request this path takes (see the module docstring), else None."""
    lines = head.split(b"\r\n")
    if lines[0] != _REQUEST_LINE or len(lines) > MAX_HEADERS + 1:
        return None
    host = length = None
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            return None
        value = value.strip(b" \t")
        if _VALUE.fullmatch(value) is None:
            return None
        name = name.lower()
        if name == b"host":
            if host is not None:
                return None
            host = value.lower()
        elif name == b"content-length":
            if length is not None or not value.isdigit() or len(value) > 12:
                return None
            length = int(value)
        elif name in _REFUSED or (name == b"connection" and value.lower() != b"keep-alive"):
            return None
    if host not in hosts or length is None or not 0 < length <= max_body:
        return None
    return length


async def listen(
    settings: Settings,
    answer: Answer,
    fallback: Callable[[], asyncio.Protocol],
    *,
    reuse_port: bool | None,
    headers: dict[str, str] | None = None,
) -> tuple[asyncio.Server, FastConnections]:
    """The sidecar's port, bound as ``web.TCPSite`` binds it, each connection starting on the fast
    path with the edge's limits: the ``Host`` values the guard takes, the body limit, and the
    keep-alive timeout of ``server_limits`` as the idle limit. ``fallback``: aiohttp's protocol."""
    connections = FastConnections(
        answer,
        fallback,
        hosts=allowed_hosts(settings),
        max_body=settings.max_body_bytes,
        idle_s=HEADER_TIMEOUT_S,
        headers=headers or {},
    )
    loop = asyncio.get_running_loop()
    server = await loop.create_server(connections, settings.host, settings.port, reuse_port=reuse_port, backlog=128)
    return server, connections


class FastConnections:
    """The protocol factory for a listener, the connections still on the fast path (closed at
    shutdown: aiohttp's server does not know them), and what the fast path did."""

    def __init__(
        self,
        answer: Answer,
        fallback: Callable[[], asyncio.Protocol],
        *,
        hosts: frozenset[str],
        max_body: int,
        idle_s: float,
        headers: dict[str, str],
    ) -> None:
        self.answer = answer
        self.fallback = fallback
        self.hosts = frozenset(h.lower().encode("ascii") for h in hosts)
        self.max_body = max_body
        self.idle_s = idle_s
        self.extra = b"".join(f"{k}: {v}\r\n".encode("latin-1") for k, v in headers.items())
        self.live: set[FastConnection] = set()
        self.answered = 0
        self.handed = 0
        self._date_at = -1
        self._date = b""

    def __call__(self) -> FastConnection:
        return FastConnection(self)

    def head(self, length: int) -> bytes:
        """Status line and headers of a 200 JSON answer of ``length`` bytes, as aiohttp writes them."""
        now = int(time.time())
        if now != self._date_at:
            self._date_at, self._date = now, formatdate(now, usegmt=True).encode("ascii")
        return (
            b"HTTP/1.1 200 OK\r\n"
            + self.extra
            + b"Content-Type: application/json; charset=utf-8\r\nContent-Length: %d\r\nDate: %s\r\nServer: %s\r\n\r\n"
            % (length, self._date, SERVER_SOFTWARE.encode("latin-1"))
        )

    def close_all(self) -> None:
        for conn in list(self.live):
            conn.close()


class FastConnection(asyncio.Protocol):
    """One connection while its requests are fast-path searches (see the module docstring)."""

    def __init__(self, pool: FastConnections) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.busy = False  # an answer is on a thread: later requests wait, in order
        self.paused = False
        self.partial_since: float | None = None  # when the unanswered bytes started to wait
        self.eof = False
        self.later: asyncio.Future[None] | None = None  # the task writing an answer from a thread
        self.active = 0.0
        self._tick: asyncio.TimerHandle | None = None

    # -- asyncio.Protocol ------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.pool.live.add(self)
        loop = asyncio.get_running_loop()
        self.active = loop.time()
        self._tick = loop.call_later(_TICK_S, self._check)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.active = asyncio.get_running_loop().time()
        self._serve()

    def eof_received(self) -> bool | None:
        if self.busy:  # the answer on its way is written first, then the connection closes
            self.eof = True
            return True
        if self.buf:  # a request half sent: aiohttp decides what a half-closed one gets
            return self._to_aiohttp().eof_received()
        return None  # nothing pending: the transport closes

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()

    def pause_writing(self) -> None:
        self.paused = True  # a client that does not read: aiohttp's flow control takes over
        if not self.busy:
            self._to_aiohttp()

    def resume_writing(self) -> None:
        self.paused = False

    # -- the fast path ---------------------------------------------------------------------------
    def _serve(self) -> None:
        """Answer every whole request in the buffer, in order, until one is not for this path."""
        buf = self.buf
        while buf and not self.busy and self.transport is not None:
            if self.paused:
                self._to_aiohttp()
                return
            end = buf.find(b"\r\n\r\n", 0, MAX_HEAD + 4)
            if end < 0:
                if len(buf) > MAX_HEAD:
                    self._to_aiohttp()
                else:
                    self._waiting()
                return
            length = _content_length(bytes(buf[:end]), self.pool.hosts, self.pool.max_body)
            if length is None:
                self._to_aiohttp()
                return
            total = end + 4 + length
            if len(buf) < total:
                self._waiting()
                return
            try:
                answer = self.pool.answer(bytes(buf[end + 4 : total]))
            except Exception:  # a bug here must not cost the request: aiohttp answers it
                log.exception("fast_http.answer_failed")
                answer = None
            if answer is None:
                self._to_aiohttp()
                return
            if isinstance(answer, bytes):
                del buf[:total]
                self._write(answer)
            else:
                self.busy = True
                self.later = asyncio.ensure_future(self._answer_later(answer, total))
                return
        self.partial_since = None

    async def _answer_later(self, answer: Awaitable[bytes | None], total: int) -> None:
        try:
            body = await answer
        except Exception:
            log.exception("fast_http.answer_failed")
            body = None
        self.busy = False
        if self.transport is None:
            return  # the client left meanwhile
        if body is None:
            self._to_aiohttp()
            return
        del self.buf[:total]
        self._write(body)
        if not self.eof:
            self._serve()
        elif self.buf:
            self._to_aiohttp().eof_received()
        else:
            self.close()

    def _write(self, body: bytes) -> None:
        assert self.transport is not None
        self.transport.write(self.pool.head(len(body)) + body)
        self.pool.answered += 1
        self.partial_since = None
        self.active = asyncio.get_running_loop().time()

    def _waiting(self) -> None:
        if self.partial_since is None:
            self.partial_since = asyncio.get_running_loop().time()

    def _check(self) -> None:
        """Once a second: a request stalled past ``STALL_S`` goes to aiohttp; an idle connection
        past the keep-alive timeout is closed."""
        if self.transport is None:
            return
        now = asyncio.get_running_loop().time()
        if self.partial_since is not None and now - self.partial_since >= STALL_S and not self.busy:
            self._to_aiohttp()
            return
        if not self.buf and not self.busy and now - self.active >= self.pool.idle_s:
            self.close()
            return
        self._tick = asyncio.get_running_loop().call_later(_TICK_S, self._check)

    def _to_aiohttp(self) -> asyncio.Protocol:
        """The connection becomes aiohttp's from here: its protocol, fed what is unanswered."""
        transport = self.transport
        assert transport is not None and not self.busy
        inner = self.pool.fallback()
        pending = bytes(self.buf)
        self._stop()
        transport.set_protocol(inner)
        inner.connection_made(transport)
        if self.paused:
            inner.pause_writing()
        self.pool.handed += 1
        if pending:
            inner.data_received(pending)
        return inner

    def _stop(self) -> None:
        self.transport = None
        self.buf = bytearray()
        self.pool.live.discard(self)
        if self._tick is not None:
            self._tick.cancel()
            self._tick = None

    def close(self) -> None:
        transport = self.transport
        self._stop()
        if transport is not None:
            transport.close()
