"""The episodic journal over HTTP, and its lifecycle in the app (one cleanup_ctx).

Routes: ``POST /journal``, ``GET /journal``, ``POST /episodic/recall``, ``GET /memory/health``
(latest snapshot, never recomputed) and ``POST /memory/health`` (recompute now).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import structlog
from aiohttp import web

from sidecar.episodic.entry import JournalEntry, invalid, require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.indexer import DailyJob, Indexer
from sidecar.episodic.maintenance import decay_and_reinforce
from sidecar.episodic.nudges import Nudger
from sidecar.episodic.query import Query
from sidecar.episodic.recall import run_recall
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import JournalStore
from sidecar.errors import NotFound
from sidecar.http.jsonio import read_json_object
from sidecar.keys import EMBEDDER, SETTINGS

__all__ = [
    "DEFAULT_WORKSPACE",
    "INDEXER",
    "JOURNAL",
    "JOURNAL_FILE",
    "NUDGER",
    "daily_job",
    "record_memory_updated",
    "setup_episodic",
]

log = structlog.get_logger(__name__)
#: Workspace of ``memory.updated`` entries written before the agent journaled anything itself.
DEFAULT_WORKSPACE = "default"
JOURNAL: web.AppKey[JournalStore] = web.AppKey("episodic_journal")
INDEXER: web.AppKey[Indexer] = web.AppKey("episodic_indexer")
NUDGER: web.AppKey[Nudger] = web.AppKey("episodic_nudger")
_MAX_LIST = 100


def setup_episodic(app: web.Application) -> None:
    """Register the journal's cleanup_ctx (store + indexer) and its routes on ``app``."""
    app.cleanup_ctx.append(_episodic_ctx)
    app.router.add_post("/journal", _post_journal)
    app.router.add_get("/journal", _get_journal)
    app.router.add_post("/episodic/recall", _post_recall)
    app.router.add_get("/memory/health", _get_health)
    app.router.add_post("/memory/health", _post_health)


def daily_job(store: JournalStore) -> DailyJob:
    """Decay-and-reinforce, then a health snapshot of every workspace (the Indexer runs it daily)."""

    async def run(now: datetime) -> None:
        await decay_and_reinforce(store, now)
        for workspace_id in await store.workspaces():
            await compute_health(store, workspace_id, None, now)

    return run


async def record_memory_updated(app: web.Application, path: str, tier: str, seq: int) -> str | None:
    """Journal a ``memory.updated`` entry for a durable memory write (the write queue calls this).

    The entry goes to the workspace and agent of the newest entry the agent journaled (one sidecar
    serves one agent), or to the default workspace with no agent before it has journaled anything;
    it resets the agent's nudge count. Returns the entry id, or None when the
    journal is not running.
    """
    store = app.get(JOURNAL)
    if store is None:
        return None
    entry = JournalEntry(
        workspace_id=DEFAULT_WORKSPACE,
        entry_type="memory.updated",
        summary=f"memory updated: {tier} {path}",
        payload={"path": path, "tier": tier, "seq": seq},
    )
    return (await store.append(entry, as_latest=True)).id


async def _episodic_ctx(app: web.Application) -> AsyncIterator[None]:
    store = await SqliteJournalStore.open(app[SETTINGS].memory_dir / JOURNAL_FILE)
    indexer = Indexer(store, app.get(EMBEDDER), daily=daily_job(store))
    try:
        app[JOURNAL] = store
        app[INDEXER] = indexer
        app[NUDGER] = Nudger(store)
        await indexer.start()
        log.info("episodic.started", path=str(store.path), embedder=app.get(EMBEDDER) is not None)
        yield
    finally:
        await indexer.stop()
        await store.aclose()


async def _post_journal(request: web.Request) -> web.Response:
    entry = JournalEntry.from_json(await read_json_object(request))
    stored = await request.app[JOURNAL].append(entry)
    if stored.embeddable:
        request.app[INDEXER].notify()
    return web.json_response({"id": stored.id, "seq": stored.seq, "embeddable": stored.embeddable}, status=201)


async def _get_journal(request: web.Request) -> web.Response:
    workspace_id = _workspace(request)
    limit = _int_param(request, "limit", 20, 1, _MAX_LIST)
    q = request.query.get("q", "")
    store = request.app[JOURNAL]
    entries = await store.search(q, workspace_id, limit) if q.strip() else await store.recent(workspace_id, limit)
    return web.json_response({"entries": [e.to_json() for e in entries]})


async def _post_recall(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    hybrid = body.pop("hybrid", False)
    if not isinstance(hybrid, bool):
        raise invalid("hybrid", "hybrid must be true or false")
    query = Query.from_json(body)
    outcome = await run_recall(request.app[JOURNAL], request.app.get(EMBEDDER), query, hybrid=hybrid)
    payload: dict[str, Any] = {"hits": [h.to_json() for h in outcome.hits], "hybrid": hybrid, "dense": outcome.dense}
    return web.json_response(payload)


async def _get_health(request: web.Request) -> web.Response:
    workspace_id, crew_id = _workspace(request), _crew(request)
    snapshot = await latest_health(request.app[JOURNAL], workspace_id, crew_id)
    if snapshot is None:
        raise NotFound(f"no health snapshot for workspace {workspace_id}; POST /memory/health?recompute=1")
    return web.json_response(snapshot.to_json())


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
