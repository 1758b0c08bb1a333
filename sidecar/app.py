"""``create_app(settings)``: the one way to build the sidecar's HTTP application.

Each resource is owned by one ``cleanup_ctx`` (started in order, stopped in reverse, and only
stopped if it started): the tiers and their indexes, then the search service over them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from sidecar import api
from sidecar.appkeys import SEARCH, SETTINGS, TIERS
from sidecar.edge import error_middleware
from sidecar.search import SearchService
from sidecar.settings import Settings
from sidecar.tier import Tier

__all__ = ["create_app"]

log = structlog.get_logger("sidecar.app")


def create_app(settings: Settings) -> web.Application:
    """Build the agent-facing application for ``settings`` (nothing starts until it runs)."""
    app = web.Application(middlewares=[error_middleware], client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app.cleanup_ctx.append(_tiers_ctx)
    app.on_shutdown.append(_stop_long_work)
    app.router.add_routes(api.routes)
    return app


async def _tiers_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    tiers = {"agent": Tier("agent", settings.memory_dir)}
    if settings.role == "lead":
        tiers["crew"] = Tier("crew", settings.crew_dir)
    opened: list[Tier] = []
    try:
        for tier in tiers.values():
            integrity = await tier.open()
            opened.append(tier)
            log.info("index.opened", tier=tier.name, dir=str(tier.root), integrity=integrity)
        app[TIERS] = tiers
        app[SEARCH] = SearchService(tiers["agent"], crew_tier=tiers.get("crew"))
        yield
    finally:
        for tier in opened:
            await tier.close()


async def _stop_long_work(app: web.Application) -> None:
    """On SIGTERM, a running full reindex stops and rolls back; the previous index stays."""
    for tier in app[TIERS].values():
        tier.stopping.set()
