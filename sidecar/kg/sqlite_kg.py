"""The knowledge graph in SQLite (``kg.sqlite`` beside the journal): every SQL statement of the
graph is in this module, behind :class:`SqliteKgStore`.

One :class:`~sidecar.db.Database`: writes on its writer thread (``BEGIN IMMEDIATE``), reads on a
read-only reader thread; numbered migrations applied on open. Every statement applies the scope (workspace and crew) in SQL.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import structlog

from sidecar.db import Database
from sidecar.errors import NotFound
from sidecar.kg.model import SINCE_UNKNOWN, Entity, Fact, NewFact, Scope, now_iso
from sidecar.kg.names import entity_key, entity_type, split_version

__all__ = ["KEYS_TTL", "KG_FILE", "MIGRATIONS", "SqliteKgStore"]

T = TypeVar("T")
Conn = sqlite3.Connection
log = structlog.get_logger("sidecar.kg")
KG_FILE = "kg.sqlite"
#: Seconds the keys entities are found by are kept in memory before they are read again (only
#: another process's writes need it: this one's are added as they are made).
KEYS_TTL = 30.0

MIGRATIONS: tuple[str, ...] = (
    # 1: entities (one per normalised key and scope), their aliases, facts with validity windows,
    # the files already read, and cursors (how far the journal has been read).
    """
    CREATE TABLE kg_entities (
        id INTEGER PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        crew_id TEXT NOT NULL DEFAULT '',
        key TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'thing',
        created_at TEXT NOT NULL,
        UNIQUE (workspace_id, crew_id, key)
    );
    CREATE TABLE kg_aliases (
        workspace_id TEXT NOT NULL,
        crew_id TEXT NOT NULL DEFAULT '',
        alias TEXT NOT NULL,
        entity_id INTEGER NOT NULL REFERENCES kg_entities(id),
        PRIMARY KEY (workspace_id, crew_id, alias)
    );
    CREATE INDEX kg_aliases_entity ON kg_aliases(entity_id);
    CREATE TABLE kg_facts (
        id INTEGER PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        crew_id TEXT NOT NULL DEFAULT '',
        subject_id INTEGER NOT NULL REFERENCES kg_entities(id),
        predicate TEXT NOT NULL,
        object_id INTEGER NOT NULL REFERENCES kg_entities(id),
        valid_from TEXT NOT NULL,
        valid_to TEXT,
        confidence REAL NOT NULL DEFAULT 1.0,
        source TEXT NOT NULL,
        room TEXT NOT NULL,
        text TEXT NOT NULL DEFAULT '',
        recorded_at TEXT NOT NULL,
        invalidated_by INTEGER
    );
    CREATE INDEX kg_facts_subject ON kg_facts(workspace_id, crew_id, subject_id, predicate, valid_from);
    CREATE INDEX kg_facts_object ON kg_facts(workspace_id, crew_id, object_id, valid_from);
    CREATE INDEX kg_facts_room ON kg_facts(workspace_id, crew_id, room);
    CREATE INDEX kg_facts_source ON kg_facts(workspace_id, crew_id, source);
    CREATE TABLE kg_files (
        tier TEXT NOT NULL,
        path TEXT NOT NULL,
        digest TEXT NOT NULL,
        PRIMARY KEY (tier, path)
    );
    CREATE TABLE kg_cursors (name TEXT PRIMARY KEY, position INTEGER NOT NULL);
    """,
    # 2: every file that states a fact (a fact stated by two files is stored once, read from the
    # first): when that one goes, the fact is read from another. Every file is read once more, so
    # the files read before say what they state.
    """
    CREATE TABLE kg_file_facts (
        tier TEXT NOT NULL,
        path TEXT NOT NULL,
        fact_id INTEGER NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY (tier, path, fact_id)
    );
    CREATE INDEX kg_file_facts_fact ON kg_file_facts(fact_id);
    DELETE FROM kg_files;
    """,
)

_FACT_COLUMNS = (
    "f.id, s.name, f.subject_id, f.predicate, o.name, f.object_id, f.valid_from, f.valid_to, f.confidence,"
    " f.source, f.room, f.text, f.recorded_at, f.invalidated_by"
)
_FACT_FROM = "kg_facts f JOIN kg_entities s ON s.id = f.subject_id JOIN kg_entities o ON o.id = f.object_id"
_IN_SCOPE = "f.workspace_id = ? AND f.crew_id = ?"


def _fact(row: Sequence[Any]) -> Fact:
    return Fact(*row)


def _marks(n: int) -> str:
    return ",".join("?" * n)


class SqliteKgStore:
    """The graph over one ``kg.sqlite`` file."""

    def __init__(self, db: Database) -> None:
        self.path = db.path
        self._db = db
        # Per scope: when its keys were read, and every key an entity is found by (a superset).
        self._keys: dict[Scope, tuple[float, set[str]]] = {}

    @classmethod
    async def open(cls, path: Path) -> SqliteKgStore:
        """Create or open the database and apply its migrations. When ``kg.sqlite`` is deleted or
        replaced under a running sidecar (the memory dir restored from a backup), the next write
        opens the file there now instead of committing into the deleted one."""
        store: SqliteKgStore | None = None

        def replaced(where: Path) -> None:
            if store is not None:
                store._replaced(where)

        db = Database(path, MIGRATIONS, name="kg", on_replaced=replaced)
        try:
            await db.open()
        except BaseException:
            await db.aclose()
            raise
        store = cls(db)
        return store

    async def aclose(self) -> None:
        await self._db.aclose()

    async def release_memory(self) -> None:
        await self._db.release_memory()

    def _replaced(self, path: Path) -> None:
        """On the writer thread, after the file there now was opened: the keys read from the old
        file say nothing of this one."""
        self._keys.clear()
        log.warning("kg.reopened", path=str(path))

    async def _write(self, fn: Callable[[Conn], T]) -> T:
        return await self._db.write(fn)

    async def _read(self, fn: Callable[[Conn], T]) -> T:
        return await self._db.read(fn)

    # -- writes --------------------------------------------------------------------------------
    async def add(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        *,
        file: tuple[str, str, str] | None = None,
        grown: bool = False,
    ) -> list[Fact]:
        """Add ``facts`` in one transaction (and, with ``file`` = (tier, path, digest), record that
        file as read): each the existing fact when the graph already holds it at that time. With
        ``grown``, ``facts`` are those of the lines appended to the file since its last reading:
        what the file was recorded to state stays, and these join it."""

        def run(conn: Conn) -> list[Fact]:
            ids = [_add_one(conn, scope, fact) for fact in facts]
            if file is not None:
                conn.execute("INSERT OR REPLACE INTO kg_files (tier, path, digest) VALUES (?, ?, ?)", file)
                if not grown:
                    conn.execute("DELETE FROM kg_file_facts WHERE tier = ? AND path = ?", file[:2])
                conn.executemany(
                    "INSERT OR IGNORE INTO kg_file_facts (tier, path, fact_id, line) VALUES (?, ?, ?, ?)",
                    [(*file[:2], fid, _line(fact.source)) for fid, fact in zip(ids, facts, strict=True)],
                )
            return _facts_by_id(conn, ids)

        stored = await self._write(run)
        self._learned(scope, [n for fact in facts for n in (fact.subject, fact.object)])
        return stored

    async def known_keys(self, scope: Scope) -> set[str]:
        """Every key an entity of the scope is found by, held in memory: a search asks whether its
        words name any before it asks the database. This process's own writes add to it at once;
        another process's (``memory-sidecar kg add``) count once it is read again, after
        ``KEYS_TTL`` seconds."""
        now = time.monotonic()
        held = self._keys.get(scope)
        if held is not None and now - held[0] < KEYS_TTL:
            return held[1]
        sql = "SELECT alias FROM kg_aliases WHERE workspace_id = ? AND crew_id = ?"
        keys = await self._read(lambda c: {r[0] for r in c.execute(sql, (scope.workspace_id, scope.crew_id))})
        self._keys[scope] = (now, keys)
        return keys

    def _learned(self, scope: Scope, names: Iterable[str]) -> None:
        held = self._keys.get(scope)
        if held is not None:
            held[1].update(map(_lookup_key, names))

    async def invalidate(self, scope: Scope, fact_id: int, valid_to: str) -> Fact:
        """End a fact at ``valid_to`` (it stays, with its window closed); NotFound outside the scope.
        A fact already ended earlier keeps its end."""

        def run(conn: Conn) -> Fact:
            found = _facts_by_id(conn, [fact_id], scope)
            if not found:
                raise NotFound(f"no fact {fact_id} in workspace {scope.workspace_id}", code="not_found")
            fact = found[0]
            end = max(valid_to, fact.valid_from)
            if fact.valid_to is None or fact.valid_to > end:
                conn.execute("UPDATE kg_facts SET valid_to = ? WHERE id = ?", (end, fact_id))
            return _facts_by_id(conn, [fact_id])[0]

        return await self._write(run)

    async def end_sourced(
        self,
        scope: Scope,
        source: str,
        valid_to: str,
        *,
        prefix: bool = False,
        unless_in: str | None = None,
        moved: Callable[[int, str, str], str | None] | None = None,
    ) -> list[int]:
        """End the current facts read from ``source`` (every source starting with it, with
        ``prefix``) at ``valid_to``, except those whose sentence ``unless_in`` still holds, those
        another file read into the graph states too, and those ``moved`` (called with a fact's id,
        sentence and source) names a new source for: they stay current, read from there. A whole
        file's digest is forgotten too, so the file is read again if it comes back. The ids ended."""
        like = source.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        match = "f.source LIKE ? ESCAPE '\\'" if prefix else "f.source = ?"
        sql = (
            f"SELECT f.id, f.text, f.valid_from, f.source FROM kg_facts f WHERE {_IN_SCOPE} AND {match}"
            " AND f.valid_to IS NULL"
        )
        # The file ``source`` names, when it is one and the whole of it goes.
        gone = tuple(source.removeprefix("file:").split("#")[0].split(":", 1))
        whole = source.startswith("file:") and unless_in is None and len(gone) == 2

        def run(conn: Conn) -> list[int]:
            rows = conn.execute(sql, (scope.workspace_id, scope.crew_id, like if prefix else source)).fetchall()
            if whole:
                conn.execute("DELETE FROM kg_files WHERE tier = ? AND path = ?", gone)
                conn.execute("DELETE FROM kg_file_facts WHERE tier = ? AND path = ?", gone)
            ended = []
            for fid, text, start, old in rows:
                if unless_in is not None and text and text in unless_in:
                    continue
                other = conn.execute(
                    "SELECT tier, path, line FROM kg_file_facts WHERE fact_id = ? AND NOT (tier = ? AND path = ?)"
                    " ORDER BY tier, path LIMIT 1",
                    (fid, *old.removeprefix("file:").split("#")[0].split(":", 1)) if old.startswith("file:") else
                    (fid, "", ""),
                ).fetchone()  # fmt: skip
                home = f"file:{other[0]}:{other[1]}#{other[2]}" if other else moved(fid, text, old) if moved else None
                if home is not None:
                    conn.execute("UPDATE kg_facts SET source = ? WHERE id = ?", (home, fid))
                    continue
                conn.execute("UPDATE kg_facts SET valid_to = ? WHERE id = ?", (max(valid_to, start), fid))
                ended.append(int(fid))
            return ended

        return await self._write(run)

    async def reopen(self, scope: Scope, ids: Sequence[int], valid_to: str, moved: tuple[str, str]) -> int:
        """Undo ``end_sourced`` of the facts ``ids`` (those it ended at ``valid_to`` and nothing
        changed since): current again, their source moved from file prefix ``moved[0]`` to
        ``moved[1]``. How many were."""
        if not ids:
            return 0
        old, new = moved
        sql = (
            "UPDATE kg_facts SET valid_to = NULL, source = ? || substr(source, ?) WHERE workspace_id = ?"
            f" AND crew_id = ? AND id IN ({_marks(len(ids))}) AND valid_to = max(?, valid_from)"
            " AND invalidated_by IS NULL AND substr(source, 1, ?) = ?"
        )
        params = (new, len(old) + 1, scope.workspace_id, scope.crew_id, *ids, valid_to, len(old), old)
        return await self._write(lambda c: c.execute(sql, params).rowcount)

    async def add_alias(self, scope: Scope, entity_id: int, alias: str) -> None:
        sql = "INSERT OR IGNORE INTO kg_aliases (workspace_id, crew_id, alias, entity_id) VALUES (?, ?, ?, ?)"
        await self._write(lambda c: c.execute(sql, (scope.workspace_id, scope.crew_id, entity_key(alias), entity_id)))
        self._learned(scope, [alias])

    async def set_cursor(self, name: str, position: int) -> None:
        sql = "INSERT OR REPLACE INTO kg_cursors (name, position) VALUES (?, ?)"
        await self._write(lambda c: c.execute(sql, (name, position)))

    # -- reads ---------------------------------------------------------------------------------
    async def cursor(self, name: str) -> int:
        row = await self._read(
            lambda c: c.execute("SELECT position FROM kg_cursors WHERE name = ?", (name,)).fetchone()
        )
        return int(row[0]) if row else 0

    async def file_digest(self, tier: str, path: str) -> str | None:
        sql = "SELECT digest FROM kg_files WHERE tier = ? AND path = ?"
        row = await self._read(lambda c: c.execute(sql, (tier, path)).fetchone())
        return None if row is None else str(row[0])

    async def digest_with(self, tier: str, path: str, read: Callable[[], T]) -> tuple[T, str | None]:
        """``read()`` and ``file_digest``, both on the reader's thread."""
        sql = "SELECT digest FROM kg_files WHERE tier = ? AND path = ?"

        def run(c: Conn) -> tuple[T, str | None]:
            got = read()
            row = c.execute(sql, (tier, path)).fetchone()
            return got, None if row is None else str(row[0])

        return await self._read(run)

    async def files(self, tier: str) -> dict[str, str]:
        """Every file of ``tier`` read into the graph (and not since deleted), with its digest."""
        sql = "SELECT path, digest FROM kg_files WHERE tier = ?"
        return {str(r[0]): str(r[1]) for r in await self._read(lambda c: c.execute(sql, (tier,)).fetchall())}

    async def entities(self, scope: Scope, keys: Iterable[str]) -> dict[str, Entity]:
        """Entities by the keys given (their own key or an alias), with their aliases."""
        wanted = list(dict.fromkeys(keys))
        return await self._read(lambda c: _entities(c, scope, wanted)) if wanted else {}

    async def entity_names(self, scope: Scope, limit: int) -> list[tuple[int, str]]:
        """(id, name) of the scope's entities, oldest first."""
        sql = "SELECT id, name FROM kg_entities WHERE workspace_id = ? AND crew_id = ? ORDER BY id LIMIT ?"
        rows = await self._read(lambda c: c.execute(sql, (scope.workspace_id, scope.crew_id, limit)).fetchall())
        return [(int(r[0]), str(r[1])) for r in rows]

    async def facts(
        self,
        scope: Scope,
        entity_ids: Sequence[int],
        *,
        direction: str = "both",
        predicate: str | None = None,
        as_of: str | None = None,
        current_only: bool = False,
        limit: int = 500,
    ) -> list[Fact]:
        """Facts with one of the entities as subject (``out``), object (``in``) or either, oldest first:
        every one, those holding ``as_of``, or (``current_only``) those with no end."""
        if not entity_ids:
            return []
        marks = _marks(len(entity_ids))
        filters, extra = "", []
        if predicate is not None:
            filters += " AND f.predicate = ?"
            extra.append(predicate)
        if as_of is not None:
            filters += " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
            extra += [as_of, as_of]
        elif current_only:
            filters += " AND f.valid_to IS NULL"
        # One SELECT per side, each on its own index (an OR of the two would scan the workspace).
        sides = {"out": ["f.subject_id"], "in": ["f.object_id"]}.get(direction, ["f.subject_id", "f.object_id"])
        selects, params = [], []
        for column in sides:
            selects.append(
                f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND {column} IN ({marks}){filters}"
            )
            params += [scope.workspace_id, scope.crew_id, *entity_ids, *extra]
        sql = " UNION ".join(selects) + " ORDER BY 7, 1 LIMIT ?"
        rows = await self._read(lambda c: c.execute(sql, (*params, limit)).fetchall())
        return [_fact(r) for r in rows]

    async def fact(self, scope: Scope, fact_id: int) -> Fact | None:
        found = await self._read(lambda c: _facts_by_id(c, [fact_id], scope))
        return found[0] if found else None

    async def find_fact(self, scope: Scope, subject_id: int, predicate: str, object_id: int) -> list[Fact]:
        sql = f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE}"
        sql += " AND f.subject_id = ? AND f.predicate = ? AND f.object_id = ? ORDER BY f.valid_from, f.id"
        params = (scope.workspace_id, scope.crew_id, subject_id, predicate, object_id)
        return [_fact(r) for r in await self._read(lambda c: c.execute(sql, params).fetchall())]

    async def tunnels(self, scope: Scope, room_a: str | None, room_b: str | None, limit: int) -> list[dict[str, Any]]:
        """Entities whose facts stand in two rooms or more (in ``room_a`` and in ``room_b`` when given;
        a room matches itself and the rooms under it): name, type and rooms, most rooms first."""
        params: list[Any] = [scope.workspace_id, scope.crew_id] * 2
        having = "COUNT(DISTINCT r.room) >= 2"
        for room in (room_a, room_b):
            if room is not None:
                having += " AND SUM(r.room = ? OR substr(r.room, 1, length(?) + 1) = ? || '/') > 0"
                params += [room, room, room]
        sql = (
            "SELECT e.id, e.name, e.type, group_concat(DISTINCT r.room) FROM ("
            f" SELECT f.subject_id AS entity_id, f.room FROM kg_facts f WHERE {_IN_SCOPE}"
            f" UNION SELECT f.object_id, f.room FROM kg_facts f WHERE {_IN_SCOPE}"
            f") r JOIN kg_entities e ON e.id = r.entity_id GROUP BY e.id HAVING {having}"
            " ORDER BY COUNT(DISTINCT r.room) DESC, e.name LIMIT ?"
        )
        rows = await self._read(lambda c: c.execute(sql, (*params, limit)).fetchall())
        return [{"id": r[0], "name": r[1], "type": r[2], "rooms": sorted(str(r[3]).split(","))} for r in rows]

    async def stats(self, scope: Scope) -> dict[str, Any]:
        def run(conn: Conn) -> dict[str, Any]:
            where = (scope.workspace_id, scope.crew_id)
            entities = conn.execute("SELECT COUNT(*) FROM kg_entities WHERE workspace_id = ? AND crew_id = ?", where)
            total, current, rooms = conn.execute(
                f"SELECT COUNT(*), COUNT(*) - COUNT(valid_to), COUNT(DISTINCT room) FROM kg_facts f WHERE {_IN_SCOPE}",
                where,
            ).fetchone()
            predicates = conn.execute(
                f"SELECT predicate, COUNT(*) FROM kg_facts f WHERE {_IN_SCOPE} GROUP BY predicate"
                " ORDER BY COUNT(*) DESC, predicate LIMIT 100",
                where,
            ).fetchall()
            return {
                "entities": int(entities.fetchone()[0]),
                "facts": int(total),
                "current": int(current),
                "invalidated": int(total) - int(current),
                "rooms": int(rooms),
                "predicates": {p: int(n) for p, n in predicates},
            }

        return await self._read(run)

    async def facts_at(self, scope: Scope, sources: Sequence[str], limit: int = 2000) -> list[Fact]:
        """Facts read from the given sources (``file:<tier>:<path>#<line>``), any time."""
        if not sources:
            return []
        sql = f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND f.source IN ({_marks(len(sources))})"
        params = (scope.workspace_id, scope.crew_id, *sources, limit)
        return [_fact(r) for r in await self._read(lambda c: c.execute(sql + " LIMIT ?", params).fetchall())]


# -- inside a write transaction ----------------------------------------------------------------
def _entities(conn: Conn, scope: Scope, keys: list[str]) -> dict[str, Entity]:
    out: dict[str, Entity] = {}
    for start in range(0, len(keys), 500):
        part = keys[start : start + 500]
        sql = (
            "SELECT a.alias, e.id, e.name, e.type FROM kg_aliases a JOIN kg_entities e ON e.id = a.entity_id"
            f" WHERE a.workspace_id = ? AND a.crew_id = ? AND a.alias IN ({_marks(len(part))})"
        )
        for alias, eid, name, kind in conn.execute(sql, (scope.workspace_id, scope.crew_id, *part)):
            aliases = tuple(r[0] for r in conn.execute("SELECT alias FROM kg_aliases WHERE entity_id = ?", (eid,)))
            out[alias] = Entity(eid, name, kind, aliases)
    return out


def _lookup_key(name: str) -> str:
    """The key a new entity of this name is stored and found by."""
    return entity_key(name) or name.strip().casefold()


def _entity_id(conn: Conn, scope: Scope, name: str) -> int:
    """The entity ``name`` stands for (by key or alias), created when the graph has none."""
    key = _lookup_key(name)
    sql = "SELECT entity_id FROM kg_aliases WHERE workspace_id = ? AND crew_id = ? AND alias = ?"
    row = conn.execute(sql, (scope.workspace_id, scope.crew_id, key)).fetchone()
    if row is not None:
        return int(row[0])
    display = split_version(name.strip())[0] or name.strip()
    cur = conn.execute(
        "INSERT INTO kg_entities (workspace_id, crew_id, key, name, type, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (scope.workspace_id, scope.crew_id, key, display, entity_type(key), now_iso()),
    )
    eid = int(cur.lastrowid or 0)
    conn.execute(
        "INSERT OR IGNORE INTO kg_aliases (workspace_id, crew_id, alias, entity_id) VALUES (?, ?, ?, ?)",
        (scope.workspace_id, scope.crew_id, key, eid),
    )
    return eid


def _line(source: str) -> int:
    """The line of a file source (``file:<tier>:<path>#<line>``), 0 when it names none."""
    tail = source.rsplit("#", 1)[-1] if "#" in source else ""
    return int(tail) if tail.isdigit() else 0


def _add_one(conn: Conn, scope: Scope, new: NewFact) -> int:
    """Insert one fact unless it already holds at its time, or the same place stated it at the same
    time and a rival ended it then (a file read again that states two values at one time: the later
    line's holds, and reading it again changes nothing); end what it replaces. Returns its id."""
    s_id, o_id = _entity_id(conn, scope, new.subject), _entity_id(conn, scope, new.object)
    at = new.valid_from
    held = conn.execute(
        f"SELECT f.id FROM kg_facts f WHERE {_IN_SCOPE} AND f.subject_id = ? AND f.predicate = ? AND f.object_id = ?"
        " AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?) ORDER BY f.valid_from LIMIT 1",
        (scope.workspace_id, scope.crew_id, s_id, new.predicate, o_id, at, at),
    ).fetchone()
    if held is None:
        held = conn.execute(
            f"SELECT f.id FROM kg_facts f WHERE {_IN_SCOPE} AND f.subject_id = ? AND f.predicate = ?"
            " AND f.object_id = ? AND f.valid_from = ? AND f.valid_to = ? AND f.source = ? LIMIT 1",
            (scope.workspace_id, scope.crew_id, s_id, new.predicate, o_id, at, at, new.source),
        ).fetchone()
    if held is not None:
        return int(held[0])
    rivals = _rivals(conn, scope, new, s_id, o_id)
    # The next value after this one (added out of order) ends it; the one holding at its time ends.
    later = [r for r in rivals if r[1] > at]
    valid_to = min((r[1] for r in later), default=None)
    cur = conn.execute(
        "INSERT INTO kg_facts (workspace_id, crew_id, subject_id, predicate, object_id, valid_from, valid_to,"
        " confidence, source, room, text, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope.workspace_id, scope.crew_id, s_id, new.predicate, o_id, at, valid_to, new.confidence,
            new.source, new.where, new.text[:1000], now_iso(),
        ),
    )  # fmt: skip
    fid = int(cur.lastrowid or 0)
    ended = [r[0] for r in rivals if r[1] <= at and (r[2] is None or r[2] > at)]
    if ended:
        conn.execute(
            f"UPDATE kg_facts SET valid_to = ?, invalidated_by = ? WHERE id IN ({_marks(len(ended))})",
            (at, fid, *ended),
        )
    if new.replaces:
        _replaced_until(conn, scope, new, s_id, fid)
    return fid


def _replaced_until(conn: Conn, scope: Scope, new: NewFact, s_id: int, fid: int) -> None:
    """ "We moved from A to B on D" also says the subject had A until D: when the graph holds no
    fact of A for the subject before D, one is added, ended at D by the new fact. When A began is
    not said: the fact starts at ``SINCE_UNKNOWN`` (a question as of any earlier time finds it)."""
    a_id = _entity_id(conn, scope, new.replaces or "")
    if a_id == s_id:
        return
    known = conn.execute(
        f"SELECT 1 FROM kg_facts f WHERE {_IN_SCOPE} AND f.subject_id = ? AND f.predicate = ? AND f.object_id = ?"
        " AND f.valid_from < ?",
        (scope.workspace_id, scope.crew_id, s_id, new.predicate, a_id, new.valid_from),
    ).fetchone()
    if known is not None:
        return
    conn.execute(
        "INSERT INTO kg_facts (workspace_id, crew_id, subject_id, predicate, object_id, valid_from, valid_to,"
        " confidence, source, room, text, recorded_at, invalidated_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope.workspace_id, scope.crew_id, s_id, new.predicate, a_id, SINCE_UNKNOWN, new.valid_from,
            new.confidence, new.source, new.where, new.text[:1000], now_iso(), fid,
        ),
    )  # fmt: skip


def _rivals(conn: Conn, scope: Scope, new: NewFact, s_id: int, o_id: int) -> list[tuple[int, str, str | None]]:
    """(id, valid_from, valid_to) of the subject's other values that ``new`` competes with and that
    begin after it or hold at its start: for a
    functional predicate every other value (for ``uses``, of the object's type when it has a known
    one), and the value ``new`` names as replaced."""
    # Only values that begin later or still hold at its start matter (not the ended history).
    where = f"{_IN_SCOPE} AND f.subject_id = ? AND f.predicate = ? AND f.object_id != ?"
    where += " AND (f.valid_to IS NULL OR f.valid_to > ? OR f.valid_from > ?)"
    params: list[Any] = [scope.workspace_id, scope.crew_id, s_id, new.predicate, o_id, new.valid_from, new.valid_from]
    clauses = []
    if new.functional:
        kind = conn.execute("SELECT type FROM kg_entities WHERE id = ?", (o_id,)).fetchone()[0]
        if new.predicate != "uses":
            clauses.append("1")
        elif kind != "thing":
            clauses.append("o.type = ?")
            params.append(kind)
    if new.replaces:
        clauses.append(
            "o.key = ? OR o.id IN (SELECT entity_id FROM kg_aliases WHERE workspace_id = ? AND crew_id = ? AND alias = ?)"
        )
        key = entity_key(new.replaces)
        params += [key, scope.workspace_id, scope.crew_id, key]
    if not clauses:
        return []
    sql = (
        f"SELECT f.id, f.valid_from, f.valid_to FROM kg_facts f JOIN kg_entities o ON o.id = f.object_id"
        f" WHERE {where} AND ({' OR '.join(f'({c})' for c in clauses)})"
    )
    return [(int(r[0]), str(r[1]), r[2]) for r in conn.execute(sql, params)]


def _facts_by_id(conn: Conn, ids: Sequence[int], scope: Scope | None = None) -> list[Fact]:
    if not ids:
        return []
    sql = f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE f.id IN ({_marks(len(set(ids)))})"
    params: list[Any] = list(dict.fromkeys(ids))
    if scope is not None:
        sql += f" AND {_IN_SCOPE}"
        params += [scope.workspace_id, scope.crew_id]
    by_id = {f.id: f for f in map(_fact, conn.execute(sql, params))}
    return [by_id[i] for i in dict.fromkeys(ids) if i in by_id]


# -- the journal, read ---------------------------------------------------------------------------
class JournalFeed:
    """Journal entries after a seq, read from ``journal.sqlite`` on a read-only connection: the
    text facts are extracted from. Memory-file changes (``memory.updated``) are left out: the files
    themselves are read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: Conn | None = None
        self._inode: int | None = None  # of the file the connection has open
        # Its one thread: a read a cancelled caller left running still ends before the close.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="kg-journal")

    async def read(self, after: int, limit: int = 500) -> list[tuple[int, str, str, str, str, str, str]]:
        """:meth:`entries`, on the feed's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.entries, after, limit)

    async def aclose(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._pool, self.close)
        self._pool.shutdown()

    def entries(self, after: int, limit: int = 500) -> list[tuple[int, str, str, str, str, str, str]]:
        """(seq, id, workspace_id, crew_id or "", ts, entry_type, summary) after ``after``, oldest first;
        [] while there is no journal. A journal deleted or replaced since the last read (the memory
        dir restored from a backup) is read from the file at the path now, not the deleted one."""
        try:
            inode = self.path.stat().st_ino
        except FileNotFoundError:
            self.close()
            return []
        if self._conn is not None and inode != self._inode:
            self.close()
        if self._conn is None:
            self._conn = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
            self._conn.execute("PRAGMA busy_timeout = 5000")
            self._inode = inode
        try:
            rows = self._conn.execute(
                "SELECT seq, id, workspace_id, COALESCE(crew_id, ''), ts, entry_type, summary FROM journal_entries"
                " WHERE seq > ? AND entry_type != 'memory.updated' ORDER BY seq LIMIT ?",
                (after, limit),
            ).fetchall()
        except sqlite3.OperationalError:  # not migrated yet
            return []
        return [tuple(r) for r in rows]

    async def superseded(self, ids: Sequence[str]) -> list[tuple[str, str]]:
        """(old id, new id) of the entries the entries ``ids`` superseded (a changed value an
        ingest or a topic key stored over them), on the feed's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, self.superseded_by, list(ids))

    def superseded_by(self, ids: list[str]) -> list[tuple[str, str]]:
        if self._conn is None or not ids:
            return []
        out: list[tuple[str, str]] = []
        try:
            for start in range(0, len(ids), 500):
                part = ids[start : start + 500]
                sql = (
                    "SELECT id, superseded_by FROM journal_entries WHERE superseded_by IN"
                    f" ({_marks(len(part))}) AND status = 'superseded'"
                )
                out += [(str(r[0]), str(r[1])) for r in self._conn.execute(sql, part)]
        except sqlite3.OperationalError:  # not migrated yet
            return []
        return out

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
