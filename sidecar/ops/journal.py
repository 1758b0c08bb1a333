"""The episodic journal's operations: append an entry (``POST /journal``), list or search entries
(``GET /journal``), recall (``POST /episodic/recall``), the health snapshot (``GET`` reads the
latest, never recomputed; ``POST`` recomputes) and a finished session as an episodic summary
(``POST /memory/session``).

A ``summary.generated`` entry naming a ``source_id`` (in its payload or refs) is stored once
however often it is posted: its id comes from the source id, and a second post answers the first
entry (200, ``replayed``)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from sidecar.clock import utcnow
from sidecar.episodic.entry import MAX_SUMMARY_CHARS, JournalEntry, invalid, require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.query import Query
from sidecar.episodic.recall import run_recall
from sidecar.episodic.session import SUMMARY_ENTRY_TYPE, SessionRequest, source_entry_id, summary_entry
from sidecar.errors import Conflict, NotFound
from sidecar.index.query import terms
from sidecar.index.snippet import mark_terms, query_tokens
from sidecar.ops.answers import (
    AppendAnswer,
    EntriesAnswer,
    HealthSnapshot,
    JournalEntryAnswer,
    RecallResponse,
    ReplayedAppend,
    SessionAnswer,
)
from sidecar.ops.sidecar import Sidecar
from sidecar.settings import Settings

__all__ = [
    "SESSION_SUMMARY_CHARS",
    "SESSION_SUMMARY_TIMEOUT_S",
    "EntriesList",
    "EntriesRecall",
    "HealthRequest",
    "append",
    "entries",
    "health",
    "recall",
    "recompute_health",
    "session",
    "session_request",
]

#: A model summary of a session must answer within this many seconds, else the
#: extractive one is used.
SESSION_SUMMARY_TIMEOUT_S = 30.0
SESSION_SUMMARY_CHARS = 1500


async def append(sc: Sidecar, entry: JournalEntry) -> tuple[AppendAnswer | ReplayedAppend, int]:
    """Append ``entry`` (``JournalEntry.from_json`` of a client's body): 201, or 200 with
    ``replayed`` for a summary whose source was posted before."""
    source = _source_id(entry)
    if source is not None and entry.id is None:
        entry = replace(entry, id=source_entry_id(entry.workspace_id, source))
    return await _append_once(sc, entry, replay=source is not None)


def _source_id(entry: JournalEntry) -> str | None:
    if entry.entry_type != SUMMARY_ENTRY_TYPE:
        return None
    for where in (entry.payload, entry.refs):
        value = where.get("source_id")
        if isinstance(value, str) and value.strip():
            return value
    return None


async def _append_once(sc: Sidecar, entry: JournalEntry, *, replay: bool) -> tuple[AppendAnswer | ReplayedAppend, int]:
    """Append ``entry``. With ``replay`` (its id comes from its source), an id already taken means
    the same source was posted before: the stored entry is the answer (200). Else a taken id is a
    409, as it always was."""
    store = sc.journal
    try:
        stored = await store.append(entry)
    except Conflict:
        found = await store.get(entry.workspace_id, entry.id or "") if replay else None
        if found is None:
            raise
        return {"id": found.id, "seq": found.seq, "embeddable": found.embeddable, "replayed": True}, 200
    if stored.embeddable:
        sc.indexer.notify()
    return {"id": stored.id, "seq": stored.seq, "embeddable": stored.embeddable}, 201


def session_request(settings: Settings, body: Mapping[str, Any]) -> SessionRequest:
    """A session request; its workspace and agent default to the sidecar's."""
    return SessionRequest.from_json(body, settings.workspace_id, settings.agent_id)


async def session(sc: Sidecar, req: SessionRequest) -> tuple[SessionAnswer, int]:
    """A finished session as one ``summary.generated`` entry: its compaction summary when given,
    else a summary of its messages (extractive; a chat model's with ``--summariser``, the
    extractive one on any failure). Idempotent on ``source_id``."""
    settings = sc.settings
    found = await sc.journal.get(req.workspace_id, source_entry_id(req.workspace_id, req.source_id))
    if found is not None:
        return _session_answer(found.id, found.seq, found.payload, replayed=True), 200
    if req.summary is not None:
        text, engine = req.summary, "given"
    else:
        text, engine = await _summarise(settings, req)
    entry = summary_entry(
        req, text, engine, now=utcnow(), ttl_days=settings.journal_compact_days or 90.0, max_chars=MAX_SUMMARY_CHARS
    )
    answer, status = await _append_once(sc, entry, replay=True)
    return _session_answer(answer["id"], answer["seq"], entry.payload, replayed=status == 200), status


def _session_answer(entry_id: str, seq: int, payload: Any, *, replayed: bool) -> SessionAnswer:
    keys = ("source_id", "session_id", "l0_abstract", "key_topics", "engine")
    return cast(SessionAnswer, {"id": entry_id, "seq": seq, "replayed": replayed, **{k: payload.get(k) for k in keys}})


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
        async with asyncio.timeout(SESSION_SUMMARY_TIMEOUT_S):
            summary = await summariser.summarise(items, SESSION_SUMMARY_CHARS)
    except TimeoutError:
        summary = await extractive_summary(items, SESSION_SUMMARY_CHARS, fallback_reason="timeout")
    finally:
        await summariser.aclose()
    return summary.text, summary.engine


#: The most entries ``GET /journal`` lists at once.
_MAX_LIST = 100


@dataclass(frozen=True, slots=True)
class EntriesList:
    """``GET /journal``: a workspace's newest entries (``limit`` of them), or those matching ``q``."""

    workspace_id: str
    q: str = ""
    limit: int = 20

    FIELDS = ("workspace_id", "limit", "q")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> EntriesList:
        """From a query string; 400 naming a missing or malformed workspace_id or limit."""
        limit = _int_param(query, "limit", 20, 1, _MAX_LIST)
        return cls(_workspace(query), query.get("q", ""), limit)


@dataclass(frozen=True, slots=True)
class HealthRequest:
    """``GET`` and ``POST /memory/health``: a workspace's health snapshot, of one crew or none."""

    workspace_id: str
    crew_id: str | None = None

    FIELDS = ("workspace_id", "crew_id")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> HealthRequest:
        """From a query string; 400 naming a missing or malformed workspace_id or crew_id."""
        return cls(_workspace(query), require_id("crew_id", query.get("crew_id"), optional=True))


def _workspace(query: Mapping[str, str]) -> str:
    value = require_id("workspace_id", query.get("workspace_id"))
    assert value is not None  # require_id raises instead of returning None when not optional
    return value


def _int_param(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid(name, f"{name} must be an integer in {low}..{high}") from None
    if not low <= value <= high:
        raise invalid(name, f"{name} must be an integer in {low}..{high}")
    return value


async def entries(sc: Sidecar, req: EntriesList) -> EntriesAnswer:
    """A workspace's newest entries, or those matching ``q``."""
    store, q = sc.journal, req.q
    if q.strip():
        found = await store.search(q, req.workspace_id, req.limit)
    else:
        found = await store.recent(req.workspace_id, req.limit)
    return {"entries": [cast(JournalEntryAnswer, e.to_json()) for e in found]}


@dataclass(frozen=True, slots=True)
class EntriesRecall:
    """``POST /episodic/recall``: a journal query (``Query``), by meaning alone or ``hybrid`` (fused with BM25)."""

    query: Query
    hybrid: bool = False

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> EntriesRecall:
        rest = dict(body)
        hybrid = rest.pop("hybrid", False)
        if not isinstance(hybrid, bool):
            raise invalid("hybrid", "hybrid must be true or false")
        return cls(Query.from_json(rest), hybrid)


async def recall(sc: Sidecar, req: EntriesRecall) -> RecallResponse:
    """Entries by meaning (cosine x importance), or fused with BM25 (``hybrid``), each hit with the
    highlights of the query's terms in its summary."""
    query, hybrid = req.query, req.hybrid
    outcome = await run_recall(sc.journal, sc.embedder, query, hybrid=hybrid)
    tokens = query_tokens(terms(query.query_text))
    hits = [{**h.to_json(), "highlights": [[a, b] for a, b in mark_terms(h.summary, tokens)]} for h in outcome.hits]
    return cast(RecallResponse, {"hits": hits, "hybrid": hybrid, "dense": outcome.dense})


async def health(sc: Sidecar, req: HealthRequest) -> HealthSnapshot:
    """The latest stored health snapshot (never recomputed); 404 when there is none yet."""
    snapshot = await latest_health(sc.journal, req.workspace_id, req.crew_id)
    if snapshot is None:
        raise NotFound(f"no health snapshot for workspace {req.workspace_id}; POST /memory/health?recompute=1")
    return cast(HealthSnapshot, snapshot.to_json())


async def recompute_health(sc: Sidecar, req: HealthRequest) -> HealthSnapshot:
    """The health snapshot computed now (and stored)."""
    return cast(HealthSnapshot, (await compute_health(sc.journal, req.workspace_id, req.crew_id)).to_json())
