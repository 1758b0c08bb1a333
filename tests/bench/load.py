"""Sustained mixed load on a real sidecar process: search and write connections side by side.

The sidecar (one process, default settings: the in-process embedding model and hybrid search)
serves a generated 10k-chunk memory dir whose every chunk already has its vector (``prepared.py``:
the steady state of a memory dir the sidecar has served for a while; the vectors are cached
across runs). ``LOAD_EMBEDDER=none`` runs the same load on BM25 alone. ``LOAD_CONNECTIONS`` (default 32) connections, of which
``LOAD_WRITERS`` (default 4) only write (appends spread over 40 files) and the others only search;
every connection waits for its answer before the next request. Separate classes measure each at
its own pace: writes are serialized and fsync-bound, and a connection mixing both would cap its
searches at a multiple of the write rate.

Three phases, back to back, the generator the same in all (wrk + ``load.lua`` when installed, see
``loadgen.py``):

1. mixed: ``LOAD_WARMUP`` (default 5) s of warm-up, then ``LOAD_SECONDS`` (default 20) s measured.
   Searches/s, writes/s, their latencies, the server's CPU per request over the measured window,
   and its RSS at the end of the warm-up, at the end of the window and at its peak in between
   (flat: < 10% growth after warm-up).
2. searches only, same search connections, ``LOAD_SEARCH_SECONDS`` (default 8) s after 2 s of
   warm-up: the server's CPU per search without writes beside it.
3. the limit: the same search traffic against a bare aiohttp route (``bare_route.py``: aiohttp as
   the sidecar runs it, answering a captured sidecar answer of median size), same duration.

The load starts once the BM25 postings are built, the embedder has no backlog, the server's RSS
has stopped moving (the build's transient heap is handed back when the server is next idle) and
its start-up work in the background is done (its CPU idle: the scanner's verdicts on every file,
the knowledge graph's first reading).
Every write adds a chunk the embedder then embeds in the background, beside the load; the
backlog left at the end of the mixed run is reported. After the run every
acknowledged write is checked in its file, and a sample of 200 in the index.

The writers write at a fixed rate: each starts a write once every ``LOAD_WRITE_EVERY`` (default
0.5) s, the writers' phases spread over that period (``loadgen.drive``'s ``write_every``; a write
whose turn comes while its writer is still probing the last one starts at once and is counted late);
``LOAD_WRITE_EVERY=0``: each write right after the last one was answered (and, with ``LOAD_PROBE=1``,
found). At a fixed rate the writes beside the searches are the same however fast the server finds
them: a server that finds writes sooner gets no more writes to do for it, and the CPU per search
below is not charged for them.

Each append is one line: a unique token, then words. ``LOAD_TIER_WORDS`` (default 0.5) of them
carry 12-20 words drawn as the corpus draws its own, as a user's note shares its words with the
notes before it, so the duplicate check searches the tier for them (``loadgen``); the others carry
five fixed words beside the token, too few for any line of the tier to be a duplicate, and the
check never searches for them. ``LOAD_TIER_WORDS=0``: every append is of the second kind.

``LOAD_CHUNKS`` (default 10,000) sizes the memory dir. ``LOAD_PROBE=1`` makes each writer follow
every acknowledged write with searches for its unique token (the first with the write's ``seq`` as
``after_seq``, then plain ones) until an answer shows it: write -> searchable under the load, p50
and p99 over the probed writes found inside the window. Those searches are hybrid searches like the
others, and they count as searches below. With ``LOAD_PROBE=1`` and the embedder on, the run then
measures the raw limit of a hybrid search under that load, in this process once the sidecar has
stopped, and reports the server's CPU per search against it:

- the server's CPU in the window over the searches answered in it (the load's and the probes'),
  every thread: the writes' duplicate checks, applies and hooks and the background embedding of
  the chunks they changed count against the searches, as a client sees the server's cores;
- the limit per search: a bare onnxruntime ``session.run`` of each query's text
  (``tests.bench.raw.RawQueryEmbedder``) followed by the raw FTS5 search of the same index (top
  100 by ``bm25()``), for a sample of the load's queries and of the probes' tokens, weighted by
  how many of each the window answered; plus the raw embedding (one ``session.run`` per text) of
  every chunk the sidecar stored a vector for inside the window (counted from the index's
  ``embeddings`` rows at both ends of the window, their texts rebuilt from the acknowledged
  writes), over the window's searches.

It also reports the limit with the writes' own raw cost counted too, as many writes as the window
made: each the median CPU of the raw appends beside the load (below: durable, into raw FTS5, searched
for, the query embedded) less the raw search of a probe's token (which the probes above count
already), and the ratio to that.

With ``LOAD_PROBE=1`` a process of its own (``raw_beside.py``) makes the same kind of append raw beside
the sidecar for the whole mixed run, one every ``LOAD_RAW_EVERY`` (0.1) s: durable, into a raw FTS5
table over a copy of the dir, searched, the query embedded raw with the embedder on. Its appends
inside the measured window are write -> searchable's limit under the same load, and the report
gives the sidecar's ratio to it (p50 and p99).

With ``LOAD_PROBE=1`` the run also measures, right after the sidecar stops, the limit of write ->
searchable on the host as it is then: the same kind of append made raw, nothing beside it
(``bench_writes.raw_write_searchable``: durable, into a raw FTS5 table, searched, the query
embedded raw with the embedder on), and it reports the writes per search in the window (with
``LOAD_WRITE_EVERY=0`` the writers wait for each write to be found, so the sooner it is, the more
writes beside the searches).

The reviewers' scenario (a 3k-chunk dir, 12 searching connections, 2 writers, the embedder on):

    LOAD_CHUNKS=3000 LOAD_CONNECTIONS=14 LOAD_WRITERS=2 LOAD_PROBE=1 python -m tests.bench load

    python -m tests.bench load          LOAD_SECONDS=60 python -m tests.bench load
    LOAD_EMBEDDER=none python -m tests.bench load      (BM25 only)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import httpx

from sidecar.index.chunker import chunk_markdown
from sidecar.index.tier_index import INDEX_NAME
from sidecar.retrieval.vectors import embed_text
from tests.bench.bare_route import start_bare
from tests.bench.bench_writes import raw_write_searchable
from tests.bench.loadgen import Run, drive, pick_generator, server_cpu_s
from tests.bench.prepared import embed_memory
from tests.bench.raw import RawQueryEmbedder
from tests.bench.raw_beside import parse
from tests.bench.util import cpu_reference, pct, report
from tests.support.corpus import make_corpus, make_queries
from tests.support.embedding import all_embedded
from tests.support.procs import free_port, rss_kb, start_sidecar

__all__ = ["main"]

CONNECTIONS = int(os.environ.get("LOAD_CONNECTIONS", "32"))
WRITERS = int(os.environ.get("LOAD_WRITERS", "4"))
SECONDS = float(os.environ.get("LOAD_SECONDS", "20"))
WARMUP = float(os.environ.get("LOAD_WARMUP", "5"))
SEARCH_SECONDS = float(os.environ.get("LOAD_SEARCH_SECONDS", "8"))
CHUNKS = int(os.environ.get("LOAD_CHUNKS", "10000"))
PROBE = os.environ.get("LOAD_PROBE", "0") == "1"
KEEP_LOG = os.environ.get("LOAD_KEEP_LOG")  # a path: the sidecar's log is copied there at the end
RAW_WRITES = 100  # appends timed raw for the limit of write -> searchable
#: Seconds between two raw appends beside the load (``raw_beside``): about a writer's rate here.
RAW_EVERY = float(os.environ.get("LOAD_RAW_EVERY", "0.1"))
#: Seconds between two writes of one writer (a fixed rate; 0: each right after the last): about the
#: rate the reviewers' two writers kept when each waited for its write to be found.
WRITE_EVERY = float(os.environ.get("LOAD_WRITE_EVERY", "0.5"))
TIER_WORDS = float(os.environ.get("LOAD_TIER_WORDS", "0.5"))  # share of appends carrying tier words
LIMIT_SAMPLE = 300  # load queries (and at most as many probe tokens) timed raw for the limit
EMBEDDER = os.environ.get("LOAD_EMBEDDER", "auto")  # the default configuration; "none": BM25 only
FLAT = 10.0  # % RSS growth after warm-up
IDLE_CPU_S = 0.1  # the server's CPU over 2 s, every thread and child, below which it is idle


def settle(url: str, pid: int, timeout: float = 180.0) -> float:
    """Wait until the agent tier's BM25 postings are built (they build after /healthz answers), the
    embedder (if any) is ready with no backlog, and the server is idle: its RSS has stopped moving
    (< 1 MB over 2 s) and its start-up work in the background is done (under ``IDLE_CPU_S`` of CPU
    over 2 s: the scanner's verdicts on every file, the knowledge graph's first reading of every
    file in its child process); the seconds waited."""
    started = time.monotonic()
    with httpx.Client() as client:
        while time.monotonic() - started < timeout:
            status = client.get(f"{url}/memory/status", timeout=10).json()
            embedder = status.get("embedder", {})
            vectors_ready = embedder.get("search") != "hybrid" or all_embedded(embedder)
            if status["bm25"]["engine"] == "postings" and vectors_ready:
                break
            time.sleep(0.1)
    before, cpu = rss_kb(pid), server_cpu_s(pid)
    while time.monotonic() - started < timeout:
        time.sleep(2.0)
        now, cpu_now = rss_kb(pid), server_cpu_s(pid)
        if abs(now - before) < 1024 and cpu_now - cpu < IDLE_CPU_S:
            break
        before, cpu = now, cpu_now
    return time.monotonic() - started


async def verify(url: str, root: Path, acked: list[tuple[str, str, int]]) -> tuple[int, int, int]:
    """(acked writes missing from their file, sample size, sample missing from the index)."""
    text = {p: (root / p).read_text() for p in {path for path, _, _ in acked}}
    in_files = sum(token not in text[path].split() for path, token, _ in acked)
    sample = random.Random(5).sample(acked, min(200, len(acked)))
    last = max((seq for _, _, seq in acked), default=0)
    missing = 0
    async with aiohttp.ClientSession() as session:
        deadline = time.monotonic() + 60
        while last and time.monotonic() < deadline:  # until the queue has applied the last write
            async with session.post(url + "/memory/search", json={"query": "x", "after_seq": last}) as resp:
                if (await resp.json())["index"].get("after_seq_met"):
                    break
        for path, token, _ in sample:
            async with session.post(url + "/memory/search", json={"query": token, "limit": 5}) as resp:
                missing += path not in {r["path"] for r in (await resp.json())["results"]}
    return in_files, len(sample), missing


def vector_rows(root: Path) -> Callable[[], int]:
    """A reader of the index's highest ``embeddings`` rowid (each stored vector takes the next one),
    from a read-only connection of this process."""
    conn: sqlite3.Connection | None = None

    def read() -> int:
        nonlocal conn
        if conn is None:
            conn = sqlite3.connect(f"file:{root / INDEX_NAME}?mode=ro", uri=True, check_same_thread=False)
        return int(conn.execute("SELECT coalesce(max(rowid), 0) FROM embeddings").fetchone()[0])

    return read


def written_chunks(root: Path, acked: list[tuple[str, str, int]]) -> dict[str, str]:
    """Every chunk text the acknowledged appends made (hash -> the text the embedder embeds): each
    written file as it was after each of its appends, chunked as the index chunks it."""
    texts: dict[str, str] = {}
    for path in {p for p, _, _ in acked}:
        lines = (root / path).read_text().split("\n")
        for end in range(1, len(lines) + 1):
            for chunk in chunk_markdown("\n".join(lines[:end])):
                texts.setdefault(chunk.hash, embed_text(chunk.heading, chunk.body))
    return texts


@dataclass
class Limit:
    """The raw limit of the window's hybrid searches, CPU seconds in all."""

    query_embed: float
    fts: float
    chunk_embed: float
    chunks: int  # vectors stored in the window
    chunks_timed: int  # of which found among the writes' chunk texts and timed raw
    probe_search: float = 0.0  # CPU of one probe token's raw search (its query embedded, FTS5)

    @property
    def total(self) -> float:
        return self.query_embed + self.fts + self.chunk_embed


def raw_limit(root: Path, run: Run, queries: list[str], stored: list[str]) -> Limit:
    """The raw parts no hybrid search of ``run``'s window can skip (see the module's doc);
    ``stored``: the hashes of the vectors stored inside the window."""
    from tests.bench.bench_embed import RawParts

    raw = RawParts(root, None)  # type: ignore[arg-type]  # the dense product is not part of this limit
    try:
        rng = random.Random(7)
        sample = rng.sample(queries, min(LIMIT_SAMPLE, len(queries)))
        tokens = [token for _, token, _ in run.acked]
        tokens = rng.sample(tokens, min(LIMIT_SAMPLE, len(tokens)))
        raw.interleaved(sample[:20])  # warm up
        embed_q, fts_q = raw.interleaved(sample)
        embed_p, fts_p = raw.interleaved(tokens) if tokens else (0.0, 0.0)
        searches, probes = run.count("search"), run.count("probe")
        query_embed = embed_q / len(sample) * searches + (embed_p / len(tokens) * probes if tokens else 0.0)
        fts = fts_q / len(sample) * searches + (fts_p / len(tokens) * probes if tokens else 0.0)
        texts = written_chunks(root, run.acked)
        known = [texts[h] for h in stored if h in texts]
        cpu0 = time.process_time()
        for text in known:
            raw.embed(text)
        spent = time.process_time() - cpu0
        chunk_embed = spent / len(known) * len(stored) if known else 0.0
        probe_search = (embed_p + fts_p) / len(tokens) if tokens else 0.0
        return Limit(query_embed, fts, chunk_embed, len(stored), len(known), probe_search)
    finally:
        raw.close()


def stored_between(root: Path, first: int, last: int) -> list[str]:
    """Hashes of the vectors whose rows were stored after row ``first`` up to row ``last``."""
    with contextlib.closing(sqlite3.connect(f"file:{root / INDEX_NAME}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT hash FROM embeddings WHERE rowid > ? AND rowid <= ?", (first, last)).fetchall()
    return [h for (h,) in rows]


def start_raw_beside(root: Path, work: Path, embed: bool) -> subprocess.Popen[str]:
    """The raw appends' process (``raw_beside``), ready: its copy of the dir indexed, its model loaded."""
    argv = [sys.executable, "-m", "tests.bench.raw_beside", str(root), str(work), "1" if embed else "0", str(RAW_EVERY)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "ready":
        proc.kill()
        raise RuntimeError(f"tests.bench.raw_beside did not start: {line!r}")
    return proc


def stop_raw_beside(proc: subprocess.Popen[str], run: Run) -> list[tuple[float, float, float]]:
    """Stop the raw appends; those started inside ``run``'s measured window: (start, s, CPU s)."""
    out, _ = proc.communicate("stop\n", timeout=60)
    return [a for a in parse(out.splitlines()) if run.warm_end <= a[0] <= run.end]


def typical_answer(url: str, queries: list[str]) -> bytes:
    with httpx.Client(timeout=10) as client:
        answers = [client.post(f"{url}/memory/search", json={"query": q, "limit": 10}).content for q in queries]
    return sorted(answers, key=len)[len(answers) // 2]


def _latency(run: Run, kind: str) -> str:
    lat = run.latencies_ms(kind)
    if not lat:
        return "none answered"
    return f"p50 {pct(lat, 50):.1f} ms  p99 {pct(lat, 99):.1f} ms  max {max(lat):.0f} ms"


#: What a probed write -> searchable spent where, split at the sidecar's own log lines
#: (``write.durable``: the write thread handed the durable write back to the loop;
#: ``memory.updated``: the reindex queue applied it, just before ``indexed_seq`` moves).
STEPS = ("request -> durable", "durable -> acknowledged", "acknowledged -> indexed (0: before)", "then -> found")


def write_steps(log: Path, run: Run) -> dict[str, list[float]]:
    """Each probed write in ``run``'s window split at the sidecar's log lines (ms)."""
    from tests.bench.bench_writes import logged

    seen = logged(log, ("write.durable", "memory.updated"))
    offset = time.time() - time.monotonic()  # the log's clock is the wall clock; wrk's the monotonic
    steps: dict[str, list[float]] = {name: [] for name in STEPS}
    for found_at, _, polls, seq in run.searchable:
        durable, indexed = seen.get(("write.durable", seq)), seen.get(("memory.updated", seq))
        if polls < 0 or durable is None or indexed is None or not run.warm_end <= found_at <= run.end:
            continue
        sent, acked = run.written[seq]
        durable, indexed = durable - offset, indexed - offset
        steps[STEPS[0]].append((durable - sent) * 1000)
        steps[STEPS[1]].append((acked - durable) * 1000)
        steps[STEPS[2]].append(max(0.0, indexed - acked) * 1000)
        steps[STEPS[3]].append((found_at - max(indexed, acked)) * 1000)
    return steps


def _ms(samples: list[float]) -> str:
    if not samples:
        return "none"
    return f"p50 {pct(samples, 50):.1f} ms  p99 {pct(samples, 99):.1f} ms  ({len(samples)} writes)"


def _report_probe(mixed: Run, parts: Limit | None, raw: list[tuple[float, float, float]]) -> None:
    found = mixed.searchable_ms()
    polls = mixed.searchable_polls()
    report(
        "load: write -> searchable, mixed (write, then a search with after_seq, then plain ones until found)",
        f"p50 {pct(found, 50):.1f} ms  p99 {pct(found, 99):.1f} ms  max {max(found):.0f} ms; "
        f"{len(found)} writes probed in the window, {sum(p == 1 for p in polls)} found by the after_seq search, "
        f"{sum(p < 0 for p in polls)} not found in 30 s"
        if found
        else "none found in the window",
        "p99 <= 50 ms",
    )
    report("load: probe search latency, mixed", _latency(mixed, "probe"))
    if parts is None:
        return
    searches = mixed.count("search") + mixed.count("probe")
    cpu = mixed.server_cpu * 1000 / searches
    per = {k: v * 1000 / searches for k, v in (("embed", parts.query_embed), ("fts", parts.fts))}
    chunk = parts.chunk_embed * 1000 / searches
    limit = parts.total * 1000 / searches
    report(
        "load: server CPU per hybrid search, mixed (every thread: writes and their embedding included)",
        f"{cpu:.2f} ms over {searches} searches ({mixed.count('probe')} of them probes)",
    )
    report(
        "load:   its raw limit, same run (query session.run + FTS5 search + the written chunks' session.run)",
        f"{limit:.2f} ms = {per['embed']:.2f} + {per['fts']:.2f} + {chunk:.2f} "
        f"({parts.chunks} vectors stored in the window, {parts.chunks_timed} of them timed raw)",
    )
    report("load:   ratio", f"{cpu / limit:.2f}x", "<= 1.5x")
    if raw:
        # A write's own raw cost: a raw append beside the load less its search for the token, which
        # the limit above counts with the probes already.
        append = max(0.0, statistics.median(c for _, _, c in raw) - parts.probe_search)
        with_writes = limit + append * 1000 * mixed.count("write") / searches
        report(
            "load:   its raw limit with the window's writes' raw cost too (raw append beside, less its search)",
            f"{with_writes:.2f} ms ({append * 1000:.2f} ms a write); ratio {cpu / with_writes:.2f}x",
        )
    # Each write's own CPU (its hooks, its chunk's embedding) is counted against the searches: at a
    # fixed write rate (LOAD_WRITE_EVERY) the window holds as many writes whatever the server does;
    # closed-loop writers write more the sooner their writes are found.
    writes = mixed.count("write")
    report("load:   writes per search in the window", f"{writes / searches:.3f} ({writes} writes)")
    threads = mixed.thread_cpu()
    children = sum(spent for name, spent in threads.items() if name.startswith("child:"))
    report(
        "load:   of which the server's child processes (the knowledge graph's start-up backfill)",
        f"{children * 1000 / searches:.2f} ms a search",
    )


def _report_beside(mixed: Run, raw: list[tuple[float, float, float]], embedded: bool) -> None:
    """Write -> searchable against its limit under the same load, in the same window."""
    took = [t * 1000 for _, t, _ in raw]
    report(
        "load:   its limit under this load: the same appends made raw beside it, in the same window, "
        f"a process of their own, one every {RAW_EVERY:g} s"
        + (
            " (durable, into raw FTS5, searched, the query embedded raw)"
            if embedded
            else " (durable, into raw FTS5, searched)"
        ),
        f"{_ms(took)}; {statistics.median(c for _, _, c in raw) * 1000:.2f} ms of CPU each (median)"
        if raw
        else "none in the window",
    )
    found = mixed.searchable_ms()
    if raw and found:
        report(
            "load:   ratio to the limit under the same load",
            f"p50 {pct(found, 50) / pct(took, 50):.1f}x, p99 {pct(found, 99) / pct(took, 99):.1f}x",
        )


def main() -> None:
    reference_before = cpu_reference()
    wrk, generator = pick_generator()
    print(f"# load generator: {generator}", flush=True)
    searchers = CONNECTIONS - WRITERS
    base = Path(tempfile.mkdtemp(prefix="bench-load-"))
    root = base / "memory"
    corpus_bytes = make_corpus(root, CHUNKS)
    if EMBEDDER != "none":
        print(f"# {embed_memory(root)}", flush=True)
    queries = make_queries(2_000)
    # No scheduled consolidation: its first run, overdue on a generated dir of old daily notes, would
    # summarise every past week a minute after start, inside the load.
    env = {"MEMORY_SIDECAR_EMBEDDER": EMBEDDER, "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}
    side = start_sidecar(root, env=env, wait=300)
    bare = None
    raw_searchable: list[float] = []
    raw_beside: list[tuple[float, float, float]] = []
    beside: subprocess.Popen[str] | None = None
    steps: dict[str, list[float]] = {}
    try:
        rss_ready = rss_kb(side.proc.pid)
        settled_s = settle(side.url, side.proc.pid)
        rss_idle = rss_kb(side.proc.pid)
        pid = side.proc.pid
        common = {"queries": queries, "wrk": wrk}
        hybrid = PROBE and EMBEDDER != "none"
        beside = start_raw_beside(root, base / "raw-beside", hybrid) if PROBE else None
        mixed = drive(
            side.url,
            pid,
            seconds=SECONDS,
            warmup=WARMUP,
            connections=CONNECTIONS,
            writers=WRITERS,
            work=base / "gen-mixed",
            probe=PROBE,
            count=vector_rows(root) if hybrid else None,
            write_every=WRITE_EVERY,
            tier_words=TIER_WORDS,
            **common,
        )
        if beside is not None:
            raw_beside = stop_raw_beside(beside, mixed)
        first_row, last_row = mixed.counted()
        stored = stored_between(root, first_row, last_row) if hybrid else []
        searches = drive(
            side.url,
            pid,
            seconds=SEARCH_SECONDS,
            warmup=2.0,
            connections=searchers,
            writers=0,
            work=base / "gen-search",
            **common,
        )
        hwm = rss_kb(pid, "VmHWM")
        embedder = httpx.get(f"{side.url}/memory/status", timeout=10).json().get("embedder", {})
        acked = mixed.acked
        in_files, sampled, in_index = asyncio.run(verify(side.url, root, acked))
        answer = typical_answer(side.url, queries[:200])
        bare = start_bare(base / "bare", free_port(), body=answer)
        limit = drive(
            bare.url,
            bare.proc.pid,
            seconds=SEARCH_SECONDS,
            warmup=2.0,
            connections=searchers,
            writers=0,
            work=base / "gen-bare",
            **common,
        )
        if PROBE:
            steps = write_steps(side.log, mixed)
        side.stop()
        limit_parts = raw_limit(root, mixed, queries, stored) if hybrid else None
        if limit_parts is not None:
            limit_parts.chunks = last_row - first_row  # rows pruned since the window are counted too
        if PROBE:  # the host's own limit of a write -> searchable, nothing beside it, right after the run
            raw_searchable = raw_write_searchable(root, base, RAW_WRITES, RawQueryEmbedder() if hybrid else None)
    finally:
        if beside is not None and beside.poll() is None:
            beside.kill()
            beside.wait()
        if bare is not None:
            bare.stop()
        side.stop()
        if KEEP_LOG:  # the sidecar's log, for whoever looks into a run
            shutil.copyfile(side.log, KEEP_LOG)
        shutil.rmtree(base, ignore_errors=True)

    print(
        f"# {os.cpu_count()} cores shared by the server, the generator and other tenants; corpus {CHUNKS} chunks "
        f"({corpus_bytes / 1e6:.1f} MB); mixed: {searchers} search + {WRITERS} write connections, "
        f"{WARMUP:g} s warm-up + {SECONDS:g} s measured; {TIER_WORDS:.0%} of appends carry tier words",
        flush=True,
    )
    report(
        "load: host speed (5M-step Python loop, before / after)",
        f"{reference_before:.0f} / {cpu_reference():.0f} ms (a shared host: figures scale with it)",
    )
    report("load: generator", generator.split(" (")[0])
    report(
        "load: search mode",
        f"{embedder.get('search', 'bm25')} ({embedder.get('model')}); searches answered degraded (BM25 alone): "
        f"{mixed.degraded()} of {mixed.count('search')} mixed, {searches.degraded()} of {searches.count('search')} "
        f"alone; embedder backlog after both runs {embedder.get('backlog', 0)}",
        "0 degraded",
    )
    report("load: searches/s, mixed", f"{mixed.rate('search'):.0f}/s")
    report(
        "load: writes/s, mixed",
        f"{mixed.rate('write'):.1f}/s ("
        + (
            f"{WRITERS} writers, one write each every {WRITE_EVERY:g} s; {mixed.late_writes} started late"
            if WRITE_EVERY > 0
            else "each writer's next write right after the last"
        )
        + ")",
    )
    report("load: search latency, mixed", _latency(mixed, "search"))
    report("load: write latency, mixed", _latency(mixed, "write"))
    if PROBE:
        _report_probe(mixed, limit_parts, raw_beside)
        _report_beside(mixed, raw_beside, hybrid)
        report(
            "load:   its limit, right after the run: the same appends durable into raw FTS5, searched"
            + (" (the query embedded raw)" if limit_parts is not None else ""),
            f"{_ms([s * 1000 for s in raw_searchable])}; load average {os.getloadavg()[0]:.1f}",
        )
        for name, samples in steps.items():
            report(f"load:   write -> searchable: {name} (the sidecar's log)", _ms(samples))
    report(
        "load: server CPU per request, mixed",
        f"{mixed.cpu_per_request_ms():.3f} ms ({mixed.server_cpu / mixed.seconds:.2f} cores; "
        f"generator {mixed.generator_cpu_per_request_ms():.3f} ms)",
    )
    report(
        "load: searches only: searches/s, server CPU per search",
        f"{searches.rate('search'):.0f}/s, {searches.cpu_per_request_ms():.3f} ms "
        f"({searches.server_cpu / searches.seconds:.2f} cores)",
    )
    report(
        "load: the limit, bare aiohttp route: req/s, CPU per request",
        f"{limit.rate('search'):.0f}/s, {limit.cpu_per_request_ms():.3f} ms "
        f"({limit.server_cpu / limit.seconds:.2f} cores; {len(answer)}-byte answer)",
    )
    report(
        "load: searches only / bare route, requests/s",
        f"{searches.rate('search') / limit.rate('search'):.2f}x",
    )
    statuses = mixed.statuses()
    five = sum(n for (_, status), n in statuses.items() if status >= 500)
    report("load: 5xx responses, mixed", str(five), "0")
    report(
        "load: statuses, mixed (measured window)", ", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(statuses.items()))
    )
    errors = mixed.transport_errors + searches.transport_errors
    report("load: transport errors (timeouts, resets)", str(errors), "0")
    window = mixed.rss_window()
    warm, last, peak = window[0], window[-1], max(window)
    report(
        "load: RSS after warm-up / end / peak, mixed",
        f"{warm / 1024:.0f} / {last / 1024:.0f} / {peak / 1024:.0f} MB "
        f"(end {(last - warm) * 100 / warm:+.1f}%, peak {(peak - warm) * 100 / warm:+.1f}%)",
        f"growth < {FLAT:g}%",
    )
    report(
        "load: RSS at ready / idle before the load / VmHWM",
        f"{rss_ready / 1024:.0f} / {rss_idle / 1024:.0f} MB (settled after {settled_s:.1f} s) / {hwm / 1024:.0f} MB",
    )
    trend = " ".join(f"{s.rss_kb / 1024:.0f}" for s in mixed.samples[:: max(1, len(mixed.samples) // 8)])
    report("load: RSS over the mixed run (MB, evenly spaced)", trend)
    report("load: acked writes missing from their file", f"{in_files} of {len(acked)}", "0")
    report("load: acked writes missing from the index", f"{in_index} of {sampled} sampled", "0")


if __name__ == "__main__":
    main()
