"""``create_app(settings)``: the one way to build the sidecar's HTTP application.

The application holds the open ``Sidecar`` under one key (``sidecar.http.state.SIDECAR``): one
``cleanup_ctx`` enters the composition root (``sidecar.server.compose.open_sidecar``), which
opens every part in order and closes them in reverse. Each background task has a ``cleanup_ctx``
of its own after it, stopped before the sidecar closes: handing back memory while idle, the
scanner's warm-up, the crew listener on a lead, the consolidation schedule and MCP's watch of the
tool list.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.crew.listener import crew_listener_ctx
from sidecar.http import routes
from sidecar.http.consolidate import consolidate_schedule_ctx
from sidecar.http.errors import error_middleware
from sidecar.http.guards import body_deadline, host_origin_guard
from sidecar.http.metrics import METRICS, setup_metrics
from sidecar.http.policy import policy_middleware
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.mcp import server as mcp_server
from sidecar.palace.agent_settings import AgentSettings, load_agent_settings
from sidecar.palace.agent_settings import apply as apply_agent_settings
from sidecar.server.compose import Observers, open_sidecar
from sidecar.server.lifecycle import IdleRelease, OpeningTiers
from sidecar.settings import Settings
from sidecar.tasks import stop_task
from sidecar.ui import routes as ui

__all__ = ["HANDLERS", "IDLE_RELEASE", "create_app"]

log = structlog.get_logger("sidecar.server.app")
# Tiers whose opening started before the app was built (``memory-sidecar serve`` does that).
_OPENING: web.AppKey[OpeningTiers] = web.AppKey("opening_tiers")
_AGENT_SETTINGS = web.AppKey("agent_settings", AgentSettings)
IDLE_RELEASE: web.AppKey[IdleRelease] = web.AppKey("idle_release")

#: Every operation's handler, by the registry's name: the HTTP modules', MCP's and the memory browser's.
HANDLERS: Mapping[str, Handler] = {
    **routes.HANDLERS,
    "tools": mcp_server.memory_tools,
    "mcp": mcp_server.mcp_endpoint,
    "mcp_close": mcp_server.mcp_endpoint,
    "mcp_stream": mcp_server.mcp_endpoint,
    "ui": ui.files,
    "ui_file": ui.file,
    "ui_search": ui.search,
    "ui_memories": ui.memories,
    "ui_memory": ui.memory,
    "ui_journal": ui.journal,
    "ui_graph": ui.graph,
    "ui_health": ui.health,
    "ui_block": ui.block,
}


def create_app(settings: Settings, tiers: OpeningTiers | None = None) -> web.Application:
    """Build the agent-facing application for ``settings`` (nothing starts until it runs).

    ``tiers``: the tiers, already opening (see sidecar.server.serve); by default they open when it starts.
    """
    # Refuse DNS-rebinding requests (Host, Origin) and bodies that trickle in, before anything else.
    # Then the registry's rules (memory off, unknown fields), the same for every route.
    middlewares = [host_origin_guard(settings), body_deadline(), error_middleware, policy_middleware]
    # The agent's own settings file in its tier dir (memory.toml or settings.md) goes over the
    # environment and flags; a bad file is reported, never fatal.
    found = load_agent_settings(settings.memory_dir)
    for problem in found.errors:
        log.warning("agent_settings.invalid", problem=problem)
    settings = apply_agent_settings(settings, found)
    app = web.Application(middlewares=middlewares, client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[_AGENT_SETTINGS] = found
    if tiers is not None:
        app[_OPENING] = tiers
    # The sidecar first; each background task after it, so each stops before the sidecar closes.
    app.cleanup_ctx.extend([_sidecar_ctx, _idle_release_ctx, _flags_ctx, crew_listener_ctx, consolidate_schedule_ctx])
    app.on_response_prepare.append(_touch_idle_release)
    app.on_shutdown.append(_stop_long_work)
    # One route per operation of the registry, by walking it: a route cannot exist without its
    # operation. The read-only memory browser's pages (/ui) only when it is on.
    routes.add_operations(app.router, HANDLERS, ui=settings.ui)
    mcp_server.setup(app)  # MCP sessions and the watch that tells them the tool list changed
    setup_metrics(app)  # its middleware goes outermost, so it sees the final status of every request
    return app


async def _sidecar_ctx(app: web.Application) -> AsyncIterator[None]:
    """The sidecar, open while the application runs (the metrics observe its searches and index updates)."""
    found = app.get(METRICS)
    observers = Observers(
        search=found.observe_search if found is not None else None,
        applied=found.observe_reindex if found is not None else None,
    )
    async with open_sidecar(
        app[SETTINGS], agent_settings=app[_AGENT_SETTINGS], opening=app.get(_OPENING), observers=observers
    ) as sidecar:
        app[SIDECAR] = sidecar
        yield


async def _idle_release_ctx(app: web.Application) -> AsyncIterator[None]:
    sidecar = app[SIDECAR]
    release = IdleRelease(sidecar.tiers)
    release.others.extend(sidecar.releases)  # the journal's and the graph's page caches
    app[IDLE_RELEASE] = release
    try:
        yield
    finally:
        await release.aclose()


async def _touch_idle_release(request: web.Request, response: web.StreamResponse) -> None:
    release = request.app.get(IDLE_RELEASE)
    if release is not None:
        release.touch()


async def _flags_ctx(app: web.Application) -> AsyncIterator[None]:
    """Scan the tiers' files for the injection scanner's verdicts in the background, so the first
    search that shows a file does not pay for it; on the way out, remember the files found clean
    (``sidecar.retrieval.flags.CLEAN_FILES``), so the next start scans only what changed."""
    sidecar = app[SIDECAR]
    roots = {name: tier.root for name, tier in sidecar.tiers.items()} if sidecar.settings.memory_enabled else {}
    flags = sidecar.search.flags
    task = asyncio.create_task(flags.warm(roots), name="flag-warm")
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            await stop_task(task)
        with contextlib.suppress(Exception):
            await flags.remember()


async def _stop_long_work(app: web.Application) -> None:
    """On SIGTERM, a running full reindex stops and rolls back; the previous index stays.
    Queued reindex work is not dropped: the queue drains when the sidecar closes."""
    sidecar = app.get(SIDECAR)
    if sidecar is None:
        return
    log.info("sidecar.shutdown", queue_pending=sidecar.queue.pending)
    for tier in sidecar.tiers.values():
        tier.stopping.set()
