"""The crew's knowledge graph in the crew store (PostgreSQL): the read side of
:class:`~sidecar.kg.store.KgStore` for one crew, so a member answers its crew's graph questions,
and lifts its crew hits, without a hop through the lead.

The lead's graph (``kg.sqlite``) is the source: its mirror (:mod:`sidecar.kg.pg_mirror`) copies the
crew's entities, aliases and facts into ``crew_kg_*`` with the lead's own ids, so an answer here is
the lead's answer to the field. The text that queries compare or order by is ``COLLATE "C"`` (byte
order, as SQLite compares). The graph's writes are the lead's: this store refuses them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sidecar.errors import Forbidden
from sidecar.kg.model import Entity, Fact, NewFact, Scope

if TYPE_CHECKING:
    from sidecar.store.postgres import PostgresCrewStore

__all__ = ["PgKgStore"]

_FACT_COLUMNS = (
    "f.id, s.name, f.subject_id, f.predicate, o.name, f.object_id, f.valid_from, f.valid_to, f.confidence,"
    " f.source, f.room, f.text, f.recorded_at, f.invalidated_by"
)
_FACT_FROM = (
    "crew_kg_facts f JOIN crew_kg_entities s ON s.crew = f.crew AND s.id = f.subject_id"
    " JOIN crew_kg_entities o ON o.crew = f.crew AND o.id = f.object_id"
)
_IN_SCOPE = "f.crew = $1 AND f.workspace_id = $2"


def _fact(row: Any) -> Fact:
    return Fact(*tuple(row))


T = TypeVar("T")


class PgKgStore:
    """One crew's graph as the lead's mirror left it in the crew store; every call may raise
    ``StoreUnavailable`` (the store's own connections and timeouts)."""

    def __init__(self, store: PostgresCrewStore) -> None:
        self.store = store

    # -- writes: the lead's ------------------------------------------------------------------
    async def add(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        *,
        file: tuple[str, str, str] | None = None,
        grown: bool = False,
    ) -> list[Fact]:
        raise _read_only()

    async def invalidate(self, scope: Scope, fact_id: int, valid_to: str) -> Fact:
        raise _read_only()

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
        raise _read_only()

    async def reopen(self, scope: Scope, ids: Sequence[int], valid_to: str, moved: tuple[str, str]) -> int:
        raise _read_only()

    async def add_alias(self, scope: Scope, entity_id: int, alias: str) -> None:
        raise _read_only()

    async def set_cursor(self, name: str, position: int) -> None:
        raise _read_only()

    async def cursor(self, name: str) -> int:
        return 0  # nothing is read into this copy here

    async def file_digest(self, tier: str, path: str) -> str | None:
        return None

    async def digest_with(self, tier: str, path: str, read: Callable[[], T]) -> tuple[T, str | None]:
        return await asyncio.to_thread(read), None

    async def files(self, tier: str) -> dict[str, str]:
        return {}

    async def aclose(self) -> None:
        """Nothing to close: the connections are the crew store's."""

    # -- reads ---------------------------------------------------------------------------------
    async def _fetch(self, sql: str, *args: Any) -> list[Any]:
        async with self.store.connection() as conn:
            return list(await conn.fetch(sql, *args))

    async def known_keys(self, scope: Scope) -> set[str] | None:
        """None: the lead writes this copy from another host, so a set held here could miss its
        newest names; every lookup asks the store."""
        return None

    async def entities(self, scope: Scope, keys: Iterable[str]) -> dict[str, Entity]:
        """Entities by the keys given (their own key or an alias), with their aliases in the order
        the lead learnt them."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        rows = await self._fetch(
            "SELECT a.alias, e.id, e.name, e.type, (SELECT array_agg(b.alias ORDER BY b.pos) FROM crew_kg_aliases b"
            " WHERE b.crew = e.crew AND b.entity_id = e.id) AS aliases"
            " FROM crew_kg_aliases a JOIN crew_kg_entities e ON e.crew = a.crew AND e.id = a.entity_id"
            " WHERE a.crew = $1 AND a.workspace_id = $2 AND a.alias = ANY($3::text[])",
            scope.crew_id, scope.workspace_id, wanted,
        )  # fmt: skip
        return {r["alias"]: Entity(r["id"], r["name"], r["type"], tuple(r["aliases"] or ())) for r in rows}

    async def entity_names(self, scope: Scope, limit: int) -> list[tuple[int, str]]:
        rows = await self._fetch(
            "SELECT id, name FROM crew_kg_entities WHERE crew = $1 AND workspace_id = $2 ORDER BY id LIMIT $3",
            scope.crew_id, scope.workspace_id, limit,
        )  # fmt: skip
        return [(int(r["id"]), str(r["name"])) for r in rows]

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
        """As :meth:`SqliteKgStore.facts <sidecar.kg.sqlite_kg.SqliteKgStore.facts>`: oldest first."""
        if not entity_ids:
            return []
        args: list[Any] = [scope.crew_id, scope.workspace_id, list(entity_ids)]
        filters = ""
        if predicate is not None:
            args.append(predicate)
            filters += f" AND f.predicate = ${len(args)}"
        if as_of is not None:
            args.append(as_of)
            filters += f" AND f.valid_from <= ${len(args)} AND (f.valid_to IS NULL OR f.valid_to > ${len(args)})"
        elif current_only:
            filters += " AND f.valid_to IS NULL"
        sides = {"out": ["f.subject_id"], "in": ["f.object_id"]}.get(direction, ["f.subject_id", "f.object_id"])
        selects = [
            f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND {column} = ANY($3::bigint[]){filters}"
            for column in sides
        ]
        args.append(limit)
        sql = " UNION ".join(selects) + f" ORDER BY 7, 1 LIMIT ${len(args)}"
        return [_fact(r) for r in await self._fetch(sql, *args)]

    async def fact(self, scope: Scope, fact_id: int) -> Fact | None:
        rows = await self._fetch(
            f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND f.id = $3",
            scope.crew_id, scope.workspace_id, fact_id,
        )  # fmt: skip
        return _fact(rows[0]) if rows else None

    async def find_fact(self, scope: Scope, subject_id: int, predicate: str, object_id: int) -> list[Fact]:
        rows = await self._fetch(
            f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND f.subject_id = $3"
            " AND f.predicate = $4 AND f.object_id = $5 ORDER BY f.valid_from, f.id",
            scope.crew_id, scope.workspace_id, subject_id, predicate, object_id,
        )  # fmt: skip
        return [_fact(r) for r in rows]

    async def facts_at(self, scope: Scope, sources: Sequence[str], limit: int = 2000) -> list[Fact]:
        if not sources:
            return []
        rows = await self._fetch(
            f"SELECT {_FACT_COLUMNS} FROM {_FACT_FROM} WHERE {_IN_SCOPE} AND f.source = ANY($3::text[])"
            " ORDER BY f.source, f.id LIMIT $4",
            scope.crew_id, scope.workspace_id, list(sources), limit,
        )  # fmt: skip
        return [_fact(r) for r in rows]

    async def tunnels(self, scope: Scope, room_a: str | None, room_b: str | None, limit: int) -> list[dict[str, Any]]:
        """Entities whose facts stand in two rooms or more (in ``room_a`` and ``room_b`` when given;
        a room matches itself and the rooms under it), most rooms first."""
        args: list[Any] = [scope.crew_id, scope.workspace_id]
        having = "COUNT(DISTINCT r.room) >= 2"
        for room in (room_a, room_b):
            if room is not None:
                args.append(room)
                n = f"${len(args)}::text"
                having += f" AND bool_or(r.room = {n} OR left(r.room, length({n}) + 1) = {n} || '/')"
        args.append(limit)
        sql = (
            "SELECT e.id, e.name, e.type, string_agg(DISTINCT r.room, ',') AS rooms FROM ("
            f" SELECT f.subject_id AS entity_id, f.room FROM crew_kg_facts f WHERE {_IN_SCOPE}"
            f" UNION SELECT f.object_id, f.room FROM crew_kg_facts f WHERE {_IN_SCOPE}"
            f") r JOIN crew_kg_entities e ON e.crew = $1 AND e.id = r.entity_id GROUP BY e.id, e.name, e.type"
            f" HAVING {having} ORDER BY COUNT(DISTINCT r.room) DESC, e.name, e.id LIMIT ${len(args)}"
        )
        rows = await self._fetch(sql, *args)
        return [{"id": r[0], "name": r[1], "type": r[2], "rooms": sorted(str(r[3]).split(","))} for r in rows]

    async def stats(self, scope: Scope) -> dict[str, Any]:
        async with self.store.connection() as conn:
            row = await conn.fetchrow(
                "SELECT (SELECT count(*) FROM crew_kg_entities WHERE crew = $1 AND workspace_id = $2) AS entities,"
                " count(*) AS facts, count(*) - count(f.valid_to) AS current, count(DISTINCT f.room) AS rooms"
                f" FROM crew_kg_facts f WHERE {_IN_SCOPE}",
                scope.crew_id, scope.workspace_id,
            )  # fmt: skip
            predicates = await conn.fetch(
                f"SELECT f.predicate, count(*) AS n FROM crew_kg_facts f WHERE {_IN_SCOPE} GROUP BY f.predicate"
                " ORDER BY count(*) DESC, f.predicate LIMIT 100",
                scope.crew_id, scope.workspace_id,
            )  # fmt: skip
        total, current = int(row["facts"]), int(row["current"])
        return {
            "entities": int(row["entities"]),
            "facts": total,
            "current": current,
            "invalidated": total - current,
            "rooms": int(row["rooms"]),
            "predicates": {r["predicate"]: int(r["n"]) for r in predicates},
        }


def _read_only() -> Forbidden:
    return Forbidden("the crew's graph is written by its lead", code="crew_graph_read_only")
