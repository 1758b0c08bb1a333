"""Run the sidecar until SIGTERM or SIGINT, then shut down in order (nothing lost).

Start-up is ordered for the time to ready. The tier indexes start opening (integrity check and
reconcile: SQLite work on each tier's writer thread, with the GIL released) before the HTTP stack
is imported, so the two overlap instead of adding up; the server still answers only once every
index is open and checked. glibc's malloc is told to keep few arenas before any thread exists, and
memory the sidecar does not need while idle is handed back once it is (``IdleRelease``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import time
from typing import TYPE_CHECKING

import structlog

from sidecar.durable import sweep_temp_files
from sidecar.heap import release_free_memory, tune_malloc
from sidecar.logs import configure_logging
from sidecar.settings import Settings
from sidecar.tier import Tier

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["IdleRelease", "OpeningTiers", "run", "serve"]

log = structlog.get_logger("sidecar.serve")


class IdleRelease:
    """Once the sidecar has been idle for ``after`` seconds (no response since), hand back memory it
    holds but does not need while idle: each tier writer's SQLite page cache (``PRAGMA
    shrink_memory``, on the writer thread, in order with its writes; the integrity check at start
    fills it) and glibc's free heap pages (``malloc_trim``). Armed at start and by every response;
    a steady stream of requests never triggers it."""

    def __init__(self, tiers: dict[str, Tier], after: float = 0.25) -> None:
        self.tiers = tiers
        self.after = after
        self.releases = 0
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.touch()

    def touch(self) -> None:
        """Something happened: release only ``after`` seconds from now."""
        self._last = self._loop.time()
        if self._timer is None and not self._closed:
            self._timer = self._loop.call_at(self._last + self.after, self._due)

    def _due(self) -> None:
        self._timer = None
        if self._loop.time() < self._last + self.after:
            self._timer = self._loop.call_at(self._last + self.after, self._due)
        elif self._task is None or self._task.done():
            self._task = self._loop.create_task(self._release(), name="idle-release")

    async def _release(self) -> None:
        try:
            for tier in self.tiers.values():
                await tier.write_with(_shrink_memory)
                await asyncio.to_thread(tier.index.release_reader_memory)
            await asyncio.to_thread(release_free_memory)
            self.releases += 1
        except Exception:  # a tier failing is reported by the requests that use it
            log.warning("sidecar.release_failed", exc_info=True)

    async def aclose(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            await self._task


def _shrink_memory(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA shrink_memory")


def serve(settings: Settings) -> int:
    """Blocking entry point for ``memory-sidecar serve``; returns the exit status."""
    tune_malloc()
    # numpy's OpenBLAS starts a worker thread per core at import; on the sidecar's matrix-vector
    # products (dense scans, cosines) one thread does, and the import is ~25 ms CPU cheaper without
    # them (on a busy box, more wall time than that). An explicit setting in the environment wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    configure_logging(settings.log_format, settings.log_level)
    try:
        asyncio.run(run(settings))
    except OSError as exc:
        log.error("sidecar.start_failed", error=str(exc))
        return 1
    return 0


class OpeningTiers:
    """The tiers this process indexes (``agent``; ``crew`` too on a lead), each opening on its own
    writer thread from the moment this is made (inside a running loop): temp files left by a crash
    are swept first, then the index is opened, checked and reconciled with the files."""

    def __init__(self, settings: Settings) -> None:
        self.tiers = {"agent": Tier("agent", settings.memory_dir)}
        if settings.role == "lead":
            self.tiers["crew"] = Tier("crew", settings.crew_dir)
        self._taken = False
        self._opening = [asyncio.ensure_future(self._open(tier)) for tier in self.tiers.values()]

    @staticmethod
    async def _open(tier: Tier) -> None:
        swept = sweep_temp_files(tier.root)
        if swept:
            log.warning("write.temp_swept", tier=tier.name, files=swept)
        integrity = await tier.open(postings=False)  # built once the server answers: see run()
        log.info("index.opened", tier=tier.name, dir=str(tier.root), integrity=integrity)

    async def wait(self) -> dict[str, Tier]:
        """Every tier, open: from now on the caller closes them. If one failed, the others are
        closed again and its error is raised."""
        self._taken = True
        outcomes = await asyncio.gather(*self._opening, return_exceptions=True)
        failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if failures:
            for tier, outcome in zip(self.tiers.values(), outcomes, strict=True):
                if not isinstance(outcome, BaseException):
                    await tier.close()
            raise failures[0]
        return self.tiers

    async def close_if_unused(self) -> None:
        """Close the tiers if no app took them (it failed before its first context ran)."""
        if self._taken:
            return
        with contextlib.suppress(Exception):  # the start-up error being raised matters more
            for tier in (await self.wait()).values():
                await tier.close()


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (or a signal arrives)."""
    started = time.perf_counter()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    opening = OpeningTiers(settings)
    await asyncio.sleep(0)  # the opening tasks hand their index work to the writer threads now
    runner: web.AppRunner | None = None
    try:
        runner = _runner(settings, opening)  # imports the HTTP stack meanwhile
        await runner.setup()
        await _site(runner, settings).start()
        log.info(
            "sidecar.ready",
            host=settings.host,
            port=settings.port,
            role=settings.role,
            memory_dir=str(settings.memory_dir),
            startup_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        for tier in opening.tiers.values():
            tier.start_postings()  # after ready: the build would compete with start-up for the GIL
        await stop.wait()
        log.info("sidecar.stopping")
    finally:
        if runner is not None:
            await runner.cleanup()  # also after a failed setup: closes the contexts that started
        await opening.close_if_unused()
        log.info("sidecar.stopped")


def _runner(settings: Settings, opening: OpeningTiers) -> web.AppRunner:
    from aiohttp import web

    from sidecar.app import create_app
    from sidecar.edge_guard import server_limits

    app = create_app(settings, tiers=opening)
    return web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=10, **server_limits(settings))


def _site(runner: web.AppRunner, settings: Settings) -> web.TCPSite:
    from aiohttp import web

    return web.TCPSite(runner, settings.host, settings.port, backlog=128)
