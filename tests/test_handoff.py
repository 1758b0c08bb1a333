"""Connection handoff: a read worker gives a connection whose first request it would forward to the
primary, with real processes and raw sockets. The client gets exactly one answer per request, the
connection stays usable and is the primary's from then on (in /proc too: only the primary holds its
socket), a body arrives intact, pipelined requests go along, and when the handoff cannot happen the
request is forwarded as before. The primary adopts connections only from its own user.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import socket
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from sidecar.handoff import ACCEPTED, HandoffListener
from sidecar.read_worker import HANDOFF_SOCKET, PRIMARY_SOCKET, QUEUE_STATE, create_worker_app, listen, stats_file
from sidecar.settings import Settings
from sidecar.shared_state import LATENCY_BUCKETS, QueueStateFile, WorkerStats
from tests import test_read_worker
from tests.procs import cpu_s, free_port
from tests.test_read_worker import _workers, wait_for

# The read worker tests' fixtures: a corpus copy per test and a sidecar with one worker on it.
corpus_template = test_read_worker.corpus_template
corpus = test_read_worker.corpus
sidecar_with_worker = test_read_worker.sidecar_with_worker


# -- helpers ---------------------------------------------------------------------------------------
class Raw:
    """A client connection read strictly: one response at a time, nothing may be left over."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _more(self) -> bytes:
        chunk = self.sock.recv(65536)
        assert chunk, f"the connection closed; unparsed: {self.buffer!r}"
        return chunk

    def response(self) -> tuple[int, dict[str, str], bytes]:
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._more()
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        status_line, *lines = head.decode("latin-1").split("\r\n")
        assert re.fullmatch(r"HTTP/1\.1 \d{3} .*", status_line), status_line
        headers = {}
        for line in lines:
            name, value = line.split(":", 1)
            assert name.lower() not in headers, f"{name} twice"
            headers[name.lower()] = value.strip()
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            self.buffer += self._more()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(status_line.split()[1]), headers, body

    def quiet(self, seconds: float = 0.3) -> None:
        """Nothing more arrives (no second answer, no garbage)."""
        assert self.buffer == b""
        self.sock.settimeout(seconds)
        try:
            extra = self.sock.recv(65536)
        except TimeoutError:
            extra = None
        finally:
            self.sock.settimeout(10)
        assert extra is None, f"unexpected bytes: {extra!r}"

    def closed(self) -> None:
        """The server closed the connection, with nothing after the last answer."""
        rest = self.buffer
        while chunk := self.sock.recv(65536):
            rest += chunk
        assert rest == b""

    def close(self) -> None:
        self.sock.close()


def request(port: int, method: str, path: str, body: Any = None, *, close: bool = False) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += f"Content-Length: {len(data)}\r\n" + ("Connection: close\r\n" if close else "") + "\r\n"
    return head.encode() + data


def holders(port: int, conn: Raw, pids: list[int]) -> set[int]:
    """The processes holding the server's end of ``conn`` (from /proc)."""
    client_port = conn.sock.getsockname()[1]
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote = int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16)
        if local == port and remote == client_port:
            inodes.add(f"socket:[{fields[9]}]")
    found = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                if os.readlink(fd) in inodes:
                    found.add(pid)
    return found


def connection_on_worker(side: Any) -> Raw:
    """A fresh connection the kernel gave to the (one) read worker, nothing sent on it yet."""
    (worker,) = _workers(side.proc.pid)
    for _ in range(100):
        conn = Raw(side.port)
        held = wait_for(lambda: holders(side.port, conn, [side.proc.pid, worker]), what="the accept")  # noqa: B023
        if held == {worker}:
            return conn
        conn.close()
    raise AssertionError("no connection landed on the worker in 100 tries")


def runtime_of(side: Any) -> Path:
    found = re.search(r'"runtime": ?"([^"]+)"', side.log_text())
    assert found is not None
    return Path(found.group(1))


def worker_stats(side: Any) -> tuple[int, int, int]:
    """(searches, forwarded, handed off) of worker 0, read from its shared stats (not over HTTP,
    which would itself be a request to count)."""
    stats = WorkerStats(stats_file(runtime_of(side), 0), LATENCY_BUCKETS)
    try:
        searches, forwarded, handed_off, _, _ = stats.snapshot()
    finally:
        stats.close()
    return searches, forwarded, handed_off


# -- real processes --------------------------------------------------------------------------------
def test_a_write_on_a_worker_connection_hands_the_connection_to_the_primary(
    sidecar_with_worker: Any, corpus: Path
) -> None:
    side = sidecar_with_worker
    (worker,) = _workers(side.proc.pid)
    conn = connection_on_worker(side)
    searches, forwarded, handed_off = worker_stats(side)
    # Known bytes, several thousand of them multi-byte, sent in pieces: the worker has read them over
    # several reads (the handler runs before the body is whole) and must pass on every one.
    content = "# Handoff\n\n" + "".join(f'- línea {i} quokka ✓ \\ "q"\n' for i in range(700))
    raw = request(side.port, "POST", "/memory/write", {"path": "topics/handoff.md", "content": content})
    head_end = raw.index(b"\r\n\r\n") + 4
    for piece in (raw[:head_end], raw[head_end : head_end + 5000], raw[head_end + 5000 :]):
        conn.send(piece)
        time.sleep(0.05)
    status, _, body = conn.response()
    assert status == 201, body
    seq = json.loads(body)["seq"]
    conn.quiet()  # exactly one answer
    assert worker_stats(side) == (searches, forwarded, handed_off + 1)
    assert content in (corpus / "topics/handoff.md").read_text()
    # The worker let go of the connection (closed, not shut down): only the primary holds it now.
    wait_for(lambda: holders(side.port, conn, [side.proc.pid, worker]) == {side.proc.pid}, what="the worker's close")

    # Every later request on the same connection is the primary's: it answers searches the worker
    # would have answered itself, and the worker sees none of them.
    for i in range(5):  # the first waits until the write is indexed; the others the worker would answer
        search: dict[str, Any] = {"query": "quokka línea"} | ({} if i else {"after_seq": seq})
        conn.send(request(side.port, "POST", "/memory/search", search))
        status, headers, body = conn.response()
        assert status == 200 and "x-served-by" not in headers, (headers, body)
        assert json.loads(body)["results"][0]["path"] == "topics/handoff.md"
        assert conn.buffer == b""
    conn.send(request(side.port, "POST", "/memory/search", {"query": "quokka"}, close=True))
    status, headers, _ = conn.response()
    assert status == 200 and "x-served-by" not in headers
    conn.closed()
    conn.close()
    assert worker_stats(side) == (searches, forwarded, handed_off + 1)

    # The worker is idle afterwards (a descriptor left in its epoll set would spin its loop).
    before = cpu_s(worker)
    time.sleep(1.0)
    assert cpu_s(worker) - before < 0.2
    # /metrics says so (the scrape may itself be handed off: at least one).
    conn = Raw(side.port)
    conn.send(request(side.port, "GET", "/metrics", close=True))
    status, _, body = conn.response()
    conn.close()
    found = re.search(rb'memory_sidecar_read_worker_handed_off_total\{worker="0"\} (\S+)', body)
    assert status == 200 and found is not None and float(found.group(1)) >= 1


def test_requests_pipelined_behind_the_first_go_over_with_it(sidecar_with_worker: Any) -> None:
    side = sidecar_with_worker
    conn = connection_on_worker(side)
    _, forwarded, handed_off = worker_stats(side)
    conn.send(
        request(side.port, "POST", "/memory/write", {"path": "topics/piped.md", "content": "- wombat piped\n"})
        + request(side.port, "POST", "/memory/search", {"query": "wombat"})
        + request(side.port, "GET", "/healthz", close=True)
    )
    statuses = []
    for _ in range(3):
        status, headers, _ = conn.response()
        statuses.append(status)
        assert "x-served-by" not in headers
    assert statuses == [201, 200, 200]
    conn.closed()
    conn.close()
    assert worker_stats(side)[1:] == (forwarded, handed_off + 1)


def test_without_the_handoff_socket_the_worker_forwards(sidecar_with_worker: Any, corpus: Path) -> None:
    side = sidecar_with_worker
    (runtime_of(side) / HANDOFF_SOCKET).unlink()
    conn = connection_on_worker(side)
    _, forwarded, handed_off = worker_stats(side)
    conn.send(request(side.port, "POST", "/memory/write", {"path": "topics/fwd.md", "content": "- forwarded okapi\n"}))
    status, _, body = conn.response()
    assert status == 201, body
    conn.quiet()
    assert worker_stats(side)[1:] == (forwarded + 1, handed_off)
    assert "forwarded okapi" in (corpus / "topics/fwd.md").read_text()
    # The connection stayed with the worker: it answers the next search itself.
    conn.send(request(side.port, "POST", "/memory/search", {"query": "deploy"}))
    status, headers, _ = conn.response()
    assert status == 200 and headers.get("x-served-by") == "read-worker"
    conn.close()
    assert "handoff.failed" in side.log_text()


# -- a stand-in primary ----------------------------------------------------------------------------
async def test_a_primary_that_takes_the_descriptor_but_does_not_accept_means_forwarding(
    tmp_path: Path, corpus: Path
) -> None:
    """The primary receives the descriptor and closes without ``ACCEPTED`` (it failed to adopt):
    the worker still owns the connection, forwards the request, and the client gets one answer."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    QueueStateFile(runtime / QUEUE_STATE, create=True).publish(0, 0, None)

    async def write(request: web.Request) -> web.Response:
        return web.json_response({"forwarded": (await request.json())["content"]}, status=201)

    fake = web.Application()
    fake.router.add_post("/memory/write", write)
    fake_runner = web.AppRunner(fake)
    await fake_runner.setup()
    await web.UnixSite(fake_runner, str(runtime / PRIMARY_SOCKET)).start()
    refusing = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    refusing.bind(str(runtime / HANDOFF_SOCKET))
    refusing.listen()
    received: list[int] = []

    def take_and_drop() -> None:
        conn, _ = refusing.accept()
        with conn:
            _, fds, _, _ = socket.recv_fds(conn, 8, 1)
            received.extend(fds)
            for fd in fds:
                os.close(fd)

    port = free_port()
    settings = Settings(memory_dir=corpus, port=port)
    runner = web.AppRunner(create_worker_app(settings, runtime))
    await runner.setup()
    listener, _ = await listen(runner, settings)
    try:
        dropping = asyncio.create_task(asyncio.to_thread(take_and_drop))
        async with aiohttp.ClientSession() as client:
            url = f"http://127.0.0.1:{port}/memory/write"
            async with client.post(url, json={"path": "a.md", "content": "x"}) as resp:
                assert resp.status == 201 and await resp.json() == {"forwarded": "x"}
            await dropping
            assert len(received) == 1  # the descriptor did go over
            async with client.post(url, json={"path": "a.md", "content": "y"}) as resp:  # same connection
                assert resp.status == 201 and await resp.json() == {"forwarded": "y"}
        stats = WorkerStats(stats_file(runtime, 0), LATENCY_BUCKETS)
        assert stats.snapshot()[1:3] == (2, 0)
        stats.close()
    finally:
        listener.close()
        await runner.cleanup()
        await fake_runner.cleanup()
        refusing.close()


def _hand_over(path: str, payload: bytes, uid: int | None, out: Any) -> None:
    """In a child process (as ``uid``): hand a fresh TCP connection's server end to ``path`` as a
    worker does, and report the answer byte and the status line the client then receives."""
    if uid is not None:
        os.setgid(uid)
        os.setuid(uid)
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    accepted, _ = server.accept()
    with socket.socket(socket.AF_UNIX) as unix:
        unix.connect(path)
        try:
            socket.send_fds(unix, [struct.pack("<Q", len(payload))], [accepted.fileno()])
            unix.sendall(payload)
            answer = unix.recv(1)
        except (BrokenPipeError, ConnectionResetError):  # refused: closed, before or after the bytes
            answer = b""
    accepted.close()
    client.settimeout(5)
    reply = b""
    if answer:
        while chunk := client.recv(65536):
            reply += chunk
    out.send((answer, reply.split(b"\r\n", 1)[0]))


async def _run_hand_over(path: Path, payload: bytes, uid: int | None) -> tuple[bytes, bytes]:
    # Forked (no exec: the venv's interpreter may be out of uid's reach) from the loop's thread.
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)
    child = context.Process(target=_hand_over, args=(str(path), payload, uid, writer))
    child.start()
    await asyncio.to_thread(child.join, 30)
    assert child.exitcode == 0
    result: tuple[bytes, bytes] = reader.recv()
    return result


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to run a process as another user")
async def test_the_primary_adopts_connections_only_from_its_own_user() -> None:
    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="hello")

    app = web.Application()
    app.router.add_get("/hello", hello)
    runner = web.AppRunner(app)
    await runner.setup()
    shared = Path(tempfile.mkdtemp())
    shared.chmod(0o777)  # so another user can reach the socket at all: the peer check is what refuses
    listener = HandoffListener(runner, shared / HANDOFF_SOCKET, 4096)
    listener.start()
    (shared / HANDOFF_SOCKET).chmod(0o777)
    payload = b"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    try:
        mine = await _run_hand_over(shared / HANDOFF_SOCKET, payload, None)
        assert mine == (ACCEPTED, b"HTTP/1.1 200 OK")
        other = await _run_hand_over(shared / HANDOFF_SOCKET, payload, 65534)
        assert other == (b"", b"")  # refused: closed without a word, the connection not adopted
        assert listener.adopted == 1
    finally:
        await listener.stop()
        await runner.cleanup()
        os.rmdir(shared)
