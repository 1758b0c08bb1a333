"""How a real sidecar process takes connections (``sidecar.http.connections``): a client that
half-closes after its request still gets the answer, and what aiohttp's parser refuses is answered
in the one error shape."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from sidecar.http import connections
from sidecar.http.connections import SidecarRunner, Trust, trusted
from tests.support.memory import write
from tests.support.procs import SidecarProcess, start_sidecar
from tests.support.waiting import HANG_GUARD_S


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SidecarProcess]:
    memory = tmp_path_factory.mktemp("connections") / "memory"
    write(memory, "AGENT.md", "# Agent\n")
    proc = start_sidecar(memory, "--watch", "false")
    try:
        yield proc
    finally:
        proc.kill()


def exchange(port: int, data: bytes, *, half_close: bool = False) -> tuple[int, dict[str, str], Any]:
    """Send ``data`` on a fresh connection (then shut the sending side, with ``half_close``) and
    read until the server closes: (status, headers, JSON body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sock:
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    assert received, "no answer at all"
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def post(port: int, path: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def test_a_client_that_half_closes_after_its_write_gets_the_answer(sidecar: SidecarProcess) -> None:
    memory = Path(sidecar.args[sidecar.args.index("--memory-dir") + 1])
    body = json.dumps({"path": "AGENT.md", "content": "- half-closed but answered"}).encode()
    status, _, answer = exchange(sidecar.port, post(sidecar.port, "/memory/write", body), half_close=True)
    assert status == 201 and answer["seq"] >= 1, answer
    assert (memory / "AGENT.md").read_text().count("- half-closed but answered") == 1
    body = json.dumps({"query": "answered", "after_seq": answer["seq"]}).encode()
    status, _, found = exchange(sidecar.port, post(sidecar.port, "/memory/search", body), half_close=True)
    assert status == 200 and [hit["path"] for hit in found["results"]] == ["AGENT.md"]


def test_a_half_close_then_retry_with_the_same_key_lands_once(sidecar: SidecarProcess) -> None:
    """The client that lost its answer retries with its Idempotency-Key: one entry, one seq."""
    memory = Path(sidecar.args[sidecar.args.index("--memory-dir") + 1])
    body = json.dumps({"path": "AGENT.md", "content": "- retried once"}).encode()
    _, _, first = exchange(
        sidecar.port, post(sidecar.port, "/memory/write", body, "Idempotency-Key: retry-1\r\n"), half_close=True
    )
    retry = post(sidecar.port, "/memory/write", body, "Idempotency-Key: retry-1\r\nConnection: close\r\n")
    status, headers, again = exchange(sidecar.port, retry)
    assert status == 201 and again == first and headers["idempotent-replayed"] == "true"
    assert (memory / "AGENT.md").read_text().count("- retried once") == 1


@pytest.mark.parametrize(
    ("request_bytes", "status", "code"),
    [
        (b"GET /healthz HTTP/1.1\r\n\r\n", 400, "bad_request"),  # no Host on HTTP/1.1
        (b"BR@KEN / HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400, "bad_request"),
        (b"GET /" + b"x" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad_request"),
    ],
    ids=["no-host", "bad-method", "bad-header", "long-line"],
)
def test_what_the_parser_refuses_is_answered_in_the_one_error_shape(
    sidecar: SidecarProcess, request_bytes: bytes, status: int, code: str
) -> None:
    got, headers, body = exchange(sidecar.port, request_bytes)
    assert got == status and headers["content-type"].startswith("application/json")
    assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"]


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_a_coding_the_parser_cannot_decode_is_415_in_the_one_error_shape(sidecar: SidecarProcess, coding: str) -> None:
    request = post(sidecar.port, "/memory/search", b'{"query": "agent"}', f"Content-Encoding: {coding}\r\n")
    status, headers, body = exchange(sidecar.port, request)
    assert status == 415 and body["error"]["code"] == "unsupported_encoding", body
    assert headers["accept-encoding"] == "gzip, deflate"


def test_a_broken_chunked_body_is_400_in_the_one_error_shape(sidecar: SidecarProcess) -> None:
    request = (
        f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{sidecar.port}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
    ).encode()
    status, _, body = exchange(sidecar.port, request)
    assert status == 400 and set(body) == {"error"}, body
    assert httpx.get(f"{sidecar.url}/healthz").status_code == 200


#: A sidecar runner serving a route that answers without reading its body, to clients that send
#: part of a body and close their side; prints what aiohttp logged as an error.
_CUT_BODY = """
import asyncio, logging, socket
from aiohttp import web
from sidecar.http.connections import SidecarRunner

failures = []
class Failures(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.ERROR:
            failures.append(record.getMessage())
logging.getLogger("aiohttp").addHandler(Failures())
logging.getLogger("aiohttp").setLevel(logging.DEBUG)

async def early(request):
    await asyncio.sleep(0.05)  # the client's end of input arrives while the handler runs
    return web.json_response({"ok": True})

async def main():
    app = web.Application()
    app.router.add_post("/early", early)
    runner = SidecarRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    def client():
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"POST /early HTTP/1.1\\r\\nHost: h\\r\\nContent-Length: 10\\r\\n\\r\\n{}")
            sock.shutdown(socket.SHUT_WR)
            return sock.recv(4096)
    answers = [await asyncio.to_thread(client) for _ in range(5)]
    await asyncio.sleep(0.3)
    await runner.cleanup()
    print(sum(a.startswith(b"HTTP/1.1 200") for a in answers), failures)
asyncio.run(main())
"""


def test_an_answer_that_leaves_a_cut_body_unread_logs_no_failure() -> None:
    """A client sends part of a body and closes its side; the route answers without reading the
    body. The answer arrives, and aiohttp does not linger reading a rest that can never come: the
    body's reader, cut, would raise there, outside every handler ("Unhandled exception")."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", _CUT_BODY], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "5 []", done.stdout


async def test_a_request_in_hand_at_the_trust_deadline_is_judged_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A peer sent its whole request, credentials and all, as soon as it connected, but the
    server's loop was held past the trust deadline before it read it (a busy host, a long
    callback): the request is judged as any other (here trusted and answered), the connection not
    closed unanswered. A connection that has sent no whole request is still closed at its deadline."""

    @web.middleware
    async def holds_the_token(request: web.Request, handler: Any) -> web.StreamResponse:
        trusted(request)
        return await handler(request)

    async def hello(request: web.Request) -> web.Response:
        return web.json_response({"hello": "member"})

    app = web.Application(middlewares=[holds_the_token])
    app.router.add_get("/", hello)
    deadline = 0.2
    runner = SidecarRunner(app, trust=Trust(untrusted=4, per_peer=4, deadline=deadline))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    sent = threading.Event()
    made = connections._Server.connection_made

    def then_held(self: Any, handler: Any, transport: Any) -> None:
        made(self, handler, transport)

        def hold() -> None:  # the loop held until the request is in the socket and the deadline passed
            sent.wait(HANG_GUARD_S)
            time.sleep(2 * deadline)

        self._loop.call_soon(hold)

    monkeypatch.setattr(connections._Server, "connection_made", then_held)

    def member() -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: lead\r\nConnection: close\r\n\r\n")
            sent.set()
            received = b""
            while chunk := sock.recv(65536):
                received += chunk
            return received

    try:
        received = await asyncio.to_thread(member)
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b'{"hello": "member"}'), received
        monkeypatch.undo()

        def stranger() -> bytes:
            with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S) as sock:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: le")  # never a whole request
                return sock.recv(65536)

        assert await asyncio.to_thread(stranger) == b""  # closed at the deadline, unanswered
    finally:
        await runner.cleanup()
