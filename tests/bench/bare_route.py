"""Bare aiohttp servers: the HTTP limit the sidecar's search route is measured against.

One process each, the default asyncio loop, ``web.AppRunner(access_log=None)`` as the sidecar runs
it, one ``POST /memory/search`` route and nothing else (no middleware, no metrics, no validation):

- ``fixed``: reads the request body and answers fixed bytes (a real sidecar search answer, captured
  by the bench) with the sidecar's content type. What aiohttp itself costs per request.
- ``search`` (and ``first``): decodes the body and answers the same BM25 search the sidecar runs
  (``TierIndex.search`` from the in-memory postings, hits as the sidecar's JSON, orjson), over its
  own index of an identical copy of the memory dir. What aiohttp plus the search cost, without the
  rest of the sidecar. ``first`` cuts each hit's snippet as a window at its first matching word
  (no cluster chosen, no highlights): what the snippet windows are weighed against.
- ``service``: opens a whole sidecar in this process over its own copy of the memory dir (the
  bench's settings: BM25 only, no scheduled consolidation), waits until its postings are built and
  its knowledge graph has read every file, and answers with the search service the sidecar's route
  calls (``SearchService.search``: the limit + spare hits ranked by standing, the lift, flagged-hit
  marks, the snippets), the request built from the body's query and limit with no checks, once the
  injection scanner's verdicts on every file are at hand (as the server's scan after start leaves them). What
  aiohttp plus the sidecar's own search cost, without the route's work around it (the middleware,
  the body's checks, the metrics, the index state).

    python -m tests.bench.bare_route PORT fixed BODY_FILE
    python -m tests.bench.bare_route PORT search MEMORY_DIR        (benches use ``start_bare``)
    python -m tests.bench.bare_route PORT first MEMORY_DIR
    python -m tests.bench.bare_route PORT service MEMORY_DIR
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import orjson
from aiohttp import web

__all__ = ["BareRoute", "start_bare"]

Handler = Callable[[web.Request], Awaitable[web.Response]]


def fixed_handler(body: bytes) -> Handler:
    async def search(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=body, content_type="application/json", charset="utf-8")

    return search


def search_handler(memory_dir: Path, *, first: bool = False) -> Handler:
    """The same BM25 search as the sidecar's; ``first``: each hit's snippet a window at the first
    matching word (``tests.bench.retrieval.first_match_answer``: no cluster chosen, no highlights)."""
    from sidecar.index.tier_index import TierIndex
    from tests.bench.retrieval import first_match_answer

    index = TierIndex(memory_dir)
    index.open()
    index.enable_postings()

    async def search(request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        hits = index.search(body["query"], body.get("limit", 10))
        if first:
            stems = [token[:5] for token in hits[0].terms] if hits else []
            results = [first_match_answer(h, "agent", stems) for h in hits]
        else:
            results = [h.as_json("agent") for h in hits]
        answer = {"results": results, "scope": "agent"}
        return web.Response(body=orjson.dumps(answer), content_type="application/json", charset="utf-8")

    return search


async def serve_service(port: int, memory_dir: Path) -> None:
    """``serve`` a route answering with the search service of a sidecar opened in this process."""
    from sidecar.contract import SearchRequest
    from sidecar.logs import configure_logging
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings
    from tests.bench.bench_http import STEADY, settled

    configure_logging("console", "warning")
    settings = load_settings({"memory_dir": memory_dir}, environ=STEADY)
    async with open_sidecar(settings) as sidecar:
        sidecar.tiers["agent"].start_postings()
        await settled(sidecar, memory_dir)
        service = sidecar.search
        # The injection scanner's verdicts on every file, as the server's background scan after
        # start leaves them (else the rounds' first searches would scan the files they show).
        await service.flags.warm({"agent": memory_dir})

        async def search(request: web.Request) -> web.Response:
            body = orjson.loads(await request.read())
            answer = await service.search(SearchRequest(body["query"], body.get("limit", 10)))
            return web.Response(body=orjson.dumps(answer), content_type="application/json", charset="utf-8")

        await serve(port, search)


async def serve(port: int, handler: Handler) -> None:
    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/memory/search", handler)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=128).start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


@dataclass
class BareRoute:
    proc: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_bare(
    work: Path,
    port: int,
    *,
    body: bytes | None = None,
    memory_dir: Path | None = None,
    first: bool = False,
    service: bool = False,
    wait: float = 120.0,
) -> BareRoute:
    """Start a bare route on ``port``: answering ``body``, or searching ``memory_dir`` (``first``:
    with windows at the first matching word; ``service``: with a whole sidecar's search service);
    wait until it answers /healthz (the search ones after their postings are built)."""
    work.mkdir(parents=True, exist_ok=True)
    if body is not None:
        body_file = work / f"bare-answer-{port}.json"
        body_file.write_bytes(body)
        mode = ["fixed", str(body_file)]
    elif memory_dir is not None:
        mode = ["service" if service else "first" if first else "search", str(memory_dir)]
    else:
        raise ValueError("start_bare: body or memory_dir")
    import httpx  # here, not at the top: the server process does not need it

    log_path = work / f"bare-route-{port}.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.bare_route", str(port), *mode], stdout=log, stderr=log
        )
    bare = BareRoute(proc, port)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"bare route exited with {proc.returncode}: {log_path.read_text()}")
        try:
            if httpx.get(f"{bare.url}/healthz", timeout=0.5).status_code == 200:
                return bare
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    bare.stop()
    raise RuntimeError(f"bare route not ready after {wait}s")


def main(argv: list[str]) -> None:
    port, mode, arg = int(argv[0]), argv[1], Path(argv[2])
    if mode == "service":
        asyncio.run(serve_service(port, arg))
        return
    handler = fixed_handler(arg.read_bytes()) if mode == "fixed" else search_handler(arg, first=mode == "first")
    asyncio.run(serve(port, handler))


if __name__ == "__main__":
    main(sys.argv[1:])
