"""The fast path for plain searches (``sidecar.fast_http``), on real sockets.

In-process read workers on a real index answer the same search on the fast path and through
aiohttp (a request the fast path leaves alone: one with the sidecar's own ``Origin``), and the two
answers must be the same but for the clock; pipelined requests come back in order; the first
request the fast path does not take goes to aiohttp with everything after it; requests in pieces,
stalled requests, a half-closed connection, idle connections and a client that does not read
behave as aiohttp's server would. With real processes: a worker connection that began with
searches still hands itself to the primary at its first write, and the sidecar's own fast path
answers as its route does, waits for ``after_seq``, leaves client mistakes to aiohttp and is
counted in ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest
from aiohttp import web

from sidecar import read_worker
from sidecar.fast_http import STALL_S, FastConnections
from sidecar.index import TierIndex
from sidecar.read_worker import QUEUE_STATE, create_worker_app, listen
from sidecar.settings import Settings
from sidecar.shared_state import QueueStateFile
from tests import test_read_worker
from tests.bench.corpus import make_queries
from tests.procs import free_port, start_sidecar
from tests.test_handoff import Raw, connection_on_worker, request, worker_stats
from tests.test_read_worker import wait_for

QUERIES = make_queries(6, seed=5)  # words of the test corpus
_WORDS = QUERIES[1].split()
SEVERAL_TOKENS = f"{_WORDS[0]} {_WORDS[1]}-{_WORDS[2]} {_WORDS[3]}"  # one word of two tokens among others
corpus_template = test_read_worker.corpus_template
corpus = test_read_worker.corpus
sidecar_with_worker = test_read_worker.sidecar_with_worker


class Client:
    """One raw HTTP/1.1 connection, read strictly: a response at a time, nothing left over."""

    opened: ClassVar[list[Client]] = []  # closed after each test (the fixture below), also after a failure

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        Client.opened.append(self)

    @classmethod
    async def open(cls, port: int) -> Client:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def response(self) -> tuple[int, dict[str, str], bytes]:
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)
        status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in lines:
            name, value = line.split(":", 1)
            assert name.lower() not in headers, f"{name} twice"
            headers[name.lower()] = value.strip()
        body = await asyncio.wait_for(self.reader.readexactly(int(headers["content-length"])), 10)
        return int(status_line.split()[1]), headers, body

    async def closed(self) -> None:
        """The server closed the connection with nothing after the last answer."""
        assert await asyncio.wait_for(self.reader.read(), 10) == b""

    async def quiet(self, seconds: float = 0.3) -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(self.reader.read(1), seconds)

    def close(self) -> None:
        self.writer.close()


@pytest.fixture(autouse=True)
async def close_clients() -> AsyncIterator[None]:
    yield
    while Client.opened:
        writer = Client.opened.pop().writer
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def search(port: int, body: dict[str, Any], *extra: str) -> bytes:
    data = json.dumps(body).encode()
    head = f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    head += "".join(f"{h}\r\n" for h in extra) + f"Content-Length: {len(data)}\r\n\r\n"
    return head.encode() + data


class Worker:
    def __init__(self, port: int, connections: FastConnections, app: web.Application) -> None:
        self.port, self.connections, self.app = port, connections, app

    @property
    def counts(self) -> tuple[int, int]:
        """(answered on the fast path, connections given to aiohttp)."""
        return self.connections.answered, self.connections.handed


@pytest.fixture
async def worker(corpus: Path, tmp_path: Path) -> AsyncIterator[Worker]:
    index = TierIndex(corpus)
    index.open()
    index.close()
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    QueueStateFile(runtime / QUEUE_STATE, create=True).publish(3, 3, None)
    settings = Settings(memory_dir=corpus, port=free_port())
    runner = web.AppRunner(create_worker_app(settings, runtime), **read_worker.server_limits(settings))
    await runner.setup()
    listener, connections = await listen(runner, settings)
    replica = runner.app[read_worker._REPLICA]
    await asyncio.to_thread(wait_for, lambda: replica._postings is not None, 10.0, "the replica's postings")
    try:
        yield Worker(settings.port, connections, runner.app)
    finally:
        listener.close()
        connections.close_all()
        await runner.cleanup()


def same_answer(
    fast: tuple[int, dict[str, str], bytes],
    slow: tuple[int, dict[str, str], bytes],
    served_by: str | None = "read-worker",
) -> None:
    """Two answers to one search: the same status, headers (the clock aside) and JSON (the time aside)."""
    (fast_status, fast_headers, fast_body), (slow_status, slow_headers, slow_body) = fast, slow
    assert fast_status == slow_status == 200
    varying = ("date", "content-length")  # the clock, and the digits of took_ms
    assert {k: v for k, v in fast_headers.items() if k not in varying} == {
        k: v for k, v in slow_headers.items() if k not in varying
    }
    assert fast_headers.keys() == slow_headers.keys() and fast_headers.get("x-served-by") == served_by
    assert fast_headers["date"].endswith(" GMT") and int(fast_headers["content-length"]) == len(fast_body)
    fast_json, slow_json = json.loads(fast_body), json.loads(slow_body)
    assert fast_json.pop("took_ms") >= 0 and slow_json.pop("took_ms") >= 0
    assert fast_json == slow_json


# -- in-process workers ---------------------------------------------------------------------------
async def test_the_fast_path_answers_as_aiohttp_does(worker: Worker) -> None:
    port = worker.port
    own_origin = f"Origin: http://127.0.0.1:{port}"  # allowed, but only aiohttp's guard checks it
    replica = worker.app[read_worker._REPLICA]
    assert replica.search_fast(SEVERAL_TOKENS, 10) is None  # so it is answered from a thread
    queries: list[dict[str, Any]] = [
        {"query": QUERIES[0]},
        {"query": QUERIES[1], "limit": 3},
        {"query": "zzzzqx"},  # no hits: an empty list either way
        {"query": SEVERAL_TOKENS},
    ]
    for body in queries:
        fast = await Client.open(port)
        slow = await Client.open(port)
        await fast.send(search(port, body))
        await slow.send(search(port, body, own_origin))
        fast_answer, slow_answer = await fast.response(), await slow.response()
        same_answer(fast_answer, slow_answer)
        assert bool(json.loads(fast_answer[2])["results"]) == (body["query"] != "zzzzqx")
        fast.close()
        slow.close()
    assert worker.counts == (4, 4)  # each fast answer on the fast path, each Origin one to aiohttp


async def test_pipelined_searches_come_back_in_order_on_one_connection(worker: Worker) -> None:
    client = await Client.open(worker.port)
    limits = [1, 2, 3, 4, 5, 1, 2]
    await client.send(b"".join(search(worker.port, {"query": QUERIES[2], "limit": n}) for n in limits))
    got = [len(json.loads((await client.response())[2])["results"]) for _ in limits]
    assert got == limits
    await client.send(
        search(worker.port, {"query": SEVERAL_TOKENS + " " + QUERIES[3], "limit": 2})
        + search(worker.port, {"query": QUERIES[3], "limit": 1})
    )
    assert [len(json.loads((await client.response())[2])["results"]) for _ in range(2)] == [2, 1]
    await client.quiet()
    assert worker.counts == (9, 0)


async def test_the_first_request_it_does_not_take_goes_to_aiohttp_with_the_rest(worker: Worker) -> None:
    port = worker.port
    client = await Client.open(port)
    await client.send(search(port, {"query": QUERIES[4], "limit": 2}))
    assert (await client.response())[0] == 200
    bad = b'POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 9\r\n\r\n{"query":' % port
    # A client mistake, pipelined with a good search behind it: aiohttp gives the 400 in the API's
    # shape, then answers the search; the connection stays open.
    await client.send(bad + search(port, {"query": QUERIES[4], "limit": 1}))
    status, _, body = await client.response()
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_json"
    status, headers, body = await client.response()
    assert status == 200 and headers["x-served-by"] == "read-worker" and len(json.loads(body)["results"]) == 1
    await client.send(search(port, {"query": QUERIES[4], "limit": 3}))
    assert len(json.loads((await client.response())[2])["results"]) == 3
    await client.quiet()
    assert worker.counts == (1, 1)  # one fast answer; then the connection was aiohttp's


@pytest.mark.parametrize(
    ("header", "status"),
    [("Host: evil.example:80", 421), ("Origin: https://evil.example", 403), ("Transfer-Encoding: gzip", 400)],
)
async def test_what_the_guards_refuse_is_refused_by_aiohttp(worker: Worker, header: str, status: int) -> None:
    raw = search(worker.port, {"query": QUERIES[4]}).replace(b"\r\n\r\n", f"\r\n{header}\r\n\r\n".encode(), 1)
    if header.startswith("Host"):
        raw = raw.replace(f"Host: 127.0.0.1:{worker.port}\r\n".encode(), b"", 1)
    client = await Client.open(worker.port)
    await client.send(raw)
    assert (await client.response())[0] == status
    client.close()
    assert worker.counts == (0, 1)


async def test_a_request_in_pieces_is_answered_and_a_stalled_one_goes_to_aiohttp(worker: Worker) -> None:
    port = worker.port
    raw = search(port, {"query": QUERIES[2], "limit": 2})
    client = await Client.open(port)
    for cut in (10, raw.index(b"\r\n\r\n") + 2, len(raw) - 3):  # inside the request line, the headers, the body
        await client.send(raw[:cut])
        await asyncio.sleep(0.05)
        await client.send(raw[cut:])
        assert len(json.loads((await client.response())[2])["results"]) == 2
    assert worker.counts == (3, 0)
    # Headers and half a body, then nothing for longer than STALL_S: aiohttp takes the request (its
    # own body deadline runs from there) and answers once the rest comes.
    await client.send(raw[:-3])
    await asyncio.sleep(STALL_S + 1.2)
    assert worker.counts == (3, 1)
    await client.send(raw[-3:])
    status, headers, body = await client.response()
    assert status == 200 and headers["x-served-by"] == "read-worker" and len(json.loads(body)["results"]) == 2
    client.close()


async def test_a_half_closed_connection_gets_its_answers_and_is_closed(worker: Worker) -> None:
    client = await Client.open(worker.port)
    await client.send(
        search(worker.port, {"query": QUERIES[4], "limit": 1}) + search(worker.port, {"query": SEVERAL_TOKENS})
    )
    client.writer.write_eof()
    assert (await client.response())[0] == 200
    assert (await client.response())[0] == 200
    await client.closed()
    assert worker.counts == (2, 0)


# -- the protocol on its own, with aiohttp's server behind it --------------------------------------
@pytest.fixture
async def bare() -> AsyncIterator[tuple[int, FastConnections]]:
    """A FastConnections with a short idle limit; its answers echo the body, anything else is aiohttp's."""

    async def handler(request: web.BaseRequest) -> web.Response:
        return web.Response(text=f"aiohttp {request.method} {request.path}")

    server = web.Server(handler, keepalive_timeout=2.0)  # also its header deadline (edge_guard)
    port = free_port()

    def answer(body: bytes) -> bytes | None:
        return None if body == b"refuse" else b'{"echo":' + body + b"}"

    pool = FastConnections(answer, server, hosts=frozenset({f"127.0.0.1:{port}"}), max_body=100, idle_s=0.5, headers={})
    listener = await asyncio.get_running_loop().create_server(pool, "127.0.0.1", port)
    try:
        yield port, pool
    finally:
        listener.close()
        pool.close_all()
        await server.shutdown()


async def test_slow_headers_go_to_aiohttp_and_are_cut_off_while_others_are_answered(
    bare: tuple[int, FastConnections],
) -> None:
    """Slowloris on the fast path: a request line, then a header byte every 0.3 s. After STALL_S
    aiohttp has it, and its header deadline (2 s here) closes it; other clients never wait."""
    port, pool = bare
    opened = time.monotonic()
    slow = await Client.open(port)
    await slow.send(f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())

    async def trickle() -> None:
        with contextlib.suppress(ConnectionError):
            for byte in b"X-Slow: " + b"a" * 40:
                await slow.send(bytes([byte]))
                await asyncio.sleep(0.3)

    sender = asyncio.create_task(trickle())
    other = await Client.open(port)
    for n in range(10):
        started = time.monotonic()
        await other.send(search(port, n))  # type: ignore[arg-type]
        assert (await other.response())[2] == b'{"echo":%d}' % n
        assert time.monotonic() - started < 0.5
        await asyncio.sleep(0.2)
    await slow.closed()
    closed_after = time.monotonic() - opened
    sender.cancel()
    assert pool.handed == 1 and 2.0 <= closed_after < 6.0, closed_after  # at most ~2 s + aiohttp's 2 s


async def test_an_idle_connection_is_closed_and_a_busy_one_is_not(bare: tuple[int, FastConnections]) -> None:
    port, pool = bare
    idle, busy = await Client.open(port), await Client.open(port)
    deadline = time.monotonic() + 2.5
    while time.monotonic() < deadline:
        await busy.send(search(port, 1))  # type: ignore[arg-type]
        assert (await busy.response())[2] == b'{"echo":1}'
        await asyncio.sleep(0.1)
    await idle.closed()
    assert len(pool.live) == 1
    busy.close()


async def test_bodies_over_the_limit_and_refused_answers_are_aiohttps(bare: tuple[int, FastConnections]) -> None:
    port, pool = bare
    client = await Client.open(port)
    await client.send(search(port, [0] * 60))  # type: ignore[arg-type]  # over max_body
    assert (await client.response())[2] == b"aiohttp POST /memory/search"
    other = await Client.open(port)
    refused = f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 6\r\n\r\nrefuse"
    await other.send(refused.encode() + search(port, 2))  # type: ignore[arg-type]
    assert (await other.response())[2] == b"aiohttp POST /memory/search"
    assert (await other.response())[2] == b"aiohttp POST /memory/search"  # the rest went along
    assert pool.handed == 2 and pool.answered == 0
    client.close()
    other.close()


async def test_a_client_that_does_not_read_is_left_to_aiohttps_flow_control(bare: tuple[int, FastConnections]) -> None:
    port, pool = bare
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # so the server's writes back up soon
    sock.connect(("127.0.0.1", port))
    client = Client(*await asyncio.open_connection(sock=sock))
    one = search(port, "x" * 90)  # type: ignore[arg-type]
    sent = 40_000  # ~10 MB of answers: more than the kernel's socket buffers hold
    client.writer.write(one * sent)  # not drained: this client reads nothing until the server pauses
    for _ in range(400):
        if pool.handed:
            break
        await asyncio.sleep(0.05)
    assert pool.handed == 1 and 0 < pool.answered < sent
    answered = pool.answered
    got = 0
    echo, theirs = b'{"echo":"' + b"x" * 90 + b'"}', b"aiohttp POST /memory/search"
    while got < sent:  # every request gets its answer, in order: the fast path's first, then aiohttp's
        _, _, body = await client.response()
        assert body == (echo if got < answered else theirs), got
        got += 1
    assert pool.answered == answered  # nothing more on the fast path once aiohttp had the connection
    client.close()


# -- real processes --------------------------------------------------------------------------------
def test_a_connection_that_began_with_searches_hands_off_at_its_first_write(
    sidecar_with_worker: Any, corpus: Path
) -> None:
    side = sidecar_with_worker
    conn = connection_on_worker(side)
    try:
        searches, forwarded, handed_off = worker_stats(side)
        for _ in range(3):
            conn.send(request(side.port, "POST", "/memory/search", {"query": QUERIES[4]}))
            status, headers, _ = conn.response()
            assert status == 200 and headers["x-served-by"] == "read-worker"
        conn.send(request(side.port, "POST", "/memory/write", {"path": "topics/fast.md", "content": "- wombat"}))
        status, _, body = conn.response()
        assert status == 201
        after = {"query": "wombat", "after_seq": json.loads(body)["seq"]}
        conn.send(request(side.port, "POST", "/memory/search", after))
        status, headers, body = conn.response()
        assert status == 200 and "x-served-by" not in headers  # the primary's connection now
        assert json.loads(body)["results"][0]["path"] == "topics/fast.md"
        conn.quiet()
    finally:
        conn.close()
    assert worker_stats(side) == (searches + 3, forwarded, handed_off + 1)
    assert "- wombat" in (corpus / "topics/fast.md").read_text()


# -- the primary (no read workers) ---------------------------------------------------------------
def metric(client: httpx.Client, name: str) -> float:
    """A value from ``/metrics``, 0 while absent; ``client`` keeps one connection (which went to
    aiohttp at its first GET), so reading the counters does not move them."""
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.fixture
def sidecar_alone(corpus: Path) -> Iterator[Any]:
    side = start_sidecar(corpus)
    wait_for(lambda: "postings.built" in side.log_text(), what="the postings")
    try:
        with httpx.Client(base_url=side.url, timeout=10) as client:
            yield side, client
    finally:
        side.stop()


def test_the_primary_answers_plain_searches_on_the_fast_path_and_counts_them(sidecar_alone: Any) -> None:
    side, scrape = sidecar_alone
    answers = metric(scrape, "memory_sidecar_fast_path_answers_total")
    searches = metric(scrape, 'memory_sidecar_search_seconds_count{scope="agent"}')
    for body in ({"query": QUERIES[0]}, {"query": SEVERAL_TOKENS, "limit": 4}):
        fast, slow = Raw(side.port), Raw(side.port)
        try:
            fast.send(search(side.port, body))
            slow.send(search(side.port, body, f"Origin: http://127.0.0.1:{side.port}"))  # aiohttp's
            fast_answer, slow_answer = fast.response(), slow.response()
        finally:
            fast.close()
            slow.close()
        assert "x-served-by" not in fast_answer[1]
        same_answer(fast_answer, slow_answer, served_by=None)
        assert json.loads(fast_answer[2])["results"]
    # Both searches on the fast path (the second from a thread), both in the search metrics.
    assert metric(scrape, "memory_sidecar_fast_path_answers_total") == answers + 2
    assert metric(scrape, 'memory_sidecar_search_seconds_count{scope="agent"}') == searches + 4


def test_the_primary_fast_path_waits_for_after_seq_and_leaves_mistakes_to_aiohttp(
    sidecar_alone: Any, corpus: Path
) -> None:
    side, scrape = sidecar_alone
    conn = Raw(side.port)
    try:
        conn.send(request(side.port, "POST", "/memory/write", {"path": "topics/numbat.md", "content": "- numbat"}))
        status, _, body = conn.response()  # the connection is aiohttp's from here
        assert status == 201
    finally:
        conn.close()
    seq = json.loads(body)["seq"]
    fallbacks = metric(scrape, "memory_sidecar_fast_path_fallbacks_total")
    answers = metric(scrape, "memory_sidecar_fast_path_answers_total")
    conn = Raw(side.port)
    try:
        conn.send(search(side.port, {"query": "numbat", "after_seq": seq}))
        status, _, body = conn.response()
        answer = json.loads(body)
        assert status == 200 and answer["index"]["after_seq_met"] is True
        assert answer["results"][0]["path"] == "topics/numbat.md"
        conn.send(search(side.port, {"query": "numbat", "limit": 0}) + search(side.port, {"query": "numbat"}))
        status, _, body = conn.response()
        assert status == 400 and json.loads(body)["error"]["code"] == "invalid_limit"
        status, _, body = conn.response()
        assert status == 200 and json.loads(body)["results"][0]["path"] == "topics/numbat.md"
        conn.quiet()
    finally:
        conn.close()
    assert metric(scrape, "memory_sidecar_fast_path_answers_total") == answers + 1
    assert metric(scrape, "memory_sidecar_fast_path_fallbacks_total") == fallbacks + 1


def test_the_primary_leaves_crew_scopes_to_its_route(sidecar_alone: Any) -> None:
    """Only agent-scope searches are taken: a crew search goes to the route at once (on a member a
    lead that hangs would otherwise be waited for twice); here, solo, it is the route's 503."""
    side, scrape = sidecar_alone
    answers = metric(scrape, "memory_sidecar_fast_path_answers_total")
    fallbacks = metric(scrape, "memory_sidecar_fast_path_fallbacks_total")
    conn = Raw(side.port)
    try:
        conn.send(search(side.port, {"query": QUERIES[0], "scope": "crew"}))
        status, _, body = conn.response()
        assert status == 503 and json.loads(body)["error"]["code"] == "no_crew_tier"
        conn.quiet()
    finally:
        conn.close()
    assert metric(scrape, "memory_sidecar_fast_path_answers_total") == answers
    assert metric(scrape, "memory_sidecar_fast_path_fallbacks_total") == fallbacks + 1
