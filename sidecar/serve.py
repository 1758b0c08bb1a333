"""Run the sidecar until SIGTERM or SIGINT, then shut down in order (nothing lost)."""

from __future__ import annotations

import asyncio
import signal
import time

import structlog
from aiohttp import web

from sidecar.app import create_app
from sidecar.edge_guard import server_limits
from sidecar.logs import configure_logging
from sidecar.settings import Settings

__all__ = ["run", "serve"]

log = structlog.get_logger("sidecar.serve")


def serve(settings: Settings) -> int:
    """Blocking entry point for ``memory-sidecar serve``; returns the exit status."""
    configure_logging(settings.log_format, settings.log_level)
    try:
        asyncio.run(run(settings))
    except OSError as exc:
        log.error("sidecar.start_failed", error=str(exc))
        return 1
    return 0


async def run(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """Serve until ``stop`` is set (or a signal arrives)."""
    started = time.perf_counter()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(
        create_app(settings), handle_signals=False, access_log=None, shutdown_timeout=10, **server_limits(settings)
    )
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.host, settings.port).start()
        log.info(
            "sidecar.ready",
            host=settings.host,
            port=settings.port,
            role=settings.role,
            memory_dir=str(settings.memory_dir),
            startup_ms=round((time.perf_counter() - started) * 1000, 1),
        )
        await stop.wait()
        log.info("sidecar.stopping")
    finally:
        await runner.cleanup()
        log.info("sidecar.stopped")
