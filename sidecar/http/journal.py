"""The episodic journal's routes: ``POST /journal``, ``GET /journal``, ``POST /episodic/recall``,
``GET /memory/health`` (latest snapshot, never recomputed) and ``POST /memory/health`` (recompute)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from sidecar.episodic.entry import JournalEntry, invalid, require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.lifecycle import INDEXER, JOURNAL
from sidecar.episodic.query import Query
from sidecar.episodic.recall import run_recall
from sidecar.errors import NotFound
from sidecar.http.jsonio import read_json_object
from sidecar.index.query import terms
from sidecar.index.snippet import mark_terms, query_tokens
from sidecar.keys import EMBEDDER

__all__ = ["routes"]

routes = web.RouteTableDef()
_MAX_LIST = 100


@routes.post("/journal")
async def _post_journal(request: web.Request) -> web.Response:
    entry = JournalEntry.from_json(await read_json_object(request))
    stored = await request.app[JOURNAL].append(entry)
    if stored.embeddable:
        request.app[INDEXER].notify()
    return web.json_response({"id": stored.id, "seq": stored.seq, "embeddable": stored.embeddable}, status=201)


@routes.get("/journal")
async def _get_journal(request: web.Request) -> web.Response:
    workspace_id = _workspace(request)
    limit = _int_param(request, "limit", 20, 1, _MAX_LIST)
    q = request.query.get("q", "")
    store = request.app[JOURNAL]
    entries = await store.search(q, workspace_id, limit) if q.strip() else await store.recent(workspace_id, limit)
    return web.json_response({"entries": [e.to_json() for e in entries]})


@routes.post("/episodic/recall")
async def _post_recall(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    hybrid = body.pop("hybrid", False)
    if not isinstance(hybrid, bool):
        raise invalid("hybrid", "hybrid must be true or false")
    query = Query.from_json(body)
    outcome = await run_recall(request.app[JOURNAL], request.app.get(EMBEDDER), query, hybrid=hybrid)
    tokens = query_tokens(terms(query.query_text))
    hits = [{**h.to_json(), "highlights": [[a, b] for a, b in mark_terms(h.summary, tokens)]} for h in outcome.hits]
    payload: dict[str, Any] = {"hits": hits, "hybrid": hybrid, "dense": outcome.dense}
    return web.json_response(payload)


@routes.get("/memory/health")
async def _get_health(request: web.Request) -> web.Response:
    workspace_id, crew_id = _workspace(request), _crew(request)
    snapshot = await latest_health(request.app[JOURNAL], workspace_id, crew_id)
    if snapshot is None:
        raise NotFound(f"no health snapshot for workspace {workspace_id}; POST /memory/health?recompute=1")
    return web.json_response(snapshot.to_json())


@routes.post("/memory/health")
async def _post_health(request: web.Request) -> web.Response:
    if request.query.get("recompute", "1").lower() not in ("1", "true", "yes"):
        raise invalid("recompute", "POST /memory/health recomputes; recompute must be 1 (GET reads the latest)")
    snapshot = await compute_health(request.app[JOURNAL], _workspace(request), _crew(request))
    return web.json_response(snapshot.to_json())


def _workspace(request: web.Request) -> str:
    value = require_id("workspace_id", request.query.get("workspace_id"))
    assert value is not None  # require_id raises instead of returning None when not optional
    return value


def _crew(request: web.Request) -> str | None:
    return require_id("crew_id", request.query.get("crew_id"), optional=True)


def _int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid(name, f"{name} must be an integer in {low}..{high}") from None
    if not low <= value <= high:
        raise invalid(name, f"{name} must be an integer in {low}..{high}")
    return value
