"""Read workers: more processes answering searches on the sidecar's port, for more than one core.

One Python process runs on one core at a time (the GIL). With ``--read-workers N`` the sidecar
(the *primary*: the one process that owns the indexes, the queue, the watchers and every write)
binds its port with ``SO_REUSEPORT`` and starts N workers that bind it too; the kernel spreads
incoming connections over the listening processes.

A worker answers the one request that is hot and read-only, an agent-tier BM25 search
(``scope`` agent, plain text, no ``after_seq``, no ``explain``), from its own read-only view of
the agent index (``sidecar.replica``). Everything else it forwards, unchanged, to the primary over
a Unix socket in a private runtime directory, and relays the answer: writes, MCP, the prompt
block, status, metrics, crew and hybrid searches. Except when such a request is the first on its
connection to reach aiohttp (searches before it on the fast path, ``sidecar.fast_http``, do not
count): then the worker hands the whole connection to the primary (``sidecar.handoff``), which
answers it and every later request on it. The ``index`` state of its answers (indexed_seq,
pending, lag_ms) is the primary queue's, read from a shared memory map (``sidecar.shared_state``)
before the search, so ``indexed_seq`` never claims more than the search saw. The same edge guards
(Host, Origin, body size and deadline) run in the worker, so the port behaves as one server.

Workers are started after the primary answers, restarted (with a back-off) if one dies, and
stopped before the primary stops. They are only started while searches are BM25 only: with an
embedder, every search embeds its query, which a worker could only forward.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import aiohttp
import structlog
from aiohttp import web
from yarl import URL

from sidecar.edge import error_middleware, json_answer, json_bytes, read_json_object
from sidecar.edge_guard import body_deadline, host_origin_guard, server_limits
from sidecar.errors import BadRequest, EngineUnavailable
from sidecar.fast_http import Answer, FastConnections
from sidecar.fast_http import listen as listen_fast
from sidecar.handoff import HandedOff, first_request_only, hand_off, payload_limit, tapped
from sidecar.heap import tune_malloc
from sidecar.index import Hit
from sidecar.logs import configure_logging
from sidecar.replica import ReplicaIndex
from sidecar.search import SearchRequest, parse_search
from sidecar.settings import Settings, load_settings
from sidecar.shared_state import LATENCY_BUCKETS, QueueStateFile, WorkerStats

__all__ = [
    "HANDOFF_SOCKET",
    "PRIMARY_SOCKET",
    "QUEUE_STATE",
    "ReadWorkers",
    "create_worker_app",
    "listen",
    "main",
    "stats_file",
]

log = structlog.get_logger("sidecar.read_worker")

PRIMARY_SOCKET = "primary.sock"
HANDOFF_SOCKET = "handoff.sock"  # where a worker hands a whole connection to the primary
QUEUE_STATE = "queue.state"
# Hop-by-hop headers (RFC 9110 7.6.1) and the framing aiohttp sets again itself.
_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade", "content-length"}
)
# On the searches a worker answered itself (not on what it forwards): for tests and debugging.
_SERVED_BY = {"X-Served-By": "read-worker"}
_REPLICA: web.AppKey[ReplicaIndex] = web.AppKey("replica", ReplicaIndex)
_STATE: web.AppKey[QueueStateFile] = web.AppKey("queue_state", QueueStateFile)
_PRIMARY: web.AppKey[aiohttp.ClientSession] = web.AppKey("primary", aiohttp.ClientSession)
_READERS: web.AppKey[ThreadPoolExecutor] = web.AppKey("readers", ThreadPoolExecutor)
_STATS: web.AppKey[WorkerStats] = web.AppKey("stats", WorkerStats)
_HANDOFF: web.AppKey[Path] = web.AppKey("handoff", Path)


def stats_file(runtime: Path, number: int) -> Path:
    return runtime / f"worker-{number}.stats"


# -- the worker process ----------------------------------------------------------------------------
def create_worker_app(settings: Settings, runtime: Path, number: int = 0) -> web.Application:
    """The worker's application: agent-tier BM25 searches here, everything else to the primary."""
    middlewares = [first_request_only, host_origin_guard(settings), body_deadline(), error_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=settings.max_body_bytes)
    app[_HANDOFF] = runtime / HANDOFF_SOCKET

    async def resources(app: web.Application) -> AsyncIterator[None]:
        replica = ReplicaIndex(settings.memory_dir, "agent")
        replica.start()
        app[_REPLICA] = replica
        app[_STATE] = QueueStateFile(runtime / QUEUE_STATE)
        app[_STATS] = WorkerStats(stats_file(runtime, number), LATENCY_BUCKETS, create=True)
        app[_READERS] = ThreadPoolExecutor(max_workers=2, thread_name_prefix="agent-reader")
        connector = aiohttp.UnixConnector(path=str(runtime / PRIMARY_SOCKET))
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=5.0)
        app[_PRIMARY] = aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False)
        try:
            yield
        finally:
            await app[_PRIMARY].close()
            app[_READERS].shutdown(wait=True)
            await asyncio.to_thread(replica.stop)
            app[_STATE].close()
            app[_STATS].close()

    app.cleanup_ctx.append(resources)
    app.router.add_post("/memory/search", _search)
    app.router.add_route("*", "/{tail:.*}", _forward)
    return app


def _ours(req: SearchRequest) -> bool:
    """Whether this worker answers ``req`` (else the primary does)."""
    return req.scope == "agent" and req.after_seq is None and not req.raw_fts and not req.explain


def _answer(app: web.Application, hits: list[Hit], index_state: dict[str, Any], started: float) -> dict[str, Any]:
    took = time.perf_counter() - started
    app[_STATS].observe(took)
    return {
        "results": [h.as_json("agent") for h in hits],
        "scope": "agent",
        "took_ms": round(took * 1000, 3),
        "index": index_state,
    }


async def _search(request: web.Request) -> web.StreamResponse:
    req = SearchRequest.from_json(await read_json_object(request))  # a client mistake: 400 here
    if not _ours(req):
        return await _forward(request)
    app = request.app
    replica = app[_REPLICA]
    started = time.perf_counter()
    try:
        index_state = app[_STATE].state()  # before the search: what it reports, the search has seen
    except RuntimeError:
        log.warning("read_worker.no_queue_state", exc_info=True)
        return await _forward(request)
    try:
        hits = replica.search_fast(req.query, req.limit)
        if hits is None:
            loop = asyncio.get_running_loop()
            hits = await loop.run_in_executor(app[_READERS], replica.search, req.query, req.limit)
    except sqlite3.DatabaseError as exc:
        # The index is being replaced or repaired: the primary heals it and answers meanwhile.
        log.warning("read_worker.search_failed", error=f"{type(exc).__name__}: {exc}")
        replica.reset()
        return await _forward(request)
    return json_answer(_answer(app, hits, index_state, started), headers=_SERVED_BY)


def fast_answer(app: web.Application) -> Answer:
    """``_search`` for the fast path (``sidecar.fast_http``): the answer's bytes, or None wherever
    ``_search`` would do something else (a client mistake, a forward, a failure): then aiohttp
    takes the request and ``_search`` runs after all."""

    def answer(body: bytes) -> bytes | Awaitable[bytes | None] | None:
        parsed = parse_search(body)
        if parsed is None or not _ours(req := parsed[1]):
            return None
        try:
            index_state = app[_STATE].state()
        except RuntimeError:
            return None
        started = time.perf_counter()
        try:
            hits = app[_REPLICA].search_fast(req.query, req.limit)
        except sqlite3.DatabaseError:
            return None
        if hits is None:
            return on_thread(req, index_state, started)
        return json_bytes(_answer(app, hits, index_state, started))

    async def on_thread(req: SearchRequest, index_state: dict[str, Any], started: float) -> bytes | None:
        loop = asyncio.get_running_loop()
        try:
            hits = await loop.run_in_executor(app[_READERS], app[_REPLICA].search, req.query, req.limit)
        except sqlite3.DatabaseError:
            return None
        return json_bytes(_answer(app, hits, index_state, started))

    return answer


async def _forward(request: web.Request) -> web.StreamResponse:
    """Hand the connection to the primary if this is its first request, else send the request to
    the primary as it came, and its answer back as it comes."""
    body = await request.read()
    if await hand_off(request, request.app[_HANDOFF]):
        request.app[_STATS].hand_off()
        return HandedOff()
    request.app[_STATS].forward()
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP]
    headers.append(("X-Forwarded-For", request.remote or ""))
    try:
        url = URL(f"http://primary{request.rel_url.raw_path_qs}", encoded=True)
    except ValueError:
        raise BadRequest("the request target is not a path", code="bad_request") from None
    response: web.StreamResponse | None = None
    try:
        async with request.app[_PRIMARY].request(
            request.method, url, headers=headers, data=body, allow_redirects=False
        ) as upstream:
            response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
            for key, value in upstream.headers.items():
                if key.lower() not in _HOP:
                    response.headers.add(key, value)
            if upstream.content_length is not None:
                response.content_length = upstream.content_length
            await response.prepare(request)
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
            await response.write_eof()
            return response
    except (aiohttp.ClientError, OSError) as exc:
        transport = request.transport
        if transport is None or transport.is_closing():
            return web.Response(status=499)  # the client left: there is no one to answer
        log.warning("read_worker.primary_unreachable", error=f"{type(exc).__name__}: {exc}")
        if response is not None and response.prepared:
            # The answer had begun: cut the connection, so the client sees it incomplete rather
            # than a body that ends early as if it were whole.
            transport.abort()
            return response
        raise EngineUnavailable("the sidecar's primary process is not answering", code="primary_unavailable") from None


async def _serve(settings: Settings, runtime: Path, number: int, parent: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(
        create_worker_app(settings, runtime, number), handle_signals=False, access_log=None, **server_limits(settings)
    )
    await runner.setup()
    listener: asyncio.Server | None = None
    connections: FastConnections | None = None
    try:
        listener, connections = await listen(runner, settings)
        log.info("read_worker.ready", port=settings.port, pid=os.getpid())
        while not stop.is_set():
            if os.getppid() != parent:  # the primary died without stopping us
                log.warning("read_worker.orphaned")
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
    finally:
        if listener is not None:
            listener.close()
        if connections is not None:
            connections.close_all()  # aiohttp's cleanup closes the others
        await runner.cleanup()
        log.info("read_worker.stopped", pid=os.getpid())


async def listen(runner: web.AppRunner, settings: Settings) -> tuple[asyncio.Server, FastConnections]:
    """The worker's share of the port (``SO_REUSEPORT``): what ``web.TCPSite`` does, except that a
    connection starts on the fast path (``sidecar.fast_http``) and goes to aiohttp tapped
    (``sidecar.handoff.Tap``), so that the first request aiohttp sees can be handed off."""
    fallback = tapped(runner, payload_limit(settings))
    return await listen_fast(settings, fast_answer(runner.app), fallback, reuse_port=True, headers=_SERVED_BY)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m sidecar.read_worker --runtime DIR --number N --parent PID``; settings come from the
    environment the primary passes (``Settings.as_environ``)."""
    parser = argparse.ArgumentParser(prog="sidecar.read_worker")
    parser.add_argument("--runtime", type=Path, required=True)
    parser.add_argument("--number", type=int, required=True)
    parser.add_argument("--parent", type=int, required=True)
    args = parser.parse_args(argv)
    tune_malloc()
    # OPENBLAS_NUM_THREADS is already in the environment the primary passes (serve sets it): it has
    # to be, as numpy is loaded by this module's imports, before anything here could set it.
    settings = load_settings()
    configure_logging(settings.log_format, settings.log_level)
    asyncio.run(_serve(settings, args.runtime, args.number, args.parent))
    return 0


# -- the primary's side ----------------------------------------------------------------------------
class ReadWorkers:
    """Starts the workers, restarts one that dies (waiting 1 s, doubling up to 30 s), stops them."""

    def __init__(self, settings: Settings, runtime: Path) -> None:
        self.settings = settings
        self.runtime = runtime
        self.procs: dict[int, asyncio.subprocess.Process] = {}
        self.restarts = 0
        self._stopping = False
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        for number in range(self.settings.read_workers):
            self._tasks.append(asyncio.create_task(self._keep(number), name=f"read-worker-{number}"))

    async def _keep(self, number: int) -> None:
        delay = 1.0
        while not self._stopping:
            started = time.monotonic()
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "sidecar.read_worker",
                "--runtime",
                str(self.runtime),
                "--number",
                str(number),
                "--parent",
                str(os.getpid()),
                env={**os.environ, **self.settings.as_environ()},
                stdin=asyncio.subprocess.DEVNULL,
            )
            self.procs[number] = proc
            log.info("read_worker.started", number=number, pid=proc.pid, runtime=str(self.runtime))
            code = await proc.wait()
            if self._stopping:
                return
            self.restarts += 1
            if time.monotonic() - started > 60:
                delay = 1.0
            log.error("read_worker.exited", number=number, pid=proc.pid, code=code, restart_in=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    def stats_files(self) -> list[tuple[int, Path]]:
        return [(n, stats_file(self.runtime, n)) for n in range(self.settings.read_workers)]

    @property
    def running(self) -> int:
        """How many worker processes are up now."""
        return sum(1 for proc in self.procs.values() if proc.returncode is None)

    async def stop(self, grace: float = 5.0) -> None:
        """SIGTERM every worker (they finish their requests), SIGKILL those still up after ``grace``."""
        self._stopping = True
        for proc in self.procs.values():
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.terminate()
        for proc in self.procs.values():
            try:
                await asyncio.wait_for(proc.wait(), grace)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


if __name__ == "__main__":
    raise SystemExit(main())
