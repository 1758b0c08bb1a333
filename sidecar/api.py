"""Agent-facing memory routes: search, status, reindex, health."""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any

import structlog
from aiohttp import web

from sidecar.appkeys import CREW_PROXY, QUEUE, SETTINGS, TIERS, WATCHERS
from sidecar.edge import json_answer, json_bytes, read_json_object
from sidecar.embed_batcher import embed_status
from sidecar.errors import BadRequest, EngineUnavailable, Forbidden, SidecarError
from sidecar.fast_http import Answer
from sidecar.index import Cancelled
from sidecar.memory_ops import search_memory, search_memory_now
from sidecar.metrics import METRICS, observe_reindex
from sidecar.search import parse_search
from sidecar.tier import Tier

__all__ = ["fast_search", "routes", "tier_for"]

log = structlog.get_logger("sidecar.api")
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
        raise EngineUnavailable("this agent has no crew tier (role solo)", code="no_crew_tier")
    raise Forbidden("only the crew lead indexes the crew tier; ask the lead's sidecar", code="not_lead")


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    return web.json_response(
        {"status": "ok", "role": request.app[SETTINGS].role, "tiers": sorted(request.app[TIERS].keys())}
    )


@routes.post("/memory/search")
async def search(request: web.Request) -> web.Response:
    return json_answer(await search_memory(request.app, await read_json_object(request)))


def fast_search(app: web.Application) -> Answer:
    """The search route for the fast path (``sidecar.fast_http``), agent scope only: the answer's
    bytes; the rest of the search as an awaitable when it has to wait (a thread, ``after_seq``);
    None for a client mistake or a failure, whose answer the route gives (a search only reads: it
    runs again). Crew scopes go to the route at once: a lead that is down or hangs must cost one
    wait, not two."""
    metrics = app[METRICS]

    def answer(body: bytes) -> bytes | Awaitable[bytes | None] | None:
        started = time.perf_counter()
        parsed = parse_search(body)
        if parsed is None or parsed[1].scope != "agent":
            return None
        obj, req = parsed
        out = search_memory_now(app, req)
        if out is None:
            return waiting(obj, started)
        metrics.observe_request("POST", "/memory/search", 200, time.perf_counter() - started)
        return json_bytes(out)

    async def waiting(obj: dict[str, Any], started: float) -> bytes | None:
        try:
            out = await search_memory(app, obj)
        except SidecarError:
            return None
        metrics.observe_request("POST", "/memory/search", 200, time.perf_counter() - started)
        return json_bytes(out)

    return answer


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

    def client_gone() -> bool:
        transport = request.transport
        return transport is None or transport.is_closing()

    try:
        result = await tier.rebuild(client_gone)
    except Cancelled:
        log.info("index.reindex_cancelled", tier=tier.name)
        raise SidecarError(
            "reindex stopped (client gone or shutting down); the previous index stays in service",
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
