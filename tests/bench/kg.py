"""The knowledge graph: extraction rate, questions at 100k facts, and the search lift on LoCoMo.

    python -m tests.bench kg
    python -m tests.bench.kg --only scale        (extract, scale, locomo; repeatable)

- extract: the deterministic extractor over generated notes (lines and facts per CPU second), and
  the same facts stored through ``SqliteKgStore.add`` (facts per CPU second, one transaction per
  note).
- scale: 100,000 facts (2,000 subjects, each with 50 values of one functional predicate over time: 49 ended, 1 current)
  in a real ``kg.sqlite``; the as-of question, the timeline and a two-hop traversal, p50/p99 wall
  and CPU per question, next to the physical limit: the same as-of lookup as one bare SQL query on
  a plain sqlite3 connection (no thread hop, no objects).
- locomo: the held-out figure for the lift. Each LoCoMo conversation is written as in
  tests/bench/retrieval.py, searched by the shipped hybrid, and its graph read from the same files;
  each temporal question (category 2) is answered with the hybrid's top KG_CANDIDATES hits as they
  are and lifted by the graph. ``KG_WEIGHT`` is chosen on conversations 0-2 only (the grid below);
  3-4 are held out.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from sidecar.kg.boost import KG_CANDIDATES, KG_WEIGHT, MENTION_SHARE, KgBoost
from sidecar.kg.extract import extract
from sidecar.kg.graph import KnowledgeGraph, new_facts
from sidecar.kg.ingest import Ingest
from sidecar.kg.model import NewFact, Scope
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.logs import configure_logging
from sidecar.retrieval.lift import Candidate
from tests.bench.util import pct, report

PARTS = ("extract", "scale", "locomo")
SCALE_FACTS = 100_000
SUBJECTS = 2_000
QUESTIONS = 500
WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
MENTIONS = (0.0, 0.25, 0.5, 1.0)
SCOPE = Scope("bench")


# -- extract ---------------------------------------------------------------------------------
def notes(count: int, seed: int = 21) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    dbs = ["PostgreSQL", "CockroachDB", "MySQL", "SQLite", "Redis", "Kafka"]
    people = ["Alice", "Bob", "Carol", "Dan", "Erin", "Frank"]
    out = []
    for n in range(count):
        day = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}"
        lines = [f"# {day}", "", "## Deploy", "Rolled back the api deploy after the error rate rose."]
        lines += [f"The service-{rng.randrange(200)} uses {rng.choice(dbs)} for its state."]
        lines += [f"{rng.choice(people)} owns the module-{rng.randrange(100)}."]
        lines += [f"We moved from {rng.choice(dbs)} to {rng.choice(dbs)} on {day}.", "", "## Notes"]
        lines += ["Owner: " + rng.choice(people), "Nothing else happened today, the standup was short."]
        lines += ["", "| service | owner |", "|---|---|", f"| billing-{n} | {rng.choice(people)} |"]
        out.append((f"daily/{day}-{n}.md", "\n".join(lines) + "\n"))
    return out


async def bench_extract(tmp: Path) -> None:
    docs = notes(2000)
    started = time.process_time()
    found = [extract(text, path) for path, text in docs]
    cpu = time.process_time() - started
    lines = sum(text.count("\n") for _, text in docs)
    facts = sum(len(f) for f in found)
    report(
        "kg extract: lines per CPU second",
        f"{lines / cpu:,.0f} ({facts / cpu:,.0f} facts/s)",
        f"{len(docs)} notes, {facts} facts",
    )
    store = await SqliteKgStore.open(tmp / "extract.sqlite")
    graph = KnowledgeGraph(store)
    started_wall, started = time.perf_counter(), time.process_time()
    for (path, _), extracted in zip(docs, found, strict=True):
        batch, aliases = new_facts(extracted, f"file:agent:{path}", "2026-01-01T00:00:00.000000Z")
        await graph.add(SCOPE, batch, aliases)
    cpu, wall = time.process_time() - started, time.perf_counter() - started_wall
    report(
        "kg store: facts added per second",
        f"{facts / wall:,.0f} wall, {facts / cpu:,.0f} per CPU s",
        "one transaction per note",
    )
    await store.aclose()
    floor = bare_inserts(tmp / "bare.sqlite", found)
    report(
        "kg store, bare SQLite INSERT (physical limit)",
        f"{facts / floor:,.0f} per CPU s",
        "same rows and transactions, no lookups",
    )


def bare_inserts(path: Path, found: list[list[Any]]) -> float:
    """CPU seconds to insert the same facts as plain rows, one transaction per note, WAL as the graph's."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("CREATE TABLE facts (s TEXT, p TEXT, o TEXT, valid_from TEXT, line INTEGER, text TEXT)")
    started = time.process_time()
    for extracted in found:
        conn.execute("BEGIN IMMEDIATE")
        rows = [(f.subject, f.predicate, f.object, f.valid_from, f.line, f.text) for f in extracted]
        conn.executemany("INSERT INTO facts VALUES (?, ?, ?, ?, ?, ?)", rows)
        conn.execute("COMMIT")
    cpu = time.process_time() - started
    conn.close()
    return cpu


# -- scale -----------------------------------------------------------------------------------
def _when(v: int) -> str:
    return f"2020-01-{1 + v % 28:02d}T{v % 24:02d}:00:00.000000Z"


async def fill(store: SqliteKgStore, total: int) -> float:
    per = total // SUBJECTS
    started = time.perf_counter()
    for s in range(SUBJECTS):
        batch = [
            NewFact(
                f"service-{s}",
                "located in",
                f"region-{(s + v) % 997}",
                f"2020-01-{1 + v % 28:02d}T{v % 24:02d}:00:00.000000Z",
                "bench",
                functional=True,
            )
            for v in range(per)
        ]
        await store.add(SCOPE, batch)
    return time.perf_counter() - started


async def timed(fn: Callable[[int], Awaitable[Any]], count: int) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for n in range(count):
        wall, cpu = time.perf_counter(), time.process_time()
        await fn(n)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return walls, cpus


def bare_as_of(path: Path, count: int) -> list[float]:
    """The as-of lookup as one SQL query on a bare connection: the floor under the graph's answer."""
    conn = sqlite3.connect(path)
    eid = {name: i for i, name in conn.execute("SELECT id, name FROM kg_entities")}
    sql = (
        "SELECT f.id, f.predicate, f.object_id, f.valid_from, f.valid_to FROM kg_facts f WHERE f.workspace_id = ?"
        " AND f.crew_id = '' AND f.subject_id = ? AND f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)"
    )
    out = []
    for n in range(count):
        when = "2020-01-15T00:00:00.000000Z"
        started = time.process_time()
        conn.execute(sql, (SCOPE.workspace_id, eid[f"service-{n % SUBJECTS}"], when, when)).fetchall()
        out.append((time.process_time() - started) * 1000)
    conn.close()
    return out


async def bench_scale(tmp: Path) -> None:
    store = await SqliteKgStore.open(tmp / "scale.sqlite")
    graph = KnowledgeGraph(store)
    seconds = await fill(store, SCALE_FACTS)
    stats = await store.stats(SCOPE)
    report("kg scale: facts stored", f"{stats['facts']:,} ({stats['current']:,} current) in {seconds:.1f} s", "100k")
    questions: dict[str, Callable[[int], Awaitable[Any]]] = {
        "as-of": lambda n: graph.query(SCOPE, f"service-{n % SUBJECTS}", as_of="2020-01-15"),
        "timeline": lambda n: graph.timeline(SCOPE, f"service-{n % SUBJECTS}"),
        "traverse 2 hops": lambda n: graph.traverse(SCOPE, f"service-{n % SUBJECTS}", hops=2),
    }
    for name, fn in questions.items():
        walls, cpus = await timed(fn, QUESTIONS)
        report(
            f"kg {name} at 100k facts",
            f"p50 {pct(walls, 50):.2f} ms  p99 {pct(walls, 99):.2f} ms  CPU p50 {pct(cpus, 50):.2f} ms",
            f"{QUESTIONS} questions",
        )
    await store.aclose()
    floor = bare_as_of(tmp / "scale.sqlite", QUESTIONS)
    report(
        "kg as-of, bare SQL (physical limit)",
        f"CPU p50 {pct(floor, 50):.3f} ms  p99 {pct(floor, 99):.3f} ms",
        "one query, no thread hop",
    )


# -- locomo ----------------------------------------------------------------------------------
async def bench_locomo(tmp: Path) -> None:
    from sidecar.retrieval.embed.onnx import OnnxEmbedder
    from tests.bench.retrieval import CACHE, TUNING_CONVERSATIONS, CachedEmbedder, Runner, load_locomo, recall

    if not OnnxEmbedder.available():
        report("kg locomo", "skipped: the [embed] extra is not installed")
        return
    model = OnnxEmbedder()
    docs = CachedEmbedder(model, CACHE / "doc-vectors.sqlite")
    corpora, queries, _ = load_locomo(tmp / "locomo")
    temporal = [q for q in queries if q.category == 2]
    runner = Runner(model, docs)
    await runner.open(corpora)
    graphs, stores = [], []
    started = time.process_time()
    facts = 0
    for n, (corpus, tier) in enumerate(zip(corpora, runner.tiers, strict=True)):
        store = await SqliteKgStore.open(tmp / f"kg-{n}.sqlite")
        graph = KnowledgeGraph(store)
        facts += await Ingest(graph, {tier.name: corpus.root}, {tier.name: Scope("default")}, None).backfill()
        stores.append(store)
        graphs.append(graph)
    report("kg locomo: facts read from 5 conversations", f"{facts:,} in {time.process_time() - started:.1f} CPU s")
    assert runner.searcher is not None
    texts = []  # per conversation: (path, line_start) -> the chunk's text, which the lift reads
    for tier in runner.tiers:
        with sqlite3.connect(tier.index.path) as db:
            sql = "SELECT path, line_start, body, heading FROM chunks"
            texts.append({(p, line): body or heading for p, line, body, heading in db.execute(sql)})
    rows: list[tuple[int, list[dict[str, Any]], list[Candidate], dict[str, int], Any]] = []
    for q in temporal:
        hits, _ = await runner.searcher.search(runner.tiers[q.corpus], q.text, KG_CANDIDATES, False)
        plan = await KgBoost(graphs[q.corpus], {runner.tiers[q.corpus].name: Scope("default")}).plan(
            runner.tiers[q.corpus].name, q.text
        )
        cands = [
            Candidate(
                h["path"], h["heading"], h["line_start"], h["line_end"], texts[q.corpus][(h["path"], h["line_start"])],
                h["score"],
            )
            for h in hits
        ]  # fmt: skip
        rows.append((q.corpus, hits, cands, q.judged, plan))

    def r10(weight: float | None, held_out: bool, mention: float = MENTION_SHARE) -> tuple[float, int]:
        scores = []
        for corpus, hits, cands, judged, plan in rows:
            if (corpus not in TUNING_CONVERSATIONS) != held_out:
                continue
            shown = hits[:10]
            if weight is not None and plan is not None:
                plan.weight, plan.mention = weight, mention
                shown = [hits[choice.at] for choice in plan.order(cands, 10)]
            units = corpora[corpus].unit
            ranked = list(
                dict.fromkeys(
                    units[(h["path"], h["line_start"])] for h in shown if (h["path"], h["line_start"]) in units
                )
            )
            scores.append(recall(ranked, judged, 10))
        return statistics.fmean(scores), len(scores)

    lifted = sum(plan is not None for *_, plan in rows)
    report("kg locomo: temporal questions naming an entity", f"{lifted} of {len(rows)}")
    cpu, names = [], []
    for _, _, cands, _, plan in rows:
        if plan is not None:
            started = time.process_time()
            plan.order(cands, 10)
            cpu.append((time.process_time() - started) * 1000)
            names.append(len(plan.names))
    if cpu:
        report(
            "kg locomo: the lift of a search's 30 hits, CPU",
            f"p50 {pct(cpu, 50):.3f} ms  p99 {pct(cpu, 99):.3f} ms",
            f"names read per hit: p50 {statistics.median(names):.0f}, max {max(names)}",
        )
    for mention in MENTIONS:
        grid = "  ".join(f"{w:g}: {r10(w, False, mention)[0]:.3f}" for w in WEIGHTS)
        report(f"kg locomo cat2 R@10 conv 0-2, mention {mention:g}", f"by weight {grid}", "tuning: the best ships")
    base, count = r10(None, True)
    with_kg, _ = r10(KG_WEIGHT, True)
    report(
        f"kg locomo cat2 R@10 conv 3-4 ({count} q)",
        f"hybrid {base:.3f}  hybrid + kg {with_kg:.3f}",
        f"held out; KG_WEIGHT {KG_WEIGHT:g}",
    )
    base02, count02 = r10(None, False)
    report(
        f"kg locomo cat2 R@10 conv 0-2 ({count02} q)",
        f"hybrid {base02:.3f}  hybrid + kg {r10(KG_WEIGHT, False)[0]:.3f}",
    )
    for store in stores:
        await store.aclose()
    await runner.close()
    await docs.aclose()


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.kg")
    parser.add_argument("--only", action="append", choices=PARTS)
    args = parser.parse_args(list(argv))
    configure_logging("console", "warning")
    asyncio.run(run(args.only or PARTS))


async def run(parts: Sequence[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-kg-") as tmp:
        for part in parts:
            await {"extract": bench_extract, "scale": bench_scale, "locomo": bench_locomo}[part](Path(tmp))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
