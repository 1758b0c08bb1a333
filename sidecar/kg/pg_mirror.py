"""The lead's copy of its crew's knowledge graph into the crew store.

The lead's ``kg.sqlite`` is the source (the crew scope's rows, every workspace); the mirror keeps
``crew_kg_*`` (:mod:`sidecar.kg.pg_kg`) level with it, with the lead's ids. The graph never deletes
a row: it adds entities, aliases and facts, and ends facts (``valid_to``), either when a new fact
replaces them (same subject and predicate; the ended fact names it in ``invalidated_by``) or by an
invalidation. So a round sends what is newer than the last round saw (ids above its marks, and the
facts the new ones ended) and the facts a write named (``push``). A full compare of every row, by
value, runs at start, every ``interval`` seconds (the crew reindex tick) and after the store
failed, which heals a store that was down, wiped or restored from an old backup.

A crew write the lead answers (its own API with scope crew, or a member's through the crew
listener) pushes at once, so the store holds it before the answer returns; when the store is down
the write stands in ``kg.sqlite`` and the rounds, retried with backoff, catch up.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.store.base import StoreUnavailable
from sidecar.store.mirror import run_rounds
from sidecar.tasks import stop_task

if TYPE_CHECKING:
    from sidecar.store.postgres import PostgresCrewStore

__all__ = ["ANALYZE_AFTER", "CrewKgMirror", "GraphRows"]

log = structlog.get_logger("sidecar.kg.mirror")
#: Rows changed in one round past which the store's planner statistics are refreshed (without them,
#: after a first copy, it walks the room index for a subject's facts: 31 ms an as-of question at
#: 100k facts, not 4).
ANALYZE_AFTER = 1000

_ENTITY = "id, workspace_id, key, name, type, created_at"
_ALIAS = "rowid, workspace_id, alias, entity_id"
_FACT = (
    "id, workspace_id, subject_id, predicate, object_id, valid_from, valid_to, confidence, source, room, text,"
    " recorded_at, invalidated_by"
)
Row = tuple[Any, ...]


@dataclass
class GraphRows:
    """Rows of the crew's graph as the lead holds them, and the ids they were read up to."""

    entities: list[Row] = field(default_factory=list)
    aliases: list[Row] = field(default_factory=list)  # (pos, workspace_id, alias, entity_id)
    facts: list[Row] = field(default_factory=list)
    marks: tuple[int, int, int] = (0, 0, 0)  # the highest entity id, alias rowid and fact id read


class _Source:
    """The lead's ``kg.sqlite``, read on a query-only connection of its own on one thread."""

    def __init__(self, path: Path, crew: str) -> None:
        self.path = path
        self.crew = crew
        self._conn: sqlite3.Connection | None = None
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="kg-mirror")

    async def run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def aclose(self) -> None:
        await self.run(self._close)
        self._pool.shutdown()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _read(self, fn: Any) -> GraphRows:
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout = 5000")
            self._conn.execute("PRAGMA query_only = ON")
        conn = self._conn
        conn.execute("BEGIN")  # one snapshot: the marks and the rows agree
        try:
            out: GraphRows = fn(conn)
            out.marks = conn.execute(
                "SELECT (SELECT COALESCE(MAX(id), 0) FROM kg_entities), (SELECT COALESCE(MAX(rowid), 0) FROM kg_aliases),"
                " (SELECT COALESCE(MAX(id), 0) FROM kg_facts)"
            ).fetchone()
            return out
        finally:
            conn.execute("COMMIT")

    def everything(self) -> GraphRows:
        def read(conn: sqlite3.Connection) -> GraphRows:
            crew = (self.crew,)
            return GraphRows(
                conn.execute(f"SELECT {_ENTITY} FROM kg_entities WHERE crew_id = ?", crew).fetchall(),
                conn.execute(f"SELECT {_ALIAS} FROM kg_aliases WHERE crew_id = ?", crew).fetchall(),
                conn.execute(f"SELECT {_FACT} FROM kg_facts WHERE crew_id = ?", crew).fetchall(),
            )

        return self._read(read)

    def since(self, marks: tuple[int, int, int], fact_ids: list[int]) -> GraphRows:
        """Rows above ``marks``, the facts new facts may have ended, and the facts named."""

        def read(conn: sqlite3.Connection) -> GraphRows:
            (entity, alias, fact), crew = marks, self.crew
            new = conn.execute(f"SELECT {_FACT} FROM kg_facts WHERE id > ? AND crew_id = ?", (fact, crew)).fetchall()
            rows = {r[0]: r for r in new}
            for ws, subject, predicate in {(r[1], r[2], r[3]) for r in new}:
                rivals = conn.execute(
                    f"SELECT {_FACT} FROM kg_facts WHERE workspace_id = ? AND crew_id = ? AND subject_id = ?"
                    " AND predicate = ? AND invalidated_by > ?",
                    (ws, crew, subject, predicate, fact),
                )
                rows.update((r[0], r) for r in rivals)
            for start in range(0, len(fact_ids), 500):
                part = fact_ids[start : start + 500]
                marks_sql = ",".join("?" * len(part))
                named = conn.execute(
                    f"SELECT {_FACT} FROM kg_facts WHERE crew_id = ? AND id IN ({marks_sql})", (crew, *part)
                )
                rows.update((r[0], r) for r in named)
            return GraphRows(
                conn.execute(
                    f"SELECT {_ENTITY} FROM kg_entities WHERE id > ? AND crew_id = ?", (entity, crew)
                ).fetchall(),
                conn.execute(
                    f"SELECT {_ALIAS} FROM kg_aliases WHERE rowid > ? AND crew_id = ?", (alias, crew)
                ).fetchall(),
                list(rows.values()),
            )

        return self._read(read)


class CrewKgMirror:
    """Keeps the crew store's graph level with the lead's ``kg.sqlite`` (see the module's text)."""

    def __init__(
        self, store: PostgresCrewStore, path: Path, *, interval: float, tick: float = 1.0, limit: float | None = None
    ) -> None:
        self.store = store
        self.crew = store.crew
        self.source = _Source(path, store.crew)
        self.interval = interval
        self.tick = tick
        # How long a push may hold up the write's answer.
        self.limit = limit if limit is not None else store.timeout * 3
        self.failures = 0
        self.down = False  # the last round failed: pushes leave it to the rounds
        self._full = True  # the first round compares everything
        self._marks = (0, 0, 0)
        self._named: set[int] = set()  # facts a write named, not yet sent
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._wake.set()
        self._task: asyncio.Task[None] | None = None
        self._last_full = 0.0
        self._stopped = False

    def start(self) -> None:
        self._task = asyncio.create_task(
            run_rounds(self._round, self._wake, self.tick, self._failed), name="crew-kg-mirror"
        )

    async def stop(self) -> None:
        self._stopped = True
        if self._task is not None:
            await stop_task(self._task)
        await self.source.aclose()

    async def push(self, fact_ids: Iterable[int]) -> bool:
        """Send the graph's newest changes and these facts now (a crew write, before its answer);
        False when the store is down or slow (the rounds send them later)."""
        self._named.update(fact_ids)
        if self._stopped:
            return False
        if self.down:
            self._wake.set()
            return False
        try:
            async with asyncio.timeout(self.limit):
                await self.step()
        except (StoreUnavailable, OSError, TimeoutError) as exc:
            log.warning("kg.mirror_push_failed", error=str(exc) or type(exc).__name__)
            self._wake.set()
            return False
        except Exception:  # the write stands in kg.sqlite whatever happened here: never fail it
            log.exception("kg.mirror_push_failed")
            self._wake.set()
            return False
        return True

    async def _round(self) -> None:
        if self.interval > 0 and asyncio.get_running_loop().time() - self._last_full >= self.interval:
            self._full = True
        await self.step()

    def _failed(self) -> None:
        self.failures += 1
        self.down, self._full = True, True  # after a failure, compare everything

    async def step(self) -> tuple[int, int]:
        """One round: a full compare when due, else what is new; (rows sent, rows removed)."""
        async with self._lock:
            named, self._named = self._named, set()
            try:
                if self._full:
                    counts = await self.compare()
                    self._full = False
                    self._last_full = asyncio.get_running_loop().time()
                else:
                    rows = await self.source.run(self.source.since, self._marks, sorted(named))
                    counts = (await self._send(rows), 0)
                    self._marks = rows.marks
            except BaseException:
                self._named |= named
                raise
            self.down = False
            return counts

    async def compare(self) -> tuple[int, int]:
        """Every row of the crew's graph against the store's, by value: those that differ are sent,
        the store's rows the graph lacks removed; (rows sent, rows removed)."""
        rows: GraphRows = await self.source.run(self.source.everything)
        async with self.store.connection() as conn:
            entities = {
                r[0]: tuple(r)
                for r in await conn.fetch(f"SELECT {_ENTITY} FROM crew_kg_entities WHERE crew = $1", self.crew)
            }
            aliases = {
                (r[1], r[2]): tuple(r)
                for r in await conn.fetch(
                    "SELECT pos, workspace_id, alias, entity_id FROM crew_kg_aliases WHERE crew = $1", self.crew
                )
            }
            facts = {
                r[0]: tuple(r)
                for r in await conn.fetch(f"SELECT {_FACT} FROM crew_kg_facts WHERE crew = $1", self.crew)
            }
        changed = GraphRows(
            [r for r in rows.entities if entities.get(r[0]) != tuple(r)],
            [r for r in rows.aliases if aliases.get((r[1], r[2])) != tuple(r)],
            [r for r in rows.facts if facts.get(r[0]) != tuple(r)],
        )
        gone = (
            sorted(entities.keys() - {r[0] for r in rows.entities}),
            sorted(aliases.keys() - {(r[1], r[2]) for r in rows.aliases}),
            sorted(facts.keys() - {r[0] for r in rows.facts}),
        )
        sent = await self._send(changed, gone)
        self._marks = rows.marks
        removed = sum(len(g) for g in gone)
        if sent or removed:
            log.info("kg.mirrored", sent=sent, removed=removed)
        return sent, removed

    async def _send(
        self, rows: GraphRows, gone: tuple[list[int], list[tuple[str, str]], list[int]] | None = None
    ) -> int:
        """Upsert ``rows`` (and remove ``gone``: entity ids, (workspace, alias), fact ids) in one transaction."""
        crew = self.crew
        if not (rows.entities or rows.aliases or rows.facts or (gone and any(gone))):
            return 0
        async with self.store.connection() as conn, conn.transaction():
            if rows.entities:
                await conn.executemany(
                    "INSERT INTO crew_kg_entities (crew, id, workspace_id, key, name, type, created_at)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (crew, id) DO UPDATE SET"
                    " workspace_id = $3, key = $4, name = $5, type = $6, created_at = $7",
                    [(crew, *r) for r in rows.entities],
                )
            if rows.aliases:
                await conn.executemany(
                    "INSERT INTO crew_kg_aliases (crew, pos, workspace_id, alias, entity_id) VALUES ($1, $2, $3, $4, $5)"
                    " ON CONFLICT (crew, workspace_id, alias) DO UPDATE SET pos = $2, entity_id = $5",
                    [(crew, *r) for r in rows.aliases],
                )
            if rows.facts:
                await conn.executemany(
                    "INSERT INTO crew_kg_facts (crew, id, workspace_id, subject_id, predicate, object_id, valid_from,"
                    " valid_to, confidence, source, room, text, recorded_at, invalidated_by) VALUES ($1, $2, $3, $4, $5,"
                    " $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (crew, id) DO UPDATE SET workspace_id = $3,"
                    " subject_id = $4, predicate = $5, object_id = $6, valid_from = $7, valid_to = $8, confidence = $9,"
                    " source = $10, room = $11, text = $12, recorded_at = $13, invalidated_by = $14",
                    [(crew, *r) for r in rows.facts],
                )
            if gone is not None:
                entities, aliases, facts = gone
                await conn.execute(
                    "DELETE FROM crew_kg_entities WHERE crew = $1 AND id = ANY($2::bigint[])", crew, entities
                )
                await conn.execute(
                    "DELETE FROM crew_kg_aliases WHERE crew = $1 AND (workspace_id, alias) IN"
                    " (SELECT * FROM unnest($2::text[], $3::text[]))",
                    crew, [w for w, _ in aliases], [a for _, a in aliases],
                )  # fmt: skip
                await conn.execute("DELETE FROM crew_kg_facts WHERE crew = $1 AND id = ANY($2::bigint[])", crew, facts)
        changed = len(rows.entities) + len(rows.aliases) + len(rows.facts)
        if changed + sum(len(g) for g in gone or ()) >= ANALYZE_AFTER:
            async with self.store.connection() as conn:
                await conn.execute("ANALYZE crew_kg_entities, crew_kg_aliases, crew_kg_facts", timeout=600)
        return changed
