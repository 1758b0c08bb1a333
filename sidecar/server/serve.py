"""Run the sidecar until SIGTERM or SIGINT, then shut down in order (nothing lost).

Start-up is ordered for the time to ready. The tier indexes start opening (integrity check and
reconcile: SQLite work on each tier's writer thread, with the GIL released) before the HTTP stack
is imported, so the two overlap instead of adding up; the server still answers only once every
index is open and checked. glibc's malloc is told to keep few arenas before any thread exists, and
memory the sidecar does not need while idle is handed back once it is (``lifecycle.IdleRelease``).
A second sidecar on a memory dir that one already serves exits (status 1) before it touches the
dir (``lock.TierLock``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from sidecar.errors import TierLocked
from sidecar.heap import tune_malloc
from sidecar.logs import configure_logging
from sidecar.palace.agent_settings import apply as apply_agent_settings
from sidecar.palace.agent_settings import load_agent_settings
from sidecar.server.lifecycle import OpeningTiers
from sidecar.settings import Settings

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["run", "serve"]

log = structlog.get_logger("sidecar.server.serve")


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
    except TierLocked as exc:
        log.error("sidecar.start_failed", code=exc.code, error=exc.message)
        return 1
    return 0


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (or a signal arrives)."""
    started = time.perf_counter()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    _private_tier(settings.memory_dir)
    # The agent's own settings file can turn memory off: then the tiers open without being indexed.
    opening = OpeningTiers(apply_agent_settings(settings, load_agent_settings(settings.memory_dir)))
    await asyncio.sleep(0)  # the opening tasks hand their index work to the writer threads now
    runner: web.AppRunner | None = None
    try:
        runner = _runner(settings, opening)  # imports the HTTP stack meanwhile
        await runner.setup()
        await _site(runner, settings).start()
        if settings.allow_remote:
            log.warning(
                "sidecar.remote",
                host=settings.host,
                note="the agent API is served beyond loopback; every request must carry the API token",
            )
        log.info(
            "sidecar.ready",
            host=settings.host,
            port=settings.port,
            role=settings.role,
            memory_dir=str(settings.memory_dir),
            startup_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        for tier in opening.tiers.values() if opening.indexing else ():
            tier.start_postings()  # after ready: the build would compete with start-up for the GIL
        # What start-up made (modules, classes, the app: some 60k objects) lives as long as the
        # process. Frozen, the collector no longer walks it in each full collection, which held
        # the event loop for 10-30 ms of CPU, under whatever request was in flight.
        gc.freeze()
        await stop.wait()
        log.info("sidecar.stopping")
    finally:
        if runner is not None:
            await runner.cleanup()  # also after a failed setup: closes the contexts that started
        await opening.close_if_unused()
        log.info("sidecar.stopped")


def _runner(settings: Settings, opening: OpeningTiers) -> web.AppRunner:

    from sidecar.http.connections import SidecarRunner
    from sidecar.http.guards import server_limits
    from sidecar.server.app import create_app

    app = create_app(settings, tiers=opening)
    return SidecarRunner(app, handle_signals=False, access_log=None, shutdown_timeout=10, **server_limits(settings))


def _site(runner: web.AppRunner, settings: Settings) -> web.TCPSite:
    from aiohttp import web

    return web.TCPSite(runner, settings.host, settings.port, backlog=128)


def _private_tier(root: Path) -> None:
    """The agent's tier is its private memory: a dir others may read or enter (0755, made by an
    operator) is tightened to 0700 when this user owns it, and named in a warning otherwise."""
    try:
        st = root.stat()
    except FileNotFoundError:
        return  # made 0700 when the tier opens
    if not st.st_mode & 0o077:
        return
    mode = oct(st.st_mode & 0o777)
    if st.st_uid == os.getuid():
        root.chmod(0o700)
        log.warning("tier.mode_tightened", dir=str(root), was=mode, now="0o700")
    else:
        log.warning("tier.mode_open", dir=str(root), mode=mode, note="other users may read this memory")
