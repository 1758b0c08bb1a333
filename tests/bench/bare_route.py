"""A bare aiohttp server: the HTTP limit the sidecar's search route is measured against.

One process, the default asyncio loop, ``web.AppRunner(access_log=None)`` as the sidecar runs it,
and one ``POST /memory/search`` route that reads the request body and answers fixed bytes (a real
sidecar search answer, captured by the bench) with the sidecar's content type. No middleware, no
JSON decoding, no search: what aiohttp itself costs per request on this machine.

    python -m tests.bench.bare_route PORT BODY_FILE        (benches start it through ``start_bare``)
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from aiohttp import web

__all__ = ["BareRoute", "start_bare"]


async def serve(port: int, body: bytes) -> None:
    async def search(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(body=body, content_type="application/json", charset="utf-8")

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_post("/memory/search", search)
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


def start_bare(body: bytes, work: Path, port: int, wait: float = 30.0) -> BareRoute:
    """Start the bare route answering ``body`` on ``port``; wait until it answers."""
    work.mkdir(parents=True, exist_ok=True)
    body_file = work / "bare-answer.json"
    body_file.write_bytes(body)
    log = (work / "bare-route.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.bare_route", str(port), str(body_file)], stdout=log, stderr=log
    )
    log.close()
    bare = BareRoute(proc, port)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"bare route exited with {proc.returncode}: {(work / 'bare-route.log').read_text()}")
        try:
            if httpx.post(f"{bare.url}/memory/search", content=b"{}", timeout=0.5).content == body:
                return bare
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    bare.stop()
    raise RuntimeError(f"bare route not ready after {wait}s")


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), Path(sys.argv[2]).read_bytes()))
