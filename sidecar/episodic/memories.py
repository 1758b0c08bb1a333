"""Typed memories over the journal: remember, recall, feedback, forget.

A memory is a journal entry with a ``memory_type`` (entry type ``memory.<type>``), so the one
journal keeps events and memories side by side and every journal path (FTS5 mirror, embedding,
relations, health) sees both. This module holds the requests (each validated into a typed value
or a 400 naming the field) and the local operations on this sidecar's journal; which journal a
request goes to (this one, or the lead's for the crew's entries) is decided by the routes.

Recall takes candidates from both legs (cosine over the cached matrix, BM25 over the FTS5
mirror), keeps only those that earned a place (a BM25 match, or a cosine above the retrieval's
match floor), and scores them by the configured rule (:mod:`sidecar.episodic.scoring`).
Superseded, retired and expired entries are never served.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.clock import to_iso, utcnow
from sidecar.episodic.entry import (
    MEMORY_TYPES,
    JournalEntry,
    StoredEntry,
    check_namespace,
    check_topic_key,
    invalid,
    parse_ts,
    refuse_unknown,
    require_id,
)
from sidecar.episodic.indexer import embed_text
from sidecar.episodic.query import MAX_K, Scope, ScopeFilter
from sidecar.episodic.recall import query_vector
from sidecar.episodic.scoring import SCORINGS, Parts, score
from sidecar.episodic.store import JournalStore, RecallStore, Scored
from sidecar.errors import BadRequest, NotFound
from sidecar.index.query import terms
from sidecar.retrieval.embed.base import Embedder, EmbedderError
from sidecar.retrieval.hybrid import DENSE_MATCH
from sidecar.settings import Settings

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_RECALL_K",
    "FeedbackRequest",
    "ForgetRequest",
    "Identity",
    "MemoryHit",
    "NearMiss",
    "RecallRequest",
    "RememberRequest",
    "RestoreRequest",
    "feedback",
    "forget",
    "recall_memories",
    "remember",
    "restore",
]

log = structlog.get_logger(__name__)
DEFAULT_RECALL_K = 5
MAX_TTL_SECONDS = 100 * 365 * 86400
#: How deep each recall leg looks before scoring (at least 4 × k).
POOL = 50
#: Entries a recall embeds on the spot when BM25 found them before the indexer got to them.
_FRESH_EMBED = 16
_SIGNALS = {"+": True, "positive": True, "up": True, "-": False, "negative": False, "down": False}


@dataclass(frozen=True, slots=True)
class Identity:
    """Whose memory a request is about; defaults come from the settings (one sidecar, one agent)."""

    workspace_id: str
    agent_id: str
    crew_id: str | None
    namespace: str

    @classmethod
    def from_settings(cls, settings: Settings) -> Identity:
        """This sidecar's agent as the settings name it: the defaults of every memory request."""
        crew = settings.crew_id if settings.has_crew else None
        return cls(settings.workspace_id, settings.agent_id, crew, settings.namespace)

    def merged(self, body: Mapping[str, Any]) -> Identity:
        """The body's ``workspace_id``, ``agent_id`` and ``namespace`` over these defaults."""
        given = {k: body[k] for k in ("workspace_id", "agent_id", "namespace") if body.get(k) is not None}
        workspace = require_id("workspace_id", given.get("workspace_id", self.workspace_id))
        agent = require_id("agent_id", given.get("agent_id", self.agent_id))
        namespace = check_namespace(given.get("namespace", self.namespace))
        assert workspace is not None and agent is not None
        return Identity(workspace, agent, self.crew_id, namespace)


def _scope(body: Mapping[str, Any], allowed: tuple[str, ...], default: str) -> str:
    value = body.get("scope", default)
    if value not in allowed:
        raise invalid("scope", f"scope must be one of {', '.join(allowed)}")
    return str(value)


def _target(body: Mapping[str, Any]) -> tuple[str | None, str | None]:
    entry_id, topic_key = body.get("id"), body.get("topic_key")
    if (entry_id is None) == (topic_key is None):
        raise invalid("id", "give exactly one of id and topic_key")
    if entry_id is not None:
        require_id("id", entry_id)
        return str(entry_id), None
    return None, check_topic_key(topic_key)


_IDENTITY_FIELDS = frozenset({"workspace_id", "agent_id", "namespace", "scope"})


@dataclass(frozen=True, slots=True)
class RememberRequest:
    """``memory.remember``: one typed memory; ``scope`` ``crew`` makes it the crew's."""

    entry: JournalEntry
    scope: str

    FIELDS = frozenset(
        {"content", "memory_type", "priority", "confidence", "tags", "expires_at", "ttl_seconds", "topic_key"}
        | {"payload"}
        | _IDENTITY_FIELDS
    )

    @classmethod
    def from_json(cls, body: Mapping[str, Any], who: Identity, *, now: datetime | None = None) -> RememberRequest:
        refuse_unknown(body, cls.FIELDS)
        scope = _scope(body, ("own", "crew"), "own")
        if scope == "crew" and who.crew_id is None:
            raise invalid("scope", "scope crew needs a crew: this sidecar runs solo")
        me = who.merged(body)
        content = body.get("content")
        if not isinstance(content, str) or not content.strip():
            raise invalid("content", "content must be a non-empty string", missing=content is None)
        memory_type = body.get("memory_type", "fact")
        if memory_type not in MEMORY_TYPES:
            raise invalid("memory_type", f"memory_type must be one of {', '.join(MEMORY_TYPES)}")
        priority = body.get("priority", 5)
        if isinstance(priority, bool) or not isinstance(priority, int) or not 1 <= priority <= 10:
            raise invalid("priority", "priority must be an integer from 1 to 10")
        expires_at = _expiry(body, now or utcnow())
        tags = body.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise invalid("tags", "tags must be a list of strings")
        try:
            entry = JournalEntry(
                workspace_id=me.workspace_id,
                agent_id=me.agent_id,
                crew_id=who.crew_id if scope == "crew" else None,
                entry_type=f"memory.{memory_type}",
                summary=content,
                payload={} if body.get("payload") is None else body["payload"],
                priority=priority,
                memory_type=memory_type,
                confidence=body.get("confidence", 1.0),
                tags=tuple(dict.fromkeys(tags)),
                expires_at=expires_at,
                topic_key=body.get("topic_key"),
                namespace=me.namespace,
            )
        except BadRequest as exc:
            if exc.code == "invalid_summary":
                raise invalid("content", exc.message.replace("summary", "content")) from None
            raise
        return cls(entry, scope)


def _expiry(body: Mapping[str, Any], now: datetime) -> datetime | None:
    expires, ttl = body.get("expires_at"), body.get("ttl_seconds")
    if expires is not None and ttl is not None:
        raise invalid("ttl_seconds", "give expires_at or ttl_seconds, not both")
    if ttl is not None:
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl <= MAX_TTL_SECONDS:
            raise invalid("ttl_seconds", f"ttl_seconds must be a number of seconds in (0, {MAX_TTL_SECONDS}]")
        return now + timedelta(seconds=ttl)
    if expires is None:
        return None
    when = parse_ts("expires_at", expires)
    if when <= now:
        raise invalid("expires_at", "expires_at is in the past: the memory would never be served")
    return when


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """``memory.recall``: the top ``k`` memories for ``query`` in scope."""

    query: str
    who: Identity
    scope: Scope
    k: int
    memory_types: tuple[str, ...] | None
    tags: tuple[str, ...]
    scoring: str
    explain: bool

    FIELDS = frozenset({"query", "k", "memory_types", "tags", "scoring", "explain"} | _IDENTITY_FIELDS)

    @classmethod
    def from_json(
        cls, body: Mapping[str, Any], who: Identity, *, default_scope: str, default_scoring: str
    ) -> RecallRequest:
        refuse_unknown(body, cls.FIELDS)
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise invalid("query", "query must be a non-empty string", missing=query is None)
        if len(query.encode()) > 4096:
            raise BadRequest("query is over 4096 bytes", code="query_too_long", field="query")
        scope = Scope(_scope(body, tuple(s.value for s in Scope), default_scope))
        if scope is Scope.CREW_SHARED and who.crew_id is None:
            raise invalid("scope", "scope crew_shared needs a crew: this sidecar runs solo")
        k = body.get("k", DEFAULT_RECALL_K)
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise invalid("k", f"k must be an integer in 1..{MAX_K}")
        types = body.get("memory_types")
        if types is not None and (
            not isinstance(types, list) or not types or any(t not in MEMORY_TYPES for t in types)
        ):
            raise invalid("memory_types", f"memory_types must be a non-empty list of {', '.join(MEMORY_TYPES)}")
        tags = body.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            raise invalid("tags", "tags must be a list of non-empty strings")
        scoring = body.get("scoring", default_scoring)
        if scoring not in SCORINGS:
            raise invalid("scoring", f"scoring must be one of {', '.join(SCORINGS)}")
        explain = body.get("explain", False)
        if not isinstance(explain, bool):
            raise invalid("explain", "explain must be true or false")
        return cls(
            query,
            who.merged(body),
            scope,
            k,
            None if types is None else tuple(dict.fromkeys(types)),
            tuple(dict.fromkeys(tags)),
            str(scoring),
            explain,
        )

    def to_json(self) -> dict[str, Any]:
        """The request as the lead's crew listener takes it."""
        body: dict[str, Any] = {
            "query": self.query,
            "k": self.k,
            "tags": list(self.tags),
            "scoring": self.scoring,
            "explain": self.explain,
            "workspace_id": self.who.workspace_id,
            "agent_id": self.who.agent_id,
            "namespace": self.who.namespace,
        }
        if self.memory_types is not None:
            body["memory_types"] = list(self.memory_types)
        return body


@dataclass(frozen=True, slots=True)
class FeedbackRequest:
    """``memory.feedback``: ``+`` or ``-`` on one live entry, by id or topic key."""

    who: Identity
    scope: str
    entry_id: str | None
    topic_key: str | None
    positive: bool

    FIELDS = frozenset({"id", "topic_key", "signal"} | _IDENTITY_FIELDS)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], who: Identity) -> FeedbackRequest:
        refuse_unknown(body, cls.FIELDS)
        scope = _scope(body, ("own", "crew"), "own")
        entry_id, topic_key = _target(body)
        signal = body.get("signal")
        if not isinstance(signal, str) or signal not in _SIGNALS:
            raise invalid("signal", 'signal must be "+" or "-" (or positive/negative)', missing=signal is None)
        return cls(who.merged(body), scope, entry_id, topic_key, _SIGNALS[signal])


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    """``memory.forget``: archive one entry by id, or a topic key's entry and its history."""

    who: Identity
    scope: str
    entry_id: str | None
    topic_key: str | None

    FIELDS = frozenset({"id", "topic_key"} | _IDENTITY_FIELDS)

    @classmethod
    def from_json(cls, body: Mapping[str, Any], who: Identity) -> ForgetRequest:
        refuse_unknown(body, cls.FIELDS)
        scope = _scope(body, ("own", "crew"), "own")
        entry_id, topic_key = _target(body)
        return cls(who.merged(body), scope, entry_id, topic_key)


@dataclass(frozen=True, slots=True)
class RestoreRequest:
    """``memory.restore``: serve a retired memory of the agent's own again, by id."""

    who: Identity
    entry_id: str

    FIELDS = frozenset({"id", "workspace_id", "agent_id", "namespace"})

    @classmethod
    def from_json(cls, body: Mapping[str, Any], who: Identity) -> RestoreRequest:
        refuse_unknown(body, cls.FIELDS)
        entry_id = require_id("id", body.get("id"))
        assert entry_id is not None
        return cls(who.merged(body), entry_id)


async def restore(store: JournalStore, req: RestoreRequest) -> dict[str, Any]:
    """Make a retired memory live again (its negative votes cleared); NotFound unless it is a
    retired memory of the agent's own in the namespace."""
    found = await store.get(req.who.workspace_id, req.entry_id)
    if found is None or found.namespace != req.who.namespace or not _in_scope(found, req.who, None):
        raise NotFound(f"no entry {req.entry_id} in namespace {req.who.namespace}")
    after = await store.restore(req.who.workspace_id, req.entry_id)
    return {"id": after.id, "status": after.status, "confidence": after.confidence, "importance": after.base_importance}


def target_json(who: Identity, entry_id: str | None, topic_key: str | None) -> dict[str, Any]:
    """A feedback or forget target as the lead's crew listener takes it."""
    body: dict[str, Any] = {"workspace_id": who.workspace_id, "agent_id": who.agent_id, "namespace": who.namespace}
    if entry_id is not None:
        body["id"] = entry_id
    if topic_key is not None:
        body["topic_key"] = topic_key
    return body


# -- operations on this sidecar's journal ------------------------------------------------------------
async def remember(store: JournalStore, entry: JournalEntry) -> dict[str, Any]:
    stored = await store.append(entry)
    return {
        "id": stored.id,
        "seq": stored.seq,
        "memory_type": stored.memory_type,
        "topic_key": stored.topic_key,
        "namespace": stored.namespace,
        "supersedes": stored.supersedes,
        "expires_at": None if stored.expires_at is None else to_iso(stored.expires_at),
        "crew": stored.crew_id is not None,
    }


async def _resolve(
    store: JournalStore, who: Identity, entry_id: str | None, topic_key: str | None, crew_id: str | None
) -> StoredEntry:
    """The live entry a feedback names, in the workspace and namespace, and in the scope asked
    (crew entries only for ``crew_id``, the agent's own otherwise)."""
    if topic_key is not None:
        found = await store.live_topic(who.workspace_id, who.namespace, topic_key, crew_id, who.agent_id)
    else:
        found = await store.get(who.workspace_id, entry_id or "")
    if found is None or found.namespace != who.namespace or not _in_scope(found, who, crew_id):
        what = f"topic key {topic_key!r}" if topic_key is not None else f"entry {entry_id}"
        raise NotFound(f"no live memory with {what} in namespace {who.namespace}")
    return found


def _in_scope(entry: StoredEntry, who: Identity, crew_id: str | None) -> bool:
    if crew_id is not None:
        return entry.crew_id == crew_id
    return entry.crew_id is None and entry.agent_id == who.agent_id


async def feedback(
    store: JournalStore, req: FeedbackRequest, *, crew_id: str | None = None, now: datetime | None = None
) -> dict[str, Any]:
    entry = await _resolve(store, req.who, req.entry_id, req.topic_key, crew_id)
    after = await store.feedback(req.who.workspace_id, entry.id, req.positive, now or utcnow())
    return {
        "id": after.id,
        "signal": "+" if req.positive else "-",
        "importance": after.base_importance,
        "confidence": after.confidence,
        "feedback": {"positive": after.positive, "negative": after.negative},
        "status": after.status,
    }


async def forget(
    store: JournalStore, req: ForgetRequest, *, crew_id: str | None = None, now: datetime | None = None
) -> dict[str, Any]:
    """Archive the named entry (or the topic key's whole history); NotFound when nothing matched."""
    now = now or utcnow()
    if req.entry_id is not None:
        found = await store.get(req.who.workspace_id, req.entry_id)
        if found is None or found.namespace != req.who.namespace or not _in_scope(found, req.who, crew_id):
            raise NotFound(f"no entry {req.entry_id} in namespace {req.who.namespace}")
    else:
        history = await store.history(
            req.who.workspace_id, req.who.namespace, req.topic_key or "", crew_id=crew_id, agent_id=req.who.agent_id
        )
        if not history or not all(_in_scope(e, req.who, crew_id) for e in history):
            raise NotFound(f"no memory with topic key {req.topic_key!r} in namespace {req.who.namespace}")
    ids = await store.forget(
        req.who.workspace_id,
        req.who.namespace,
        now,
        entry_id=req.entry_id,
        topic_key=req.topic_key,
        crew_id=crew_id,
        agent_id=req.who.agent_id,
    )
    return {"forgotten": ids}


#: The least cosine at which a memory the floor kept out is still named as near.
NEAR_MISS = 0.15


@dataclass(frozen=True, slots=True)
class NearMiss:
    """The memory closest to a query that nothing earned: under the cosine floor, over NEAR_MISS."""

    entry: StoredEntry
    cosine: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.entry.id,
            "content": self.entry.summary,
            "cosine": round(self.cosine, 6),
            "floor": DENSE_MATCH,
            "note": "a memory came near the query but under the match floor: rephrase, or recall with its words",
        }


@dataclass(frozen=True, slots=True)
class MemoryHit:
    entry: StoredEntry
    parts: Parts
    via: str  # "dense", "bm25" or "both"

    def to_json(self, *, explain: bool, now: datetime) -> dict[str, Any]:
        e = self.entry
        out: dict[str, Any] = {
            "id": e.id,
            "content": e.summary,
            "memory_type": e.memory_type,
            "entry_type": e.entry_type,
            "score": round(self.parts.score, 6),
            "via": self.via,
            "source": "crew" if e.crew_id is not None else "own",
            "agent_id": e.agent_id,
            "topic_key": e.topic_key,
            "namespace": e.namespace,
            "tags": list(e.tags),
            "priority": e.priority,
            "confidence": e.confidence,
            "ts": to_iso(e.ts),
            "age_seconds": max(0.0, (now - e.ts).total_seconds()),
            "expires_at": None if e.expires_at is None else to_iso(e.expires_at),
        }
        if explain:
            out["explain"] = self.parts.to_json()
        return out


async def recall_memories(
    store: RecallStore,
    embedder: Embedder | None,
    req: RecallRequest,
    *,
    crew_id: str | None,
    own: bool = True,
    now: datetime | None = None,
    near: list[NearMiss] | None = None,
) -> tuple[list[MemoryHit], str]:
    """The top ``k`` served entries for the request, and the dense leg's state (``ok``,
    ``no_embedder`` or ``embedder_error``). ``crew_id`` adds (or with ``own`` false, keeps only)
    the crew's entries; every returned hit is marked referenced. When nothing earned a place,
    ``near`` (if given) gets the closest memory under the cosine floor, if one came within
    ``NEAR_MISS`` of it: a short paraphrase the floor kept out is named, not silently dropped."""
    now = now or utcnow()
    where = ScopeFilter(
        req.who.workspace_id,
        agent_id=req.who.agent_id if own else None,
        crew_id=crew_id,
        namespace=req.who.namespace,
        memory_types=req.memory_types,
        now=now,
        private=True,
    )
    if not own and crew_id is None:
        return [], "ok"
    pool = max(POOL, 4 * req.k) * (4 if req.tags else 1)

    async def dense_leg() -> tuple[npt.NDArray[np.float32] | None, str, list[Scored]]:
        vector, dense = await query_vector(embedder, req.query)
        if vector is None or embedder is None:
            return vector, dense, []
        # Only a cosine over DENSE_MATCH earns a place, so the first pass may skip rows under it.
        ranked = await store.dense_rank(where, embedder.model_id, vector, pool, weighted=False, floor=DENSE_MATCH)
        return vector, dense, ranked

    # The query's model run (its own thread) goes on while BM25 reads its candidates (the reader
    # thread): a recall waits for the longer of the two, not for both one after the other.
    pending = asyncio.ensure_future(dense_leg())
    try:
        found = await store.bm25_entries(where, " ".join(terms(req.query)), pool)  # stopwords earn nothing
    except BaseException:
        pending.cancel()
        pending.add_done_callback(_retrieved)
        raise
    vector, dense, ranked = await pending
    sparse = [e.id for e in found]
    cosines: dict[str, float] = {}
    importance: dict[str, float] = {}
    for s in ranked:
        cosines[s.entry_id], importance[s.entry_id] = s.cosine, s.importance
    entries = await _candidates(store, where, found, cosines, embedder=embedder, vector=vector)
    rank = _tied_ranks(sparse, entries)
    hits: list[MemoryHit] = []
    closest: NearMiss | None = None
    for entry_id, entry in entries.items():
        if not where.serves(entry, now) or not all(tag in entry.tags for tag in req.tags):
            continue
        cosine = cosines.get(entry_id)
        if entry_id not in rank and (cosine is None or cosine <= DENSE_MATCH):
            if cosine is not None and cosine >= NEAR_MISS and (closest is None or cosine > closest.cosine):
                closest = NearMiss(entry, cosine)
            continue  # nothing earned it: no filler
        if cosine is not None:
            similarity, source = cosine, "cosine"
        else:
            similarity, source = 1.0 / (1.0 + rank[entry_id]), "bm25_rank"
        parts = score(
            req.scoring,
            similarity=similarity,
            similarity_source=source,
            importance=importance.get(entry_id, entry.base_importance),
            last_touched=entry.accessed_at or entry.ts,
            recalls=entry.access_count,
            now=now,
            priority=entry.priority / 10 if isinstance(entry.priority, int) else entry.base_importance,
            confidence=entry.confidence,
        )
        via = (
            "both"
            if entry_id in rank and cosine is not None and cosine > DENSE_MATCH
            else ("bm25" if entry_id in rank else "dense")
        )
        hits.append(MemoryHit(entry, parts, via))
    hits.sort(key=lambda h: (-h.parts.score, -h.entry.seq))
    hits = hits[: req.k]
    if not hits and closest is not None and near is not None:
        near.append(closest)
    if hits:
        await store.mark_referenced(req.who.workspace_id, [h.entry.id for h in hits], now)
    return hits, dense


async def _candidates(
    store: RecallStore,
    where: ScopeFilter,
    found: list[StoredEntry],
    cosines: dict[str, float],
    *,
    embedder: Embedder | None,
    vector: npt.NDArray[np.float32] | None,
) -> dict[str, StoredEntry]:
    """The entries of every candidate (BM25's ``found`` and the dense pool's in ``cosines``), and in
    ``cosines`` those of the BM25 candidates the pool did not reach. A dense candidate under
    NEAR_MISS that BM25 did not find can neither earn a place nor be named as near: it is not read.
    Both reads are asked at once, so the reader runs them one after the other without a wait
    between."""
    entries = {e.id: e for e in found}
    unread = [i for i, c in cosines.items() if c >= NEAR_MISS and i not in entries]
    reading = asyncio.ensure_future(store.fetch(where.workspace_id, unread)) if unread else None
    try:
        if vector is not None and embedder is not None:
            await _fill_cosines(store, embedder, vector, [e for e in found if e.id not in cosines], cosines)
    except BaseException:
        if reading is not None:
            reading.cancel()
            reading.add_done_callback(_retrieved)
        raise
    if reading is not None:
        entries.update(await reading)
    return entries


def _retrieved(task: asyncio.Future[Any]) -> None:
    """Take a cancelled leg's outcome, so an error it ended with is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


def _tied_ranks(sparse: list[str], entries: Mapping[str, StoredEntry]) -> dict[str, int]:
    """BM25 ranks, with entries of the same words given the best rank among them: their BM25 scores
    are equal, so which one the ranking lists first says nothing, and confidence and importance,
    not that order, should tell twins apart."""
    rank = {entry_id: n for n, entry_id in enumerate(sparse)}
    best: dict[str, int] = {}
    for entry_id, n in rank.items():
        entry = entries.get(entry_id)
        if entry is not None:
            key = " ".join(entry.summary.casefold().split())
            best[key] = min(best.get(key, n), n)
    for entry_id in rank:
        entry = entries.get(entry_id)
        if entry is not None:
            rank[entry_id] = best[" ".join(entry.summary.casefold().split())]
    return rank


async def _fill_cosines(
    store: RecallStore,
    embedder: Embedder,
    query: npt.NDArray[np.float32],
    missing: list[StoredEntry],
    cosines: dict[str, float],
) -> None:
    """Cosines for BM25 candidates the dense pool did not reach: from the matrix, or, for the few
    the indexer has not embedded yet, embedded now."""
    if not missing:
        return
    cosines.update(await store.cosines(missing[0].workspace_id, embedder.model_id, [e.id for e in missing], query))
    fresh = [e for e in missing if e.id not in cosines][:_FRESH_EMBED]
    if not fresh:
        return
    import numpy as np

    try:
        embedded = await embedder.embed([embed_text(e) for e in fresh])
    except EmbedderError as exc:
        log.warning("memory.recall_fresh_embed_failed", error=str(exc))
        return
    norm = float(np.linalg.norm(query)) or 1.0
    for entry, row in zip(fresh, embedded, strict=False):
        row_norm = float(np.linalg.norm(row)) or 1.0
        cosines[entry.id] = float(np.dot(row, query) / (row_norm * norm))
