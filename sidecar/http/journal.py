"""The episodic journal's routes: ``POST /journal``, ``GET /journal``, ``POST /episodic/recall``,
``GET /memory/health`` (latest snapshot, never recomputed), ``POST /memory/health`` (recompute)
and ``POST /memory/session`` (a finished session as an episodic summary, spec 002).

A ``summary.generated`` entry naming a ``source_id`` (in its payload or refs) is stored once
however often it is posted: its id comes from the source id, and a second post answers the first
entry (200, ``replayed``)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from aiohttp import web

from sidecar.clock import utcnow
from sidecar.episodic.entry import MAX_SUMMARY_CHARS, JournalEntry, invalid, require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.lifecycle import INDEXER, JOURNAL
from sidecar.episodic.query import Query
from sidecar.episodic.recall import run_recall
from sidecar.episodic.session import SUMMARY_ENTRY_TYPE, SessionRequest, source_entry_id, summary_entry
from sidecar.errors import Conflict, NotFound
from sidecar.http.jsonio import read_json_object
from sidecar.index.query import terms
from sidecar.index.snippet import mark_terms, query_tokens
from sidecar.keys import EMBEDDER, SETTINGS
from sidecar.settings import Settings

__all__ = ["routes", "session_op"]

routes = web.RouteTableDef()
_MAX_LIST = 100


@routes.post("/journal")
async def _post_journal(request: web.Request) -> web.Response:
    entry = JournalEntry.from_json(await read_json_object(request))
    source = _source_id(entry)
    if source is not None and entry.id is None:
        entry = replace(entry, id=source_entry_id(entry.workspace_id, source))
    answer, status = await _append_once(request.app, entry, replay=source is not None)
    return web.json_response(answer, status=status)


def _source_id(entry: JournalEntry) -> str | None:
    if entry.entry_type != SUMMARY_ENTRY_TYPE:
        return None
    for where in (entry.payload, entry.refs):
        value = where.get("source_id")
        if isinstance(value, str) and value.strip():
            return value
    return None


async def _append_once(app: web.Application, entry: JournalEntry, *, replay: bool) -> tuple[dict[str, Any], int]:
    """Append ``entry``. With ``replay`` (its id comes from its source), an id already taken means
    the same source was posted before: the stored entry is the answer (200). Else a taken id is a
    409, as it always was."""
    store = app[JOURNAL]
    try:
        stored = await store.append(entry)
    except Conflict:
        found = await store.get(entry.workspace_id, entry.id or "") if replay else None
        if found is None:
            raise
        return {"id": found.id, "seq": found.seq, "embeddable": found.embeddable, "replayed": True}, 200
    if stored.embeddable:
        app[INDEXER].notify()
    return {"id": stored.id, "seq": stored.seq, "embeddable": stored.embeddable}, 201


# -- session summaries -----------------------------------------------------------------------------
#: A model summary of a session must answer within this many seconds (spec 002: 30), else the
#: extractive one is used.
SESSION_SUMMARY_TIMEOUT_S = 30.0
SESSION_SUMMARY_CHARS = 1500


async def session_op(app: web.Application, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A finished session as one ``summary.generated`` entry: its compaction summary when given,
    else a summary of its messages (extractive; a chat model's with ``--summariser``, the
    extractive one on any failure). Idempotent on ``source_id``."""
    settings = app[SETTINGS]
    req = SessionRequest.from_json(body, settings.workspace_id, settings.agent_id)
    store = app[JOURNAL]
    found = await store.get(req.workspace_id, source_entry_id(req.workspace_id, req.source_id))
    if found is not None:
        return _session_answer(found.id, found.seq, found.payload, replayed=True), 200
    if req.summary is not None:
        text, engine = req.summary, "given"
    else:
        text, engine = await _summarise(settings, req)
    entry = summary_entry(
        req, text, engine, now=utcnow(), ttl_days=settings.journal_compact_days or 90.0, max_chars=MAX_SUMMARY_CHARS
    )
    answer, status = await _append_once(app, entry, replay=True)
    return _session_answer(answer["id"], answer["seq"], entry.payload, replayed=status == 200), status


def _session_answer(entry_id: str, seq: int, payload: Any, *, replayed: bool) -> dict[str, Any]:
    keys = ("source_id", "session_id", "l0_abstract", "key_topics", "engine")
    return {"id": entry_id, "seq": seq, "replayed": replayed, **{k: payload.get(k) for k in keys}}


async def _summarise(settings: Settings, req: SessionRequest) -> tuple[str, str]:
    """The session's messages summarised: by the configured summariser (a model falls back to the
    extractive summary on its own on any failure), within SESSION_SUMMARY_TIMEOUT_S."""
    from sidecar.consolidate.extractive import SourceItem
    from sidecar.consolidate.summarise import extractive_summary, make_summariser

    items = [
        SourceItem(f"m{i}", content)
        for i, (role, content) in enumerate(req.messages)
        if role in ("user", "assistant") and content.strip()
    ] or [SourceItem(f"m{i}", content) for i, (_, content) in enumerate(req.messages) if content.strip()]
    if not items:
        raise invalid("messages", "the session's messages hold no text to summarise")
    kind = settings.summariser
    base = settings.openai_base_url if kind == "openai" else settings.ollama_host
    summariser = make_summariser(
        kind, base, settings.summariser_model, settings.openai_api_key, SESSION_SUMMARY_TIMEOUT_S
    )
    try:
        summary = await asyncio.wait_for(summariser.summarise(items, SESSION_SUMMARY_CHARS), SESSION_SUMMARY_TIMEOUT_S)
    except TimeoutError:
        summary = await extractive_summary(items, SESSION_SUMMARY_CHARS, fallback_reason="timeout")
    finally:
        await summariser.aclose()
    return summary.text, summary.engine


@routes.post("/memory/session")
async def _session(request: web.Request) -> web.Response:
    answer, status = await session_op(request.app, await read_json_object(request))
    return web.json_response(answer, status=status)


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
