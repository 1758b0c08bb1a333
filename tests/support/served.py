"""The sidecar's whole application served on a real loopback port from a thread of the test process.

For tests that drive the sidecar's API from other processes (a hook command, a client of the API)
and are not about the sidecar's own process (its start, signals, logs, imports, locks across
processes): the same application ``memory-sidecar serve`` runs (``create_app``: tiers, queue,
journal, graph, write service, every route and middleware), on its own event loop in a thread,
without the half second or more of CPU a new process spends importing and compiling the server's
modules (``tests/support/procs.py`` starts real processes for the tests that are about them).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from sidecar.server.app import create_app
from sidecar.settings import load_settings
from tests.support.procs import free_port

__all__ = ["ServedApp", "served_app"]


@dataclass(frozen=True)
class ServedApp:
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def served_app(memory_dir: Path, **settings: Any) -> Iterator[ServedApp]:
    """The application over ``memory_dir`` on a free loopback port until the block ends, with the
    settings ``memory-sidecar serve`` has by default (the embedder off, as ``start_sidecar`` runs
    it) and ``settings`` over them (as ``--name value`` flags would give them, ``api_token="t"`` for
    ``--api-token t``). The environment's ``MEMORY_SIDECAR_*`` variables are not read."""
    port = free_port()
    values = {"memory_dir": str(memory_dir), "port": str(port), "embedder": "none"}
    values |= {name: str(value) for name, value in settings.items()}
    config = load_settings(values, environ={})
    started = threading.Event()
    failed: list[BaseException] = []
    running: dict[str, Any] = {}

    async def serve() -> None:
        stop = asyncio.Event()
        running["stop"], running["loop"] = stop, asyncio.get_running_loop()
        runner = web.AppRunner(create_app(config), access_log=None)
        try:
            await runner.setup()
            await web.TCPSite(runner, config.host, config.port).start()
        except BaseException as exc:
            failed.append(exc)
            started.set()
            await runner.cleanup()
            return
        started.set()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    def run() -> None:
        try:
            asyncio.run(serve())
        except BaseException as exc:  # the stop's own failure: raised in the test's thread below
            failed.append(exc)
            started.set()

    thread = threading.Thread(target=run, name=f"served-app-{port}", daemon=True)
    thread.start()
    started.wait(timeout=120)
    if failed or not started.is_set():
        thread.join(timeout=30)
        raise RuntimeError(f"the application did not start on port {port}") from (failed[0] if failed else None)
    try:
        yield ServedApp(port)
    finally:
        running["loop"].call_soon_threadsafe(running["stop"].set)
        thread.join(timeout=60)
        assert not thread.is_alive(), f"the application on port {port} did not stop within 60 s"
        if failed:
            raise failed[0]
