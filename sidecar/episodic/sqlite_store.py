"""The SQLite journal store over one :class:`~sidecar.db.Database`.

Writes run in ``BEGIN IMMEDIATE`` on its writer thread, so they are serialised; reads run on a
read-only connection, which WAL lets proceed while a write is in flight. Migrations
(:mod:`sidecar.episodic.schema`) are applied on open; a journal file replaced under an open store
is followed before the next write.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import uuid4

import structlog

from sidecar.clock import parse_iso, to_iso, utcnow
from sidecar.db import Database
from sidecar.episodic import sqlite_sql as qs
from sidecar.episodic.entry import JournalEntry, StoredEntry, dumps
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.schema import MIGRATIONS
from sidecar.episodic.store import (
    CostTotals,
    HealthInputs,
    HealthSnapshot,
    ImportanceRow,
    NewEmbedding,
    Relation,
    Scored,
    SharedEntry,
)
from sidecar.episodic.vector_cache import Delta, VectorCache
from sidecar.errors import Conflict, NotFound
from sidecar.retrieval.embed.base import from_blob, to_blob

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from sidecar.episodic.vector_set import VectorSet

__all__ = [
    "ARCHIVE_PAYLOAD_CHARS",
    "FEEDBACK",
    "JOURNAL_FILE",
    "RETIRE_AFTER",
    "RETIRE_CONFIDENCE",
    "SqliteJournalStore",
]

T = TypeVar("T")
log = structlog.get_logger("sidecar.episodic")
ARCHIVE_PAYLOAD_CHARS = 400
#: The journal database, in the agent memory dir next to the tier index.
JOURNAL_FILE = "journal.sqlite"
#: Feedback moves an entry's importance seed and its confidence: up 0.15, down 0.2.
FEEDBACK = {True: 0.15, False: -0.2}
#: Negative feedbacks that retire an entry (kept, never served again) once its confidence has
#: fallen to ``RETIRE_CONFIDENCE`` or below (three negatives and a low confidence): a memory
#: its readers also voted up, or that was stated with full confidence, takes more to retire.
RETIRE_AFTER = 3
RETIRE_CONFIDENCE = 0.3
#: The least confidence a restored entry gets back.
RESTORED_CONFIDENCE = 0.5
Conn = sqlite3.Connection
_LOAD_BATCH = 4096


class SqliteJournalStore:
    """The :class:`~sidecar.episodic.store.JournalStore` over one ``journal.sqlite`` file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = Database(path, MIGRATIONS, name="journal", on_replaced=self._replaced)
        self._cache = VectorCache()
        # Words found in more than MAX_TERM_DOCS entries, and the generation they were counted at.
        self._common: tuple[int, frozenset[str]] = (-1, frozenset())

    @classmethod
    async def open(cls, path: Path) -> SqliteJournalStore:
        """Create or open the database and apply migrations."""
        store = cls(path)
        try:
            await store._db.open()
        except BaseException:
            await store._db.aclose()
            raise
        return store

    async def release_memory(self) -> None:
        """Empty the connections' page caches (the server does it when idle)."""
        await self._db.release_memory()

    async def aclose(self) -> None:
        await self._db.aclose()

    def _replaced(self, path: Path) -> None:
        """On the writer thread, after journal.sqlite was deleted or replaced under us (the memory
        dir restored from a backup) and the file there now was opened instead of writing into a
        ghost: what recall cached came from the old file."""
        self._cache.clear()
        self._common = (-1, frozenset())
        log.warning("journal.reopened", path=str(path))

    async def _write(self, fn: Callable[[Conn], T]) -> T:
        """``fn`` in one write transaction that changes nothing recall serves."""
        return await self._db.write(fn)

    async def _serve_write(self, fn: Callable[[Conn, Delta], T], *, may_leave_served: bool = False) -> T:
        """``fn`` in one write transaction that may change what recall serves: it records what it
        changed in the Delta, the journal's generation is bumped in the same transaction, and the
        cached matrices are brought up to date from the Delta once it has committed.

        With ``may_leave_served``, ``fn`` records in the Delta every change it makes to the rows the
        matrices hold, so an empty Delta means none: the generation stays and every process's
        matrices stay valid (an append: a new entry has no vector yet, only a superseded one leaves).
        """
        delta = Delta()

        def run(conn: Conn) -> tuple[T, int | None]:
            result = fn(conn, delta)
            if may_leave_served and not (delta.rows or delta.gone or delta.importance or delta.reload):
                return result, None
            return result, int(conn.execute(qs.BUMP_GENERATION).fetchone()[0])

        result, generation = await self._write(run)
        if generation is not None:
            self._cache.apply(delta, generation)
        return result

    async def _read(self, fn: Callable[[Conn], T]) -> T:
        """``fn`` on the reader, every statement of it in one snapshot."""
        return await self._db.read(fn)

    # -- journal -------------------------------------------------------------------------------
    async def append(self, entry: JournalEntry, *, as_latest: bool = False) -> StoredEntry:
        """Store ``entry``. With ``as_latest`` it goes to the workspace and agent of the newest entry
        the agent wrote itself (not a ``memory.updated`` one; the entry's own when there is none), read in the
        same transaction: one trip to the writer thread instead of a read and then a write."""
        stored = await self._append(entry, entry.id or f"je_{uuid4().hex}", as_latest, read_back=True)
        assert stored is not None
        return stored

    async def record(self, entry: JournalEntry, *, as_latest: bool = False) -> str:
        """``append`` for a caller that needs only the entry's id: the stored row is not read back."""
        entry_id = entry.id or f"je_{uuid4().hex}"
        await self._append(entry, entry_id, as_latest, read_back=False)
        return entry_id

    async def _append(
        self, entry: JournalEntry, entry_id: str, as_latest: bool, *, read_back: bool
    ) -> StoredEntry | None:
        marker = entry.priority if isinstance(entry.priority, str) else None
        level = entry.priority if isinstance(entry.priority, int) else None
        expires = None if entry.expires_at is None else to_iso(entry.expires_at)
        values = [
            entry_id, entry.workspace_id, entry.crew_id, entry.agent_id, to_iso(entry.ts or utcnow()),
            entry.entry_type, entry.severity, entry.summary, entry.payload_json, entry.refs_json,
            marker, int(entry.embeddable), entry.memory_type, level, float(entry.confidence),
            dumps(list(entry.tags)) if entry.tags else "[]", expires, entry.topic_key, entry.namespace, entry.base_importance, 0,
        ]  # fmt: skip

        def insert(conn: Conn, delta: Delta) -> StoredEntry | None:
            if as_latest and (row := conn.execute(qs.LATEST_IDENTITY).fetchone()) is not None:
                values[1], values[3] = row
            replaced = None
            if entry.topic_key is not None:  # topic-key upsert: the live holder becomes history
                # A key is the crew's, or one agent's own: another agent's key of the same name is not it.
                scope = (values[1], entry.namespace, entry.topic_key, entry.crew_id or "", values[3] or "")
                found = conn.execute(qs.LIVE_TOPIC, scope).fetchone()
                if found is not None:
                    replaced, values[-1] = found[0], found[1]  # the new entry keeps the reference count
                    conn.execute(
                        "UPDATE journal_entries SET status = 'superseded', superseded_by = ? WHERE id = ?",
                        (entry_id, replaced),
                    )
                    delta.gone.add(replaced)
            try:
                conn.execute(qs.INSERT_ENTRY, values)
            except sqlite3.IntegrityError:
                raise Conflict(f"journal entry {entry_id} already exists", field="id") from None
            if not read_back:
                return None
            stored = _read_entry(conn, entry_id)
            return stored if replaced is None else dataclasses.replace(stored, supersedes=replaced)

        return await self._serve_write(insert, may_leave_served=True)

    async def get(self, workspace_id: str, entry_id: str) -> StoredEntry | None:
        return (await self.fetch(workspace_id, [entry_id])).get(entry_id)

    async def update(
        self, workspace_id: str, entry_id: str, *, summary: str | None = None, payload: dict[str, Any] | None = None
    ) -> bool:
        """Change summary and/or payload; the stale embedding is dropped so the indexer redoes it."""
        body = None if payload is None else dumps(payload)

        def run(conn: Conn, delta: Delta) -> bool:
            cur = conn.execute(
                "UPDATE journal_entries SET summary = COALESCE(?, summary), payload = COALESCE(?, payload)"
                " WHERE workspace_id = ? AND id = ?",
                (summary, body, workspace_id, entry_id),
            )
            if cur.rowcount > 0:
                conn.execute("DELETE FROM journal_embeddings WHERE entry_id = ?", (entry_id,))
                conn.execute("UPDATE journal_entries SET vector_model = NULL WHERE id = ?", (entry_id,))
                delta.gone.add(entry_id)
            return cur.rowcount > 0

        return await self._serve_write(run)

    async def delete(self, workspace_id: str, entry_id: str) -> bool:
        def run(conn: Conn, delta: Delta) -> bool:
            sql = "DELETE FROM journal_entries WHERE workspace_id = ? AND id = ?"
            delta.gone.add(entry_id)
            return conn.execute(sql, (workspace_id, entry_id)).rowcount > 0

        return await self._serve_write(run)

    # -- typed memories ------------------------------------------------------------------------
    async def live_topic(
        self, workspace_id: str, namespace: str, topic_key: str, crew_id: str | None = None, agent_id: str | None = None
    ) -> StoredEntry | None:
        """The live entry holding ``topic_key`` in the workspace's namespace, in the crew's scope
        (``crew_id``) or ``agent_id``'s own (crew_id None), if any."""
        sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.workspace_id = ? AND e.namespace = ?"
        sql += " AND e.topic_key = ? AND COALESCE(e.crew_id, '') = ? AND e.status = 'live'"
        params: tuple[object, ...] = (workspace_id, namespace, topic_key, crew_id or "")
        if crew_id is None and agent_id is not None:
            sql += " AND e.agent_id = ?"
            params += (agent_id,)
        row = await self._read(lambda c: c.execute(sql, params).fetchone())
        return None if row is None else _entry(row)

    async def history(
        self,
        workspace_id: str,
        namespace: str,
        topic_key: str,
        limit: int = 100,
        *,
        crew_id: str | bool | None = True,
        agent_id: str | None = None,
    ) -> list[StoredEntry]:
        """Every entry that held ``topic_key`` (live, superseded or retired), newest first: in
        every scope (``crew_id`` True), the agent's own (None) or one crew's. With ``agent_id``,
        entries outside a crew are that agent's only (another agent's own key is not shown)."""
        sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.workspace_id = ? AND e.namespace = ?"
        sql += " AND e.topic_key = ?"
        params: tuple[object, ...] = (workspace_id, namespace, topic_key)
        if crew_id is not True:
            sql += " AND COALESCE(e.crew_id, '') = ?"
            params += (crew_id or "",)
        if agent_id is not None:
            sql += " AND (e.crew_id IS NOT NULL OR e.agent_id = ?)"
            params += (agent_id,)
        sql += " ORDER BY e.seq DESC LIMIT ?"
        rows = await self._read(lambda c: c.execute(sql, (*params, limit)).fetchall())
        return [_entry(r) for r in rows]

    async def feedback(self, workspace_id: str, entry_id: str, positive: bool, now: datetime) -> StoredEntry:
        """Apply one ``+`` or ``-``: the importance seed and confidence move by FEEDBACK (kept in
        [0, 1]); the RETIRE_AFTER-th negative retires the entry. NotFound unless it is a live entry
        of the workspace."""
        step = FEEDBACK[positive]

        def run(conn: Conn, delta: Delta) -> StoredEntry:
            sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.workspace_id = ? AND e.id = ?"
            row = conn.execute(sql, (workspace_id, entry_id)).fetchone()
            if row is None or _entry(row).status != "live":
                raise NotFound(f"no live entry {entry_id} in workspace {workspace_id}")
            entry = _entry(row)
            importance = _unit(entry.base_importance + step)
            negative = entry.negative + (0 if positive else 1)
            confidence = _unit(entry.confidence + step)
            low = confidence <= RETIRE_CONFIDENCE + 1e-9
            status = "retired" if not positive and negative >= RETIRE_AFTER and low else "live"
            conn.execute(
                "UPDATE journal_entries SET importance = ?, confidence = ?, positive = positive + ?,"
                " negative = ?, status = ? WHERE id = ?",
                (importance, confidence, int(positive), negative, status, entry_id),
            )
            cur = conn.execute(
                "UPDATE journal_embeddings SET base_importance = ?, importance_score = max(0.0, importance_score + ?)"
                " WHERE entry_id = ? RETURNING importance_score",
                (importance, step, entry_id),
            )
            scored = cur.fetchone()
            if status != "live":
                delta.gone.add(entry_id)
            elif scored is not None:
                delta.importance[entry_id] = float(scored[0])
            return _read_entry(conn, entry_id)

        return await self._serve_write(run)

    async def restore(self, workspace_id: str, entry_id: str) -> StoredEntry:
        """Serve a retired entry again: live, its negative votes cleared, its confidence at least
        ``RESTORED_CONFIDENCE``. NotFound unless it is a retired entry of the workspace."""

        def run(conn: Conn, delta: Delta) -> StoredEntry:
            sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.workspace_id = ? AND e.id = ?"
            row = conn.execute(sql, (workspace_id, entry_id)).fetchone()
            if row is None or _entry(row).status != "retired":
                raise NotFound(f"no retired entry {entry_id} in workspace {workspace_id}")
            conn.execute(
                "UPDATE journal_entries SET status = 'live', negative = 0, confidence = max(confidence, ?)"
                " WHERE id = ?",
                (RESTORED_CONFIDENCE, entry_id),
            )
            delta.reload = True  # its vector row comes back: the cached matrix is read again
            return _read_entry(conn, entry_id)

        return await self._serve_write(run)

    async def forget(
        self,
        workspace_id: str,
        namespace: str,
        now: datetime,
        *,
        entry_id: str | None = None,
        topic_key: str | None = None,
        crew_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[str]:
        """Move an entry (by id), or every entry that held a topic key in a scope (the crew's, or
        the agent's own for None; its history too), into the archive with reason ``forgotten``, and
        delete them from the journal. Returns the ids."""
        params: tuple[object, ...]
        if topic_key is not None:
            where = "workspace_id = ? AND namespace = ? AND topic_key = ? AND COALESCE(crew_id, '') = ?"
            params = (workspace_id, namespace, topic_key, crew_id or "")
            if crew_id is None and agent_id is not None:
                where += " AND agent_id = ?"
                params += (agent_id,)
        else:
            where, params = "workspace_id = ? AND namespace = ? AND id = ?", (workspace_id, namespace, entry_id or "")
        return await self._archive(where, params, "forgotten", now)

    async def prune_expired(self, now: datetime) -> list[str]:
        """Archive (reason ``expired``) and delete every entry whose ``expires_at`` has passed."""
        return await self._archive(qs.EXPIRED, (to_iso(now),), "expired", now)

    async def _archive(self, where: str, params: tuple[object, ...], reason: str, now: datetime) -> list[str]:
        def run(conn: Conn, delta: Delta) -> list[str]:
            ids = [r[0] for r in conn.execute(f"SELECT id FROM journal_entries WHERE {where}", params)]
            if ids:
                archive = qs.ARCHIVE_WHERE.format(where=where)
                conn.execute(archive, (ARCHIVE_PAYLOAD_CHARS, to_iso(now), reason, *params))
                conn.execute(f"DELETE FROM journal_entries WHERE {where}", params)
                delta.gone.update(ids)
            return ids

        return await self._serve_write(run)

    async def merge_into(self, workspace_id: str, kept_id: str, ids: Sequence[str]) -> list[str]:
        """Mark the live entries ``ids`` superseded by the live entry ``kept_id`` (near-duplicates a
        consolidation merged), which takes their access counts, in one transaction. Returns the ids
        merged; none when ``kept_id`` is not live."""

        def run(conn: Conn, delta: Delta) -> list[str]:
            live = "workspace_id = ? AND status = 'live'"
            if (
                conn.execute(
                    f"SELECT 1 FROM journal_entries WHERE {live} AND id = ?", (workspace_id, kept_id)
                ).fetchone()
                is None
            ):
                return []
            merged = []
            for entry_id in dict.fromkeys(i for i in ids if i != kept_id):
                row = conn.execute(
                    f"UPDATE journal_entries SET status = 'superseded', superseded_by = ? WHERE {live} AND id = ?"
                    " RETURNING access_count",
                    (kept_id, workspace_id, entry_id),
                ).fetchone()
                if row is not None:
                    conn.execute(
                        "UPDATE journal_entries SET access_count = access_count + ? WHERE id = ?", (row[0], kept_id)
                    )
                    delta.gone.add(entry_id)
                    merged.append(entry_id)
            return merged

        return await self._serve_write(run)

    async def memories(
        self,
        workspace_id: str,
        namespace: str | None,
        limit: int,
        *,
        agent_id: str | None = None,
        crew_id: str | None = None,
    ) -> list[StoredEntry]:
        """Live, unexpired typed memories of the workspace (one namespace, or all), newest first;
        with ``agent_id``, only that agent's own and (with ``crew_id``) its crew's."""
        where = ScopeFilter(workspace_id, agent_id=agent_id, crew_id=crew_id, namespace=namespace, private=True)
        scope, params = qs.scope_clause(where)
        sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE {scope} AND e.memory_type IS NOT NULL"
        sql += " ORDER BY e.seq DESC LIMIT ?"
        rows = await self._read(lambda c: c.execute(sql, (*params, limit)).fetchall())
        return [_entry(r) for r in rows]

    async def search(self, q: str, workspace_id: str, limit: int) -> list[StoredEntry]:
        """Every entry of the workspace matching all words of ``q``, best BM25 first."""
        match = qs.fts_match(q, any_token=False)
        if match is None:
            return []
        sql = (
            f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries_fts f JOIN journal_entries e ON e.seq = f.rowid"
            " WHERE journal_entries_fts MATCH ? AND e.workspace_id = ?"
            " ORDER BY bm25(journal_entries_fts), e.seq DESC LIMIT ?"
        )
        rows = await self._read(lambda c: c.execute(sql, (match, workspace_id, limit)).fetchall())
        return [_entry(r) for r in rows]

    async def recent(self, workspace_id: str, limit: int) -> list[StoredEntry]:
        sql = f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.workspace_id = ? ORDER BY e.seq DESC LIMIT ?"
        rows = await self._read(lambda c: c.execute(sql, (workspace_id, limit)).fetchall())
        return [_entry(r) for r in rows]

    async def fetch(self, workspace_id: str, ids: Sequence[str]) -> dict[str, StoredEntry]:
        """The listed entries that are in the workspace. ``+workspace_id`` keeps SQLite on the id
        index (a lookup per id) instead of the workspace index (a scan of the workspace)."""

        def run(conn: Conn) -> list[Any]:
            rows: list[Any] = []
            for part in qs.chunks(list(ids)):
                sql = (
                    f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e"
                    f" WHERE e.id IN ({qs.placeholders(len(part))}) AND +e.workspace_id = ?"
                )
                rows += conn.execute(sql, (*part, workspace_id)).fetchall()
            return rows

        return {entry.id: entry for entry in map(_entry, await self._read(run))}

    # -- embeddings and recall -----------------------------------------------------------------
    async def unindexed(self, model: str, limit: int) -> list[StoredEntry]:
        """Live embeddable entries without a vector of ``model``, oldest first: those with none (on a
        partial index), then, only while vectors of another model remain, those with another's."""

        def run(conn: Conn) -> list[Any]:
            rows = conn.execute(qs.UNINDEXED, (limit,)).fetchall()
            if len(rows) < limit and conn.execute(qs.OTHER_MODEL, (model,)).fetchone() is not None:
                rows += conn.execute(qs.OTHER_MODEL_ENTRIES, (model, limit - len(rows))).fetchall()
            return rows

        return [_entry(r) for r in await self._read(run)]

    async def add_embeddings(self, rows: Sequence[NewEmbedding], edges: Sequence[Relation], now: datetime) -> None:
        stamp = to_iso(now)
        values = [
            (
                r.entry_id,
                to_blob(r.vector),
                len(r.vector),
                r.model,
                stamp,
                r.base_importance,
                r.base_importance,
                r.entry_id,
            )
            for r in rows
        ]

        from sidecar.episodic.vector_set import VectorRow  # numpy: vectors are being stored

        def run(conn: Conn, delta: Delta) -> None:
            conn.executemany(qs.UPSERT_EMBEDDING, values)
            conn.executemany(
                "UPDATE journal_entries SET vector_model = ? WHERE id = ?", [(r.model, r.entry_id) for r in rows]
            )
            _insert_relations(conn, edges, stamp)
            for part in qs.chunks([r.entry_id for r in rows]):
                sql = f"{qs.VECTOR_ROW} WHERE e.status = 'live' AND j.entry_id IN ({qs.placeholders(len(part))})"
                for found in conn.execute(sql.replace("SELECT ", "SELECT e.workspace_id, j.model, ", 1), part):
                    delta.rows.setdefault((found[1], found[0]), []).append(VectorRow(*found[2:]))

        await self._serve_write(run)

    async def vectors(self, workspace_id: str, model: str) -> VectorSet:
        """The workspace's cached vector matrix for ``model``, reloaded when the journal's
        generation moved past it (a write this process could not apply in place, or another's)."""

        from sidecar.episodic.vector_set import VectorRow, VectorSet  # numpy: only once there are vectors to rank

        def run(conn: Conn) -> VectorSet:
            generation = int(conn.execute(qs.GENERATION).fetchone()[0])
            cached = self._cache.get(model, workspace_id, generation)
            if cached is not None:
                return cached
            # Read in batches into a matrix sized once: the rows' bytes are never all held beside it.
            count = int(conn.execute(qs.COUNT_VECTORS, (workspace_id, model)).fetchone()[0])
            cursor = conn.execute(qs.LOAD_VECTORS, (workspace_id, model))
            batch = [VectorRow(*r) for r in cursor.fetchmany(_LOAD_BATCH)]
            loaded = VectorSet(batch[0].dim if batch else 0, capacity=count)
            while batch:
                loaded.append(batch)
                batch = [VectorRow(*r) for r in cursor.fetchmany(_LOAD_BATCH)]
            self._cache.put(model, workspace_id, generation, loaded)
            return loaded

        return await self._read(run)

    async def cosines(
        self, workspace_id: str, model: str, ids: Sequence[str], query: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine to ``query`` of each listed entry with a served vector of ``model``."""
        return (await self.vectors(workspace_id, model)).cosines(ids, query)

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
        vectors = await self.vectors(where.workspace_id, model)
        return vectors.rank(where, query, limit, weighted=weighted, exclude=exclude, floor=floor)

    async def bm25_rank(self, where: ScopeFilter, q: str, limit: int) -> list[str]:
        """Ids of embeddable entries in scope matching any word of ``q``, best BM25 first. Words in
        more than ``MAX_TERM_DOCS`` entries are left out (none left: no BM25 candidates)."""
        return [r[0] for r in await self._read(lambda c: self._bm25(c, where, q, limit, "e.id"))]

    async def bm25_entries(self, where: ScopeFilter, q: str, limit: int) -> list[StoredEntry]:
        """The entries of :meth:`bm25_rank`, in its order, read by the same statement."""
        return [_entry(r) for r in await self._read(lambda c: self._bm25(c, where, q, limit, qs.ENTRY_COLUMNS))]

    def _bm25(self, conn: Conn, where: ScopeFilter, q: str, limit: int, columns: str) -> list[Any]:
        match = qs.fts_match(" ".join(self._evidence(conn, q)), any_token=True)
        if match is None:
            return []
        scope, params = qs.scope_clause(where)
        sql = (
            f"SELECT {columns} FROM journal_entries_fts f JOIN journal_entries e ON e.seq = f.rowid"
            f" WHERE journal_entries_fts MATCH ? AND {scope} AND e.embeddable = 1"
            " ORDER BY bm25(journal_entries_fts), e.seq DESC LIMIT ?"
        )
        return conn.execute(sql, (match, *params, limit)).fetchall()

    def _evidence(self, conn: Conn, q: str) -> list[str]:
        """The words of ``q`` in at most ``MAX_TERM_DOCS`` entries. Counting a word's entries walks
        its whole posting list (about 0.5 ms for one in 10,000 entries), so a word found in more is
        remembered as such for the journal's generation: every write that can take an entry out of
        the FTS5 mirror (a delete, an edit) moves the generation, and until one does a word's count
        can only grow."""
        generation = int(conn.execute(qs.GENERATION).fetchone()[0])
        seen, common = self._common
        if seen != generation:
            common = frozenset()
        words, found = [], []
        for word in dict.fromkeys(qs.tokens(q)):
            if word in common:
                continue
            row = conn.execute(qs.TERM_DOCS, (word,)).fetchone()
            if row is None or row[1] <= qs.MAX_TERM_DOCS:
                words.append(word)
            else:
                found.append(word)
        if found or seen != generation:
            self._common = (generation, common.union(found))
        return words

    async def mark_referenced(self, workspace_id: str, ids: Sequence[str], now: datetime) -> None:
        def run(conn: Conn) -> None:
            for part in qs.chunks(list(ids)):
                marks = qs.placeholders(len(part))
                conn.execute(
                    "UPDATE journal_embeddings SET reference_count = reference_count + 1, last_referenced_at = ?"
                    f" WHERE entry_id IN (SELECT id FROM journal_entries WHERE id IN ({marks}) AND +workspace_id = ?)",
                    (to_iso(now), *part, workspace_id),
                )
                conn.execute(
                    "UPDATE journal_entries SET access_count = access_count + 1, accessed_at = ?"
                    f" WHERE id IN ({marks}) AND +workspace_id = ?",
                    (to_iso(now), *part, workspace_id),
                )

        await self._write(run)

    async def crew_signature(self, crew_id: str) -> tuple[int, ...]:
        """What moves when crew entries are added, embedded or removed (their count, newest seq and
        vectors): a cheap question before comparing every entry."""
        sql = (
            "SELECT COUNT(*), COALESCE(MAX(e.seq), 0), COUNT(e.vector_model) FROM journal_entries e WHERE e.crew_id = ?"
        )
        return await self._read(lambda c: tuple(int(v) for v in c.execute(sql, (crew_id,)).fetchone()))

    async def crew_entries(self, crew_id: str, ids: Sequence[str] | None = None) -> list[SharedEntry]:
        """Every entry of the crew, or those of ``ids`` that are the crew's (any status: a crew
        store serves by the same rules), with its vector and decayed importance when it has one,
        in journal order."""
        sql = (
            f"SELECT {qs.ENTRY_COLUMNS}, j.model, j.vector, j.dim, j.importance_score FROM journal_entries e"
            " LEFT JOIN journal_embeddings j ON j.entry_id = e.id WHERE e.crew_id = ?"
        )

        def run(conn: Conn) -> list[Any]:
            if ids is None:
                return conn.execute(f"{sql} ORDER BY e.seq", (crew_id,)).fetchall()
            rows: list[Any] = []
            for part in qs.chunks(list(ids)):
                rows += conn.execute(f"{sql} AND e.id IN ({qs.placeholders(len(part))})", (crew_id, *part)).fetchall()
            return sorted(rows, key=lambda r: int(r[0]))

        rows = await self._read(run)
        shared = []
        for row in rows:
            entry = _entry(row)
            model, blob, dim, importance = row[-4:]
            vector = from_blob(blob, dim) if blob is not None else None
            shared.append(
                SharedEntry(
                    entry,
                    model if vector is not None else None,
                    vector,
                    float(importance) if vector is not None else entry.base_importance,
                )
            )
        return shared

    async def importance_rows(self) -> list[ImportanceRow]:
        sql = "SELECT entry_id, base_importance, indexed_at, reference_count FROM journal_embeddings"
        rows = await self._read(lambda c: c.execute(sql).fetchall())
        return [ImportanceRow(r[0], float(r[1]), parse_iso(r[2]), int(r[3])) for r in rows]

    async def set_importance(self, scores: Sequence[tuple[str, float]]) -> None:
        sql = "UPDATE journal_embeddings SET importance_score = ? WHERE entry_id = ?"

        def run(conn: Conn, delta: Delta) -> None:
            conn.executemany(sql, [(s, i) for i, s in scores])
            delta.importance.update(scores)

        await self._serve_write(run)

    # -- relations -----------------------------------------------------------------------------
    async def add_relations(self, relations: Sequence[Relation], now: datetime) -> None:
        await self._write(lambda c: _insert_relations(c, relations, to_iso(now)))

    async def relations_of(self, workspace_id: str, ids: Sequence[str], relation: str) -> list[Relation]:
        """Edges of ``relation`` touching ``ids`` in either direction, both ends in the workspace."""

        def run(conn: Conn) -> list[Relation]:
            found: list[Relation] = []
            for part in qs.chunks(list(ids)):
                marks = qs.placeholders(len(part))
                sql = (
                    "SELECT r.src_entry_id, r.dst_entry_id, r.relation, r.weight FROM memory_relations r"
                    " JOIN journal_entries s ON s.id = r.src_entry_id"
                    " JOIN journal_entries d ON d.id = r.dst_entry_id"
                    " WHERE r.relation = ? AND s.workspace_id = ? AND d.workspace_id = ?"
                    f" AND (r.src_entry_id IN ({marks}) OR r.dst_entry_id IN ({marks}))"
                )
                rows = conn.execute(sql, (relation, workspace_id, workspace_id, *part, *part))
                found += [Relation(*row) for row in rows]
            return found

        return await self._read(run)

    # -- maintenance ---------------------------------------------------------------------------
    async def health_inputs(self, workspace_id: str, crew_id: str | None) -> HealthInputs:
        scope, params = qs.scope_clause(ScopeFilter(workspace_id, crew_id=crew_id))
        return await self._read(lambda c: _health_inputs(c, scope, params))

    async def save_health(self, snapshot: HealthSnapshot) -> None:
        s = snapshot
        metrics = (s.freshness, s.coverage, s.coherence, s.efficiency, s.reachability, s.score)
        values = (s.workspace_id, s.crew_id or "", s.snapshot_date, *metrics)
        await self._write(lambda c: c.execute(qs.SAVE_HEALTH, values))

    async def latest_health(self, workspace_id: str, crew_id: str | None) -> HealthSnapshot | None:
        row = await self._read(lambda c: c.execute(qs.LATEST_HEALTH, (workspace_id, crew_id or "")).fetchone())
        if row is None:
            return None
        return HealthSnapshot(row[0], row[1] or None, *row[2:])

    async def health_history(self, workspace_id: str, crew_id: str | None, limit: int) -> list[HealthSnapshot]:
        """The newest ``limit`` stored snapshots (one a day), oldest first."""
        rows = await self._read(lambda c: c.execute(qs.HEALTH_HISTORY, (workspace_id, crew_id or "", limit)).fetchall())
        return [HealthSnapshot(r[0], r[1] or None, *r[2:]) for r in reversed(rows)]

    async def workspaces(self) -> list[str]:
        rows = await self._read(lambda c: c.execute("SELECT DISTINCT workspace_id FROM journal_entries").fetchall())
        return sorted(r[0] for r in rows)

    async def compact(self, cutoff: datetime, now: datetime) -> int:
        """Archive entries older than ``cutoff`` (payload cut to 400 chars), then delete them.

        Embeddings and relations go with them (ON DELETE CASCADE); the FTS triggers drop them from
        the mirror. ``priority = permanent`` entries are never compacted.
        """
        before = to_iso(cutoff)

        def run(conn: Conn, delta: Delta) -> int:
            conn.execute(qs.ARCHIVE, (ARCHIVE_PAYLOAD_CHARS, to_iso(now), "compacted", before))
            delta.reload = True
            return conn.execute(qs.DELETE_ARCHIVED, (before,)).rowcount

        return await self._serve_write(run)

    async def entries_since_update(self, workspace_id: str, agent_id: str, reset_types: Sequence[str]) -> int:
        """The agent's entries after its latest entry of one of ``reset_types`` (those not counted)."""
        marks = qs.placeholders(len(reset_types))
        sql = (
            "SELECT COUNT(*) FROM journal_entries WHERE workspace_id = ? AND agent_id = ?"
            f" AND entry_type NOT IN ({marks}) AND seq > COALESCE((SELECT MAX(seq) FROM journal_entries"
            f" WHERE workspace_id = ? AND agent_id = ? AND entry_type IN ({marks})), 0)"
        )
        params = (workspace_id, agent_id, *reset_types, workspace_id, agent_id, *reset_types)
        row = await self._read(lambda c: c.execute(sql, params).fetchone())
        return int(row[0])

    async def cost_since(self, workspace_id: str, agent_id: str, since: datetime) -> CostTotals:
        row = await self._read(lambda c: c.execute(qs.COST, (workspace_id, agent_id, to_iso(since))).fetchone())
        return CostTotals(int(row[0]), int(row[1]), float(row[2]))


def _unit(value: float) -> float:
    return round(min(1.0, max(0.0, value)), 6)


def _read_entry(conn: Conn, entry_id: str) -> StoredEntry:
    return _entry(
        conn.execute(f"SELECT {qs.ENTRY_COLUMNS} FROM journal_entries e WHERE e.id = ?", (entry_id,)).fetchone()
    )


def _entry(row: Any) -> StoredEntry:
    return StoredEntry(
        seq=row[0], id=row[1], workspace_id=row[2], crew_id=row[3], agent_id=row[4], ts=parse_iso(row[5]),
        entry_type=row[6], severity=row[7], summary=row[8], payload=_json(row[9]), refs=_json(row[10]),
        priority=row[14] if row[14] is not None else row[11], embeddable=bool(row[12]), memory_type=row[13],
        confidence=float(row[15]), tags=tuple(json.loads(row[16])), expires_at=_when(row[17]), topic_key=row[18],
        namespace=row[19], status=row[20], superseded_by=row[21], importance=row[22], positive=row[23],
        negative=row[24], access_count=row[25], accessed_at=_when(row[26]),
    )  # fmt: skip


def _json(text: str) -> Any:
    """``json.loads``; the empty object most payloads and refs hold is not handed to the parser
    (a recall reads about 90 rows: a quarter of their reading was the parser's)."""
    return {} if text == "{}" else json.loads(text)


def _when(text: str | None) -> datetime | None:
    return None if text is None else parse_iso(text)


def _insert_relations(conn: Conn, relations: Sequence[Relation], stamp: str) -> None:
    conn.executemany(
        qs.UPSERT_RELATION,
        [
            (r.src_entry_id, r.dst_entry_id, r.relation, r.weight, stamp, r.src_entry_id, r.dst_entry_id)
            for r in relations
        ],
    )


def _health_inputs(conn: Conn, scope: str, params: list[object]) -> HealthInputs:
    count_sql = f"SELECT COUNT(*) FROM journal_entries e WHERE {scope} AND e.embeddable = 1"
    embeddable = int(conn.execute(count_sql, params).fetchone()[0])
    model_row = conn.execute(qs.DOMINANT_MODEL.format(scope=scope), params).fetchone()
    rows = [] if model_row is None else conn.execute(qs.HEALTH_ROWS.format(scope=scope), (*params, model_row[0]))
    import numpy as np  # a health score's inputs only: not on an idle sidecar

    ts: list[datetime] = []
    vectors: list[npt.NDArray[np.float32]] = []
    linked = 0
    for stamp, blob, dim, has_edge in rows:
        vector = from_blob(blob, dim)
        if vector is None or (vectors and len(vector) != len(vectors[0])):
            continue
        ts.append(parse_iso(stamp))
        vectors.append(vector)
        linked += int(has_edge)
    matrix = np.vstack(vectors) if vectors else np.zeros((0, 0), np.float32)
    return HealthInputs(embeddable, len(ts), ts, matrix, linked)
