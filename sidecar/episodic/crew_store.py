"""The crew's journal entries (its typed memories) in the crew store, for members on other hosts.

The lead's journal stays the source: every crew memory is written there, by the lead's own agent
or by a member through the lead's crew listener. ``CrewJournalMirror`` keeps the store's
``crew_journal`` table level with the lead's crew entries: each entry with its vector and decayed
importance, compared by fingerprint whenever crew entries were added, embedded or removed (a cheap
count tells) and every crew reindex tick (which heals a store that missed something or was wiped,
and carries what else changes an entry: decay, merges, the lead's access counts), and the entries a
crew write touched at once, before the lead answers it, so the member that wrote reads its write on
its next recall.

``PostgresCrewJournal`` is the recall side of the journal store (``RecallStore``) over that table:
a member recalls the crew's memories from it directly, ranked by the same recall code as the
lead's (``recall_memories``): the dense leg by cosine (pgvector), the keyword leg by ``ts_rank``
over a 'simple' tsvector (no stems, no stopwords, as the journal's FTS5 index), the same scoring,
the same no-filler rule. A member's recalls count as accesses in the store (access counts are the
larger of the lead's and the store's when the lead's copy arrives).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from sidecar.clock import parse_iso, to_iso, utcnow
from sidecar.episodic.entry import StoredEntry
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.sqlite_sql import tokens
from sidecar.episodic.store import JournalStore, Scored, SharedEntry
from sidecar.store.base import StoreUnavailable, unstorable
from sidecar.store.mirror import each_alone, run_rounds
from sidecar.store.postgres import PostgresCrewStore, fold
from sidecar.tasks import stop_task

__all__ = ["CrewJournalMirror", "PostgresCrewJournal"]

log = structlog.get_logger("sidecar.episodic.crew_store")
#: Rows sent in one transaction.
_BATCH = 500
#: Rows changed in one compare past which the store's planner statistics are refreshed.
ANALYZE_AFTER = 500
_DATES = ("ts", "expires_at", "accessed_at")
_UPSERT = """
INSERT INTO crew_journal (crew, id, seq, workspace_id, agent_id, namespace, memory_type, status, expires_at,
    embeddable, entry, tsv, model, embedding, importance, access_count, accessed_at, fingerprint)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, to_tsvector('simple', $12), $13, $14, $15, $16, $17, $18)
ON CONFLICT (crew, id) DO UPDATE SET seq = EXCLUDED.seq, workspace_id = EXCLUDED.workspace_id,
    agent_id = EXCLUDED.agent_id, namespace = EXCLUDED.namespace, memory_type = EXCLUDED.memory_type,
    status = EXCLUDED.status, expires_at = EXCLUDED.expires_at, embeddable = EXCLUDED.embeddable,
    entry = EXCLUDED.entry, tsv = EXCLUDED.tsv, model = EXCLUDED.model, embedding = EXCLUDED.embedding,
    importance = EXCLUDED.importance, fingerprint = EXCLUDED.fingerprint,
    access_count = GREATEST(crew_journal.access_count, EXCLUDED.access_count),
    accessed_at = GREATEST(crew_journal.accessed_at, EXCLUDED.accessed_at)
"""


def _doc(entry: StoredEntry) -> dict[str, Any]:
    doc = dataclasses.asdict(entry)
    for name in _DATES:
        if doc[name] is not None:
            doc[name] = to_iso(doc[name])
    doc["tags"] = list(entry.tags)
    doc.pop("supersedes")
    return doc


def _from_doc(doc: dict[str, Any], access_count: int, accessed_at: datetime | None) -> StoredEntry:
    fields = {**doc, "tags": tuple(doc["tags"]), "access_count": access_count, "accessed_at": accessed_at}
    for name in ("ts", "expires_at"):
        if fields[name] is not None:
            fields[name] = parse_iso(fields[name])
    return StoredEntry(**fields)


def _text(entry: StoredEntry) -> str:
    """What the keyword leg searches: summary and payload, as the journal's FTS5 index has them."""
    return fold(f"{entry.summary} {json.dumps(entry.payload, ensure_ascii=False)}")


def fingerprint(shared: SharedEntry) -> str:
    """What the mirror compares: the entry, its vector's model and its importance. Made for every
    crew entry at each full compare, so from the fields as they are (no copy of the entry)."""
    entry = shared.entry
    doc = [getattr(entry, name) for name in _PRINTED]
    doc += [shared.model, round(shared.importance, 6)]
    digest = hashlib.sha256(
        json.dumps(doc, ensure_ascii=False, sort_keys=True, default=_iso).encode(errors="surrogatepass")
    )
    if shared.vector is not None:
        digest.update(np.asarray(shared.vector, dtype="<f4").tobytes())
    return digest.hexdigest()[:32]


_PRINTED = tuple(f.name for f in dataclasses.fields(StoredEntry) if f.name != "supersedes")


def _iso(value: object) -> str:
    if isinstance(value, datetime):
        return to_iso(value)
    raise TypeError(f"{type(value).__name__} in a journal entry")


class PostgresCrewJournal:
    """One crew's journal entries in the crew store: what a member recalls, what the lead copies."""

    def __init__(self, store: PostgresCrewStore) -> None:
        self.store = store
        self.crew = store.crew

    # -- the recall side (RecallStore) ---------------------------------------------------------
    async def fetch(self, workspace_id: str, ids: Sequence[str]) -> dict[str, StoredEntry]:
        async with self.store.connection() as conn:
            rows = await conn.fetch(
                "SELECT entry, access_count, accessed_at FROM crew_journal"
                " WHERE crew = $1 AND workspace_id = $2 AND id = ANY($3::text[])",
                self.crew, workspace_id, list(ids),
            )  # fmt: skip
        found = (_from_doc(json.loads(r["entry"]), r["access_count"], r["accessed_at"]) for r in rows)
        return {entry.id: entry for entry in found}

    async def dense_rank(
        self,
        where: ScopeFilter,
        model: str,
        query: npt.NDArray[np.float32],
        limit: int,
        *,
        weighted: bool,
        exclude: Sequence[str] = (),
        floor: float | None = None,
    ) -> list[Scored]:
        """Exact whatever ``floor`` is: the database ranks every row in scope."""
        params: list[Any] = [self.crew, np.asarray(query, dtype=np.float32), model, list(exclude)]
        scope = self._scope(where, params)
        order = "cos * importance DESC" if weighted else "cos DESC"
        params.append(limit)
        # One model has one width: the model's name keeps vectors of another width out.
        sql = (
            "SELECT id, cos, importance FROM (SELECT id, seq, importance, 1 - (embedding <=> $2) AS cos"
            " FROM crew_journal WHERE crew = $1 AND model = $3 AND NOT (id = ANY($4::text[]))"
            f" AND {scope}) c ORDER BY {order}, seq DESC LIMIT ${len(params)}"
        )
        async with self.store.connection() as conn:
            rows = await conn.fetch(sql, *params)
        return [Scored(r["id"], float(r["cos"]), float(r["importance"])) for r in rows]

    async def bm25_rank(self, where: ScopeFilter, q: str, limit: int) -> list[str]:
        words = list(dict.fromkeys(tokens(fold(q))))
        if not words:
            return []
        params: list[Any] = [self.crew, words]
        scope = self._scope(where, params)
        params.append(limit)
        sql = (
            "WITH q AS (SELECT crew_tsquery_any(plainto_tsquery('simple', w)) AS query FROM unnest($2::text[]) w)"
            " SELECT id FROM crew_journal, q WHERE crew = $1 AND embeddable AND tsv @@ q.query"
            f" AND {scope} ORDER BY ts_rank(tsv, q.query) DESC, seq DESC LIMIT ${len(params)}"
        )
        async with self.store.connection() as conn:
            rows = await conn.fetch(sql, *params)
        return [r["id"] for r in rows]

    async def bm25_entries(self, where: ScopeFilter, q: str, limit: int) -> list[StoredEntry]:
        ranked = await self.bm25_rank(where, q, limit)
        found = await self.fetch(where.workspace_id, ranked) if ranked else {}
        return [found[i] for i in ranked if i in found]

    async def cosines(
        self, workspace_id: str, model: str, ids: Sequence[str], query: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        if not ids:
            return {}
        async with self.store.connection() as conn:
            rows = await conn.fetch(
                "SELECT id, 1 - (embedding <=> $4) AS cos FROM crew_journal WHERE crew = $1 AND workspace_id = $2"
                " AND id = ANY($3::text[]) AND model = $5 AND status = 'live'",
                self.crew, workspace_id, list(ids), np.asarray(query, dtype=np.float32), model,
            )  # fmt: skip
        return {r["id"]: float(r["cos"]) for r in rows}

    async def mark_referenced(self, workspace_id: str, ids: Sequence[str], now: datetime) -> None:
        """Count a member's recall as an access. The one write a member makes (its role needs the
        column grant docs/store.md gives): when it is refused, the recall still answers, uncounted."""
        try:
            async with self.store.connection() as conn:
                await conn.execute(
                    "UPDATE crew_journal SET access_count = access_count + 1, accessed_at = $4"
                    " WHERE crew = $1 AND workspace_id = $2 AND id = ANY($3::text[])",
                    self.crew, workspace_id, list(ids), now,
                )  # fmt: skip
        except StoreUnavailable as exc:
            log.warning("store.access_count_failed", error=str(exc))

    def _scope(self, where: ScopeFilter, params: list[Any]) -> str:
        """The served-rows clause of ``where`` (the SQLite store's ``scope_clause``) for this
        table, whose rows are all this crew's: the agent's own entries outside a crew are never
        here."""

        def bind(value: Any) -> str:
            params.append(value)
            return f"${len(params)}"

        sql = f"workspace_id = {bind(where.workspace_id)} AND status = 'live'"
        sql += f" AND (expires_at IS NULL OR expires_at > {bind(where.now or utcnow())})"
        if where.namespace is not None:
            sql += f" AND namespace = {bind(where.namespace)}"
        if where.memory_types is not None:
            sql += f" AND memory_type = ANY({bind(list(where.memory_types))}::text[])"
        if where.crew_id == self.crew:
            return sql  # every row is the crew's
        if where.crew_id is None and where.agent_id is not None and not where.private:
            return sql + f" AND agent_id = {bind(where.agent_id)}"
        if where.crew_id is None and where.agent_id is None:
            return sql
        return sql + " AND false"

    # -- the write side (the lead's mirror) ------------------------------------------------------
    async def fingerprints(self) -> dict[str, str]:
        async with self.store.connection() as conn:
            rows = await conn.fetch("SELECT id, fingerprint FROM crew_journal WHERE crew = $1", self.crew)
        return {r["id"]: r["fingerprint"] for r in rows}

    async def put(self, entries: Sequence[tuple[SharedEntry, str]]) -> dict[str, str]:
        """Insert or replace these entries (each with its fingerprint), a batch per transaction.

        An entry the database cannot hold (a NUL in its text, a lone surrogate) never stops the
        others: it is left out and returned (id -> why); a batch the store refuses for a value
        is sent again an entry at a time, so only the bad one stays out."""
        rows = await asyncio.to_thread(lambda: [self._row(shared, print_) for shared, print_ in entries])
        refused: dict[str, str] = {}
        good = []
        for row in rows:
            problem = unstorable(*(v for v in row if isinstance(v, str)))
            if problem is None:
                good.append(row)
            else:
                refused[row[1]] = problem
        for start in range(0, len(good), _BATCH):
            batch = {row[1]: row for row in good[start : start + _BATCH]}
            refused |= await each_alone(list(batch), functools.partial(self._upsert, batch))
        return refused

    async def _upsert(self, rows: dict[str, tuple[Any, ...]], ids: list[str]) -> None:
        """The rows of ``ids`` in one transaction."""
        async with self.store.connection() as conn, conn.transaction():
            await conn.executemany(_UPSERT, [rows[i] for i in ids])

    async def analyze(self) -> None:
        """Fresh planner statistics (after a large copy the planner still sees an empty table)."""
        async with self.store.connection() as conn:
            await conn.execute("ANALYZE crew_journal")

    async def remove(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        async with self.store.connection() as conn:
            await conn.execute(
                "DELETE FROM crew_journal WHERE crew = $1 AND id = ANY($2::text[])", self.crew, list(ids)
            )

    def _row(self, shared: SharedEntry, print_: str) -> tuple[Any, ...]:
        e = shared.entry
        vector = None if shared.vector is None else np.asarray(shared.vector, dtype=np.float32)
        return (
            self.crew, e.id, e.seq, e.workspace_id, e.agent_id, e.namespace, e.memory_type, e.status, e.expires_at,
            e.embeddable, json.dumps(_doc(e), ensure_ascii=False), _text(e), shared.model, vector,
            shared.importance, e.access_count, e.accessed_at, print_,
        )  # fmt: skip


class CrewJournalMirror:
    """The lead's copy of its crew entries into the crew store (see the module's text)."""

    def __init__(
        self,
        target: PostgresCrewJournal,
        journal: JournalStore,
        crew_id: str,
        *,
        interval: float,
        tick: float = 1.0,
    ) -> None:
        self.target = target
        self.journal = journal
        self.crew_id = crew_id
        self.interval = interval
        self.tick = tick
        self.synced: tuple[int, ...] | None = None  # the journal's crew signature the store holds
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._wake.set()  # the first round compares at once
        self._task: asyncio.Task[None] | None = None
        self._last_full = float("-inf")
        #: Crew entries the store could not hold (id -> why): left out of it until they change.
        self.skipped: dict[str, str] = {}
        self._published = False  # whether a full compare has published the count yet

    def copy_skipped(self) -> dict[str, int]:
        """What the lead's copies into the crew store (its files' and its crew memories') last had
        to leave out, by kind: the lead's own crew status shows it."""
        return dict(self.target.store.copy_skipped)

    def start(self) -> None:
        self._task = asyncio.create_task(
            run_rounds(self._round, self._wake, self.tick, self._failed), name="crew-journal-mirror"
        )

    async def stop(self) -> None:
        if self._task is not None:
            await stop_task(self._task)

    def _failed(self) -> None:
        self.synced = None  # the next round compares everything

    async def _skipped(self, refused: dict[str, str], *, replace: bool = False) -> None:
        """Log the entries the store could not hold and publish how many it lacks for that
        (``replace``: a full compare, which finds them all afresh)."""
        for entry_id, why in refused.items():
            log.warning("store.journal_entry_skipped", id=entry_id, reason=why)
        before = dict(self.skipped)
        if replace:
            self.skipped.clear()
        self.skipped.update(refused)
        # A full compare publishes even an unchanged count once: the store may hold an earlier
        # run's, for entries fixed while this lead was down.
        if self.skipped != before or (replace and not self._published):
            await self.target.store.set_skipped("memories", len(self.skipped))
            self._published = self._published or replace

    async def _round(self) -> None:
        """Every tick: a full compare when crew entries were added, embedded or removed since the
        last one, after a failure, and every ``interval`` (what else changes an entry: decay,
        merges, access counts, another process's writes)."""
        due = self.interval > 0 and asyncio.get_running_loop().time() - self._last_full >= self.interval
        if due or await self.journal.crew_signature(self.crew_id) != self.synced:
            await self.sync()

    async def sync(self) -> tuple[int, int]:
        """Bring the store level with the journal's crew entries; how many were sent and removed."""
        async with self._lock:
            signature = await self.journal.crew_signature(self.crew_id)  # first: what is read below holds it
            entries = await self.journal.crew_entries(self.crew_id)
            held = await self.target.fingerprints()
            prints = await asyncio.to_thread(lambda: [fingerprint(s) for s in entries])  # off the loop
            changed = [(s, f) for s, f in zip(entries, prints, strict=True) if held.get(s.entry.id) != f]
            ids = {s.entry.id for s in entries}
            gone = [i for i in held if i not in ids]
            refused = await self.target.put(changed)
            await self.target.remove(gone + sorted(i for i in refused if i in held))  # no stale copy
            await self._skipped(refused, replace=True)
            if len(changed) + len(gone) >= ANALYZE_AFTER:
                await self.target.analyze()
            self.synced = signature
            self._last_full = asyncio.get_running_loop().time()
        if changed or gone:
            log.info("store.journal_mirrored", changed=len(changed), removed=len(gone))
        return len(changed), len(gone)

    async def flush(self, ids: Sequence[str]) -> bool:
        """After a crew write the lead answers: copy the entries it touched now, so the writer reads
        it on another host. A store that is down is not the write's failure (the journal holds it;
        the mirror's next rounds send it)."""
        try:
            async with self._lock:
                entries = await self.journal.crew_entries(self.crew_id, ids)
                prints = await asyncio.to_thread(lambda: [fingerprint(s) for s in entries])
                refused = await self.target.put(list(zip(entries, prints, strict=True)))
                await self.target.remove(sorted((set(ids) - {s.entry.id for s in entries}) | set(refused)))
                for entry_id in ids:
                    self.skipped.pop(entry_id, None)
                await self._skipped(refused)
        except Exception as exc:
            log.warning("store.journal_flush_failed", error=str(exc))
            self.synced = None  # the next round compares everything
            self._wake.set()
            return False
        return True
