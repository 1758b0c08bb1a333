"""The index routes: ``GET /healthz``, ``GET /memory/status`` and ``POST /memory/reindex``."""

from __future__ import annotations

from typing import Any, cast

import structlog
from aiohttp import web

from sidecar.contract import HealthAnswer, Role
from sidecar.errors import BadRequest, ClientClosed, EngineUnavailable, Forbidden, NoCrewTier
from sidecar.http.connections import client_done
from sidecar.http.metrics import observe_reindex
from sidecar.index.tier import Tier
from sidecar.index.tier_index import Cancelled
from sidecar.keys import CREW_PROXY, QUEUE, SETTINGS, TIERS, WATCHERS
from sidecar.retrieval.batcher import embed_status

__all__ = ["routes", "tier_for"]

log = structlog.get_logger("sidecar.http.status")
routes = web.RouteTableDef()


def _scope_param(request: web.Request) -> str:
    scope = request.query.get("scope", "agent")
    if scope not in ("agent", "crew"):
        raise BadRequest("scope must be agent or crew", code="invalid_scope")
    return scope


def tier_for(app: web.Application, scope: str) -> Tier:
    """The tier this process indexes for ``scope``, or a 503 saying why there is none."""
    tiers = app[TIERS]
    if scope in tiers:
        return tiers[scope]
    if app[SETTINGS].role == "solo":
        raise NoCrewTier("this agent has no crew tier (role solo)")
    raise Forbidden("only the crew lead indexes the crew tier; ask the lead's sidecar", code="not_lead")


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    answer: HealthAnswer = {
        "status": "ok",
        "role": cast(Role, request.app[SETTINGS].role),
        "tiers": sorted(request.app[TIERS].keys()),
    }
    return web.json_response(answer)


@routes.get("/memory/status")
async def status(request: web.Request) -> web.Response:
    scope = _scope_param(request)
    proxy = request.app[CREW_PROXY]
    if scope == "crew" and proxy is not None:
        return web.json_response(await proxy.status())
    tier = tier_for(request.app, scope)
    return web.json_response(await _status(request.app, tier))


@routes.post("/memory/reindex")
async def reindex(request: web.Request) -> web.Response:
    tier = tier_for(request.app, _scope_param(request))

    try:
        result = await tier.rebuild(lambda: client_done(request))
    except Cancelled:
        gone = client_done(request)
        log.info("index.reindex_cancelled", tier=tier.name, reason="client gone" if gone else "shutting down")
        if gone:  # nobody reads this answer; it is the client's doing, not a server error
            raise ClientClosed("reindex stopped: the client closed the connection; the previous index stays") from None
        raise EngineUnavailable(
            "reindex stopped: the sidecar is shutting down; the previous index stays in service",
            code="reindex_cancelled",
        ) from None
    observe_reindex(request.app, tier.name, "rebuild", result.duration_ms / 1000)
    log.info("index.rebuilt", tier=tier.name, files=len(result.added), duration_ms=round(result.duration_ms, 1))
    return web.json_response(await _status(request.app, tier))


async def _status(app: web.Application, tier: Tier) -> dict[str, Any]:
    body = await tier.status()
    body.update(embed_status(app, tier.name))
    body["queue"] = {**app[QUEUE].state(), "depth": app[QUEUE].pending, "errors": app[QUEUE].errors}
    watcher = next((w for w in app[WATCHERS] if w.tier == tier.name), None)
    body["watcher"] = watcher.status() if watcher is not None else None
    return body
