"""Connection handoff: a read worker gives a whole TCP connection to the primary instead of
forwarding its requests one by one.

Forwarding a request costs a worker more CPU than a search (an HTTP client round trip over the
Unix socket and the relay of the answer). So when the first request on a connection is one the
worker does not answer (a write, MCP, status ...), the worker hands the connection over, once: it
sends the bytes it has read from it and its descriptor (``SCM_RIGHTS``) to the primary's
``handoff.sock``; the primary adopts the socket into its own aiohttp server and feeds it those
bytes, so it answers that request and every later one on the connection. The worker closes its
descriptor without writing anything and without ``shutdown()``: the primary's keeps the connection.

Only the first request: until it is answered, the bytes the worker has read (``Tap``) are exactly
that request and whatever the client pipelined behind it, so they go over as they came (a chunked
or compressed body included) and nothing is lost. Once the worker has answered a request, which of
the bytes it read belong to the next one only aiohttp's parser knows, so later requests on that
connection are forwarded. That is also the split wanted: a connection that begins with a search
stays with the worker for its searches. Forwarded instead, too: HTTP other than 1.x, upgrades,
``Expect`` (the worker has sent 100 Continue already), a request over ``payload_limit``; and, if
the handoff fails (no listener, the primary refuses or is gone), the request, as before.

The wire, one Unix connection per handoff (one per client connection at most): an 8-byte length
with the descriptor attached, then the bytes; the primary answers ``ACCEPTED`` once it has adopted
the connection and fed it the bytes (with no await between the two), else it closes. Without that
byte the worker cannot know the primary has the connection, so it answers the request itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.settings import Settings

__all__ = [
    "ACCEPTED",
    "HandedOff",
    "HandoffListener",
    "Tap",
    "first_request_only",
    "hand_off",
    "payload_limit",
    "tapped",
]

log = structlog.get_logger("sidecar.handoff")

ACCEPTED = b"\x01"
HEADER_ROOM = 64 * 1024  # request line and headers; a request with more is forwarded
RECEIVE_TIMEOUT_S = 5.0
_LENGTH = struct.Struct("<Q")
_PEERCRED = struct.Struct("3i")  # pid, uid, gid


def payload_limit(settings: Settings) -> int:
    """The most bytes one handoff carries: a request with the largest body accepted."""
    return settings.max_body_bytes + HEADER_ROOM


# -- the worker's side -----------------------------------------------------------------------------
class Tap(asyncio.Protocol):
    """A connection's aiohttp protocol, with a copy of the bytes it received kept until its first
    request is answered (``release``) or they pass ``limit``."""

    def __init__(self, inner: asyncio.Protocol, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.received: bytearray | None = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        received = self.received
        if received is not None:
            if len(received) + len(data) > self.limit:
                self.received = None
            else:
                received += data
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self.received = None
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def release(self) -> None:
        self.received = None


def tapped(runner: web.AppRunner, limit: int) -> Callable[[], Tap]:
    """A protocol factory for the worker's listener: ``runner``'s server, each connection tapped."""
    server = runner.server
    assert server is not None, "the runner is set up first"
    return lambda: Tap(server(), limit)


def _tap(request: web.BaseRequest) -> Tap | None:
    transport = request.transport
    protocol = transport.get_protocol() if transport is not None else None
    return protocol if isinstance(protocol, Tap) else None


@web.middleware
async def first_request_only(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Outermost in the worker: once a connection's first request is answered, its bytes are no
    longer kept, and no later request on it is handed off."""
    try:
        return await handler(request)
    finally:
        tap = _tap(request)
        if tap is not None:
            tap.release()


class HandedOff(web.StreamResponse):
    """What a handler returns once the primary has the connection: aiohttp writes nothing (not
    even headers) and, as it is not kept alive, closes the transport (close, never shutdown)."""

    def __init__(self) -> None:
        super().__init__()
        self.force_close()

    async def prepare(self, request: web.BaseRequest) -> None:
        return None

    async def write_eof(self, data: bytes = b"") -> None:
        return None


def _takeable(request: web.BaseRequest) -> bool:
    """Whether the primary can take the request over as received: HTTP/1.x, no upgrade, no
    ``Expect`` (a 100 Continue went out from here already) and its body all read."""
    headers = request.headers
    return (
        request.version.major == 1 and "Upgrade" not in headers and "Expect" not in headers and request.content.is_eof()
    )


async def hand_off(request: web.BaseRequest, path: Path) -> bool:
    """Give the request's connection to the primary listening on ``path``. False if it was not
    handed off (not the first request, not takeable, or the handoff failed): the caller answers."""
    tap = _tap(request)
    transport = request.transport
    if tap is None or tap.received is None or transport is None or not _takeable(request):
        return False
    sock = transport.get_extra_info("socket")
    if sock is None or transport.get_write_buffer_size():
        return False  # an answer still buffered here must reach the client before any of the primary's
    was_reading = transport.is_reading()
    transport.pause_reading()  # from here on only the primary reads this connection
    payload = bytes(tap.received)
    try:
        accepted = await _send(path, payload, sock.fileno())
    except OSError as exc:
        log.warning("handoff.failed", error=f"{type(exc).__name__}: {exc}")
        accepted = False
    if accepted:
        tap.release()
        return True
    if was_reading:
        transport.resume_reading()
    return False


async def _send(path: Path, payload: bytes, fd: int) -> bool:
    loop = asyncio.get_running_loop()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.setblocking(False)
        await loop.sock_connect(conn, str(path))
        # 8 bytes on a new connection: its send buffer takes them at once, with the descriptor.
        if socket.send_fds(conn, [_LENGTH.pack(len(payload))], [fd]) != _LENGTH.size:
            return False
        await loop.sock_sendall(conn, payload)
        return await loop.sock_recv(conn, 1) == ACCEPTED


# -- the primary's side ----------------------------------------------------------------------------
class HandoffListener:
    """Listens on ``path`` (in the workers' private 0700 runtime dir) and adopts each connection a
    worker of the same user hands over into ``runner``'s server, as if it had been accepted here."""

    def __init__(self, runner: web.AppRunner, path: Path, limit: int) -> None:
        self.runner = runner
        self.path = path
        self.limit = limit
        self.adopted = 0
        self._sock: socket.socket | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(self.path))
            sock.listen(64)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock = sock
        self._track(self._accept(sock), "handoff-accept")

    def _track(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _accept(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except OSError as exc:  # out of descriptors, say: the workers forward meanwhile
                log.warning("handoff.accept_failed", error=f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(0.1)
                continue
            self._track(self._adopt(conn), "handoff-adopt")

    async def _adopt(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not _same_user(conn):
                    log.warning("handoff.refused", reason="the peer is another user")
                    return
                async with asyncio.timeout(RECEIVE_TIMEOUT_S):
                    tcp, payload = await _receive(conn, self.limit)
            except (OSError, ValueError, TimeoutError) as exc:
                log.warning("handoff.refused", reason=f"{type(exc).__name__}: {exc}")
                return
            try:
                loop = asyncio.get_running_loop()
                _, protocol = await loop.connect_accepted_socket(self._server(), tcp)
            except BaseException:
                tcp.close()
                raise
            protocol.data_received(payload)  # parsed as if it had just arrived
            self.adopted += 1
            with contextlib.suppress(OSError):  # the worker is gone: it answers nothing either
                conn.send(ACCEPTED)

    def _server(self) -> web.Server:
        server = self.runner.server
        assert server is not None, "the runner is set up first"
        return server

    async def stop(self) -> None:
        """Stop adopting (before the runner's cleanup, which then closes what was adopted)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self.path.unlink(missing_ok=True)


def _same_user(conn: socket.socket) -> bool:
    _pid, uid, _gid = _PEERCRED.unpack(conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size))
    return int(uid) == os.getuid()


async def _receive(conn: socket.socket, limit: int) -> tuple[socket.socket, bytes]:
    """The TCP socket and the bytes a worker sent; ValueError if they are not what a worker sends."""
    loop = asyncio.get_running_loop()
    await _readable(conn)
    head, fds, flags, _ = socket.recv_fds(conn, _LENGTH.size, 1)  # the descriptor comes with these
    if not fds:
        raise ValueError("no descriptor came with the handoff")
    tcp = _tcp_socket(fds[0])
    try:
        if flags & socket.MSG_CTRUNC or len(head) != _LENGTH.size:
            raise ValueError("a malformed handoff header")
        (size,) = _LENGTH.unpack(head)
        if size > limit:
            raise ValueError(f"a handoff of {size} bytes (the limit is {limit})")
        payload = bytearray()
        while len(payload) < size:
            chunk = await loop.sock_recv(conn, min(size - len(payload), 1 << 16))
            if not chunk:
                raise ValueError("the handoff ended early")
            payload += chunk
        return tcp, bytes(payload)
    except BaseException:
        tcp.close()
        raise


def _tcp_socket(fd: int) -> socket.socket:
    try:
        sock = socket.socket(fileno=fd)
    except OSError:
        os.close(fd)
        raise
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        sock.close()
        raise ValueError("the descriptor handed over is not a TCP socket")
    return sock


async def _readable(sock: socket.socket) -> None:
    """Wait until ``sock`` has something to read (``recv_fds`` has no asyncio counterpart)."""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(sock.fileno(), wake)
    try:
        await ready
    finally:
        loop.remove_reader(sock.fileno())
