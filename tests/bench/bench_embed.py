"""Dense retrieval costs: the vector scan, embedding throughput, RSS with the model, hybrid latency.

    python -m tests.bench embed        (or: python -m tests.bench.bench_embed)

- Scan: a real ``VectorIndex`` over a real index.sqlite holding 100k chunks with 384-dim vectors
  (random unit rows: the cost does not depend on the values), against a numpy read of the same
  matrix in the same run; plus what a refresh costs (cold load, 10 changed chunks, nothing new).
- Throughput: the shipped ``OnnxEmbedder`` on generated memory paragraphs (~600 characters), at
  the batcher's batch size and at 32; and the real ``EmbedBatcher`` draining a 500-chunk backlog.
  The limit beside it: raw onnxruntime, the model file as packaged in a session with default
  options, the same tokens in runs of the same batch size (sorted by length, padded to each run's
  longest), ``session.run`` timed and nothing else. CPU per chunk is this process's CPU (every
  thread) over the chunks.
- RSS: a fresh process that loads the shipped model, embeds a query, then batcher batches of long
  chunks; next to it, the same with onnxruntime session options that keep memory lower.
- Hybrid: ``HybridSearcher`` p50/p99 over a 10k-chunk generated tier with the real model's vectors,
  real query embedding each time (distinct queries), and its CPU per search (this process, every
  thread) beside its raw parts in the same run: the query's embedding as a bare ``session.run``
  on the same model graph (``tests.bench.raw``) and the FTS5 search of the same index, top 100 by
  ``bm25()``, one query's embedding then its search, as a search runs them (the limit). Beside it,
  the same raw embeddings back to back, nothing between two model runs, and each followed by a raw dense
  product over the search's own matrix (numpy, top 100): whether the work a dense leg cannot skip
  moves the embedding's cost. The searches and the raw parts alternate in ``BENCH_HYBRID_ROUNDS``
  rounds (12), each on its own share of the queries, which of the two runs first alternating from
  one round to the next, so a shared host's changing load weighs on them alike; the figure is the
  median of the rounds' ratios, the whole run's (its CPU over the limit's) and every round's
  beside it. Then a pass of its own (new queries)
  splits a search's CPU into its parts, each timed on the thread that runs it, and embeds each of
  its queries raw right after its search: the sidecar's query embedding beside raw onnxruntime on
  the same text, both between searches.
- Backlog: a 1,000-note, 6,000-chunk tier with no vectors (``BENCH_BACKLOG`` chunks). (a) A real
  sidecar process embeds it in the background: chunks/s from ready to backlog 0, its CPU per chunk,
  its VmHWM (the whole process, and from ready on), and search round trips (distinct queries) while
  it drains and after. (b) ``memory-sidecar reindex --embed`` on the same tier: its own chunks/s, CPU
  and peak RSS (ru_maxrss). Each beside raw onnxruntime on every ``BENCH_RAW_EVERY``-th of the same
  texts, in runs of 8, at the path's thread count: one intra-op thread at nice +10 for (a), two
  intra-op threads for (b). Then, in this process, a query's embedding time idle and while
  ``embed_background`` works through a backlog in the batcher's calls of 8.

Parts: ``EMBED_BENCH=scan,throughput,rss,hybrid,backlog`` (default: all).

``EMBED_BASELINE=DIR`` (another checkout, say of the commit before a change): the hybrid part then
also runs this tree's searches and that tree's by turns, each tree in a process of its own, over
the same prepared tier, in blocks of 20 queries whose order alternates, and gives the CPU per search
of each with their ratio round by round. On a busy host the ratio against raw parts moves more
from run to run than a change of a few percent; searches taking turns with the tree before do not.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from sidecar.index.tier import Tier
from sidecar.index.tier_index import INDEX_NAME, TierIndex
from sidecar.logs import configure_logging
from sidecar.retrieval import hybrid
from sidecar.retrieval.batcher import IN_PROCESS_BATCH, EmbedBatcher
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.embed.onnx import BACKGROUND_NICE, OnnxEmbedder, lower_thread_priority
from sidecar.retrieval.hybrid import HybridSearcher, _Fused
from sidecar.retrieval.vectors import VectorIndex, embed_text
from tests.bench.prepared import embed_memory
from tests.bench.raw import RawQueryEmbedder
from tests.bench.util import ms, pct, report
from tests.support.corpus import make_corpus, make_queries
from tests.support.embedding import drain
from tests.support.procs import cpu_s, rss_kb, start_sidecar

DIM = 384
MODEL = "bench-random"
BACKLOG = int(os.environ.get("BENCH_BACKLOG", "6000"))
RAW_EVERY = int(os.environ.get("BENCH_RAW_EVERY", "5"))
PARTS = os.environ.get("EMBED_BENCH", "scan,throughput,rss,hybrid,backlog").split(",")
BASELINE = os.environ.get("EMBED_BASELINE")


def _unit_rows(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def _fill_random(index: TierIndex, model: str, seed: int = 1) -> int:
    hashes = [h for (h,) in index.writer.execute("SELECT DISTINCT hash FROM chunks")]
    rows = _unit_rows(len(hashes), seed)
    for start in range(0, len(hashes), 20_000):
        part = hashes[start : start + 20_000]
        VectorIndex.store(index.writer, model, DIM, list(zip(part, rows[start : start + 20_000], strict=True)))
    return len(hashes)


def _timed(fn: object, runs: int) -> list[float]:
    assert callable(fn)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def bench_scan(base: Path, n: int = 100_000) -> None:
    root = base / "scan"
    index = TierIndex(root)
    index.open()
    conn = index.writer
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO files VALUES ('big.md', 'h', 0, 0, 0)")
    conn.executemany(
        "INSERT INTO chunks (path, ord, heading, body, line_start, line_end, hash) VALUES ('big.md', ?, '', ?, ?, ?, ?)",
        ((i, f"chunk {i}", i, i, f"{i:032x}") for i in range(n)),
    )
    conn.execute("COMMIT")
    _fill_random(index, MODEL)
    vi = VectorIndex(index.path, MODEL, DIM)
    t0 = time.perf_counter()
    vi.refresh()
    cold = time.perf_counter() - t0
    matrix = vi.matrix
    query = _unit_rows(1, 99)[0]
    for _ in range(5):
        vi.search(query, 10)
        matrix.sum(axis=0)
    scan = _timed(lambda: vi.search(query, 10), 40)
    read = _timed(lambda: matrix.sum(axis=0), 40)
    ratio = pct(scan, 50) / pct(read, 50)
    report(f"dense scan {n // 1000}k x {DIM} (search k=10)", ms(scan), "")
    report(f"numpy read of the same matrix ({matrix.nbytes / 1e6:.0f} MB)", ms(read), "")
    report("dense scan / numpy read, p50", f"{ratio:.2f}x", "<= 1.5x")
    noop = _timed(vi.refresh, 20)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE chunks SET hash = 'changed' || id, body = 'changed' WHERE id % 10000 = 1")
    conn.execute("COMMIT")
    t0 = time.perf_counter()
    vi.refresh()
    changed = time.perf_counter() - t0
    fresh = _unit_rows(10, 5)
    VectorIndex.store(conn, MODEL, DIM, [(f"changed{i}", fresh[j]) for j, i in enumerate(range(1, n, 10_000))])
    t0 = time.perf_counter()
    vi.refresh()
    appended = time.perf_counter() - t0
    assert vi.backlog == 0 and vi.size == n
    report(
        f"refresh {n // 1000}k: cold / 10 chunks edited / their 10 vectors stored / no commit",
        f"{cold * 1000:.0f} ms / {changed * 1000:.0f} ms / {appended * 1000:.0f} ms / {pct(noop, 50) * 1e6:.0f} us",
    )
    vi.close()
    index.close()


def _paragraphs(base: Path, n: int) -> list[str]:
    root = base / "para"
    make_corpus(root, n, seed=21)
    index = TierIndex(root)
    index.open()
    texts = [f"{h}\n{b}" for h, b in index.writer.execute("SELECT heading, body FROM chunks LIMIT ?", (n,))]
    index.close()
    return texts


def _raw_onnx(texts: list[str], batch: int, threads: int = 0) -> tuple[float, float]:
    """The limit: (wall s, CPU s) of raw onnxruntime over ``texts`` in runs of ``batch``, with
    ``threads`` intra-op threads (0: onnxruntime's default, one per core)."""
    import onnxruntime as ort

    from sidecar.retrieval.embed.onnx import MAX_TOKENS, _load_tokenizer, _model_path

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(_model_path()), sess_options=options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    encodings = sorted(_load_tokenizer(None, MAX_TOKENS).encode_batch(texts), key=lambda e: len(e.ids))
    feeds = []
    for start in range(0, len(encodings), batch):
        run = encodings[start : start + batch]
        ids = np.zeros((len(run), max(len(e.ids) for e in run)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, e in enumerate(run):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        feeds.append(feed)
    session.run(None, feeds[0])  # warm
    t0, cpu0 = time.perf_counter(), time.process_time()
    for feed in feeds:
        session.run(None, feed)
    return time.perf_counter() - t0, time.process_time() - cpu0


def bench_throughput(base: Path, model: OnnxEmbedder) -> None:
    texts = _paragraphs(base, 256)
    model.embed_sync(texts[:8])
    for batch in (IN_PROCESS_BATCH, 32):
        runner = OnnxEmbedder(batch_size=batch)
        runner.embed_sync(texts[:8])  # warm
        t0, cpu0 = time.perf_counter(), time.process_time()
        runner.embed_sync(texts)
        took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        del runner
        raw_took, raw_cpu = _raw_onnx(texts, batch, threads=1)
        n = len(texts)
        report(
            f"embed_sync, batch {batch}, {n} chunks (~600 chars), 1 thread",
            f"{n / took:.0f} chunks/s, CPU {cpu * 1000 / n:.1f} ms/chunk",
            "",
        )
        report(
            f"  the limit: raw onnxruntime, batch {batch}, 1 thread",
            f"{n / raw_took:.0f} chunks/s, CPU {raw_cpu * 1000 / n:.1f} ms/chunk",
            "",
        )
    asyncio.run(_batcher_drain(base, model))


async def _batcher_drain(base: Path, model: OnnxEmbedder) -> None:
    root = base / "drain"
    make_corpus(root, 500, seed=23)
    tier = Tier("agent", root)
    await tier.open()
    vi = VectorIndex(tier.index.path, model.model_id, model.dim)
    batcher = EmbedBatcher(model, EmbedderHealth(model, confirmed=True), {"agent": tier}, {"agent": vi})
    took = await drain(batcher, vi)
    report(f"EmbedBatcher backlog drain, {vi.size} chunks", f"{vi.size / took:.0f} chunks/s ({took:.1f} s)", "")
    vi.close()
    await tier.close()


_RSS_PROBE = r"""
import json, os, sys
os.environ["ORT_DISABLE_TELEMETRY"] = "1"
def rss():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) / 1024
def peak():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]) / 1024
variant = sys.argv[1]
import onnxruntime as ort
import sidecar.retrieval.embed.onnx as onnx_mod
if "packaged" in variant:
    onnx_mod.gather_before_dequantize = lambda data: (data, 0)
if "nofold" in variant:
    original = ort.SessionOptions
    def options():
        o = original()
        o.add_session_config_entry("optimization.disable_specified_optimizers", "ConstantFolding")
        return o
    ort.SessionOptions = options
from sidecar.retrieval.embed.onnx import OnnxEmbedder
e = OnnxEmbedder()
from sidecar.heap import release_free_memory as trim
trim(); loaded = rss()
import time
query = "what did we decide about the postgres migration"
e.embed_sync([query])
samples = []
for i in range(20):
    t0 = time.perf_counter(); e.embed_sync([f"{query} {i}"]); samples.append((time.perf_counter() - t0) * 1000)
trim(); after_query = rss()
texts = [("the deploy pipeline runs nightly once the smoke tests pass and postgres is migrated " * 20)[:1000 + i] for i in range(64)]
for i in range(0, 64, 8):
    e.embed_sync(texts[i:i + 8]); trim()
q_ms = sorted(samples)[len(samples) // 2]
print(json.dumps({"loaded": loaded, "query": after_query, "batches": rss(), "peak": peak(), "query_ms": q_ms}))
"""


def bench_rss() -> None:
    """Each variant in a fresh process, one after the other in the same run (latency is noisy here)."""
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    variants = {
        "shipped": "shipped (embedding table gathered as int8, rest ORT_ENABLE_ALL, no CPU arena, heap trimmed)",
        "packaged": "graph as packaged (the whole model folded to float32), same options",
        "packaged+nofold": "graph as packaged, ConstantFolding disabled (int8 dequantised every run)",
    }
    for variant, label in variants.items():
        out = subprocess.run([sys.executable, "-c", _RSS_PROBE, variant], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            report(f"RSS, {label}", f"probe failed: {out.stderr.strip()[-120:]}", "")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        value = (
            f"load {r['loaded']:.0f} / +query {r['query']:.0f} / +8x1000-char batches {r['batches']:.0f} MB"
            f" (peak {r['peak']:.0f}); query p50 {r['query_ms']:.1f} ms"
        )
        report(f"RSS, {label}", value, "<= 150 MB" if variant == "shipped" else "")


def bench_hybrid(base: Path, model: OnnxEmbedder) -> None:
    """Hybrid search over the real model's vectors (and sentence vectors) of 10k chunks, prepared
    and cached across runs as the load benchmark's are."""
    root = base / "h10k"
    make_corpus(root, 10_000)
    print(f"# {embed_memory(root)}", flush=True)
    asyncio.run(_hybrid(root, model))
    if BASELINE:
        _hybrid_by_turns(root, Path(BASELINE))


#: A process that searches the prepared tier at ``sys.argv[1]`` with the tree on its PYTHONPATH,
#: the bench's queries in the blocks it is sent (``start end marks``: the marks, punctuation, make
#: each text new to the model and leave its words as they are), and answers each block's CPU per
#: search (its process, every thread). It imports nothing of the benches: either tree runs it.
_TURN_WORKER = """
import asyncio, sys, time
from pathlib import Path
from sidecar.index.tier import Tier
from sidecar.logs import configure_logging
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.vectors import VectorIndex
from tests.support.corpus import make_queries

async def main():
    configure_logging("console", "warning")
    model = OnnxEmbedder()
    tier = Tier("agent", Path(sys.argv[1]))
    tier.hold_postings_in_numpy()
    await tier.open()
    await tier.reconcile()
    vi = VectorIndex(tier.index.path, model.model_id, model.dim)
    await asyncio.to_thread(vi.refresh)
    searcher = HybridSearcher(model, EmbedderHealth(model, confirmed=True), {"agent": vi}, query_timeout=30.0)
    queries = list(dict.fromkeys(make_queries(400, seed=5)))
    for q in queries[:20]:
        await searcher.search(tier, q, 10, False)
    print(len(queries), flush=True)
    for line in sys.stdin:
        start, end, marks = line.split()
        part = [f"{q} {' '.join(marks)}" for q in queries[int(start):int(end)]]
        cpu0 = time.process_time()
        for q in part:
            assert not (await searcher.search(tier, q, 10, False))[1]
        print((time.process_time() - cpu0) / len(part) * 1000, flush=True)
    vi.close()
    await tier.close()

asyncio.run(main())
"""

#: Rounds and block size of ``_hybrid_by_turns``.
TURN_ROUNDS = int(os.environ.get("BENCH_TURN_ROUNDS", "8"))
TURN_BLOCK = 20


def _hybrid_by_turns(root: Path, baseline: Path) -> None:
    """This tree's hybrid searches and ``baseline``'s, by turns, each tree in a process of its own."""
    trees = {"this tree": Path(__file__).resolve().parents[2], "baseline": baseline.resolve()}
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-c", _TURN_WORKER, str(root)],
            cwd=tree,
            env={**os.environ, "PYTHONPATH": str(tree)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, tree in trees.items()
    }
    try:
        counts = {int(p.stdout.readline()) for p in procs.values() if p.stdout is not None}
        (n,) = counts  # the same queries on both sides
        marks = ".,;:!?-~"
        per: dict[str, list[float]] = {name: [] for name in trees}
        for r in range(TURN_ROUNDS):
            mark = marks[r % len(marks)] + marks[(r // len(marks)) % len(marks)] * (r >= len(marks))
            spent: dict[str, list[float]] = {name: [] for name in trees}
            for at in range(0, n - n % TURN_BLOCK, TURN_BLOCK):
                order = list(trees) if (at // TURN_BLOCK + r) % 2 == 0 else list(trees)[::-1]
                for name in order:
                    proc = procs[name]
                    assert proc.stdin is not None and proc.stdout is not None
                    proc.stdin.write(f"{at} {at + TURN_BLOCK} {mark}\n")
                    proc.stdin.flush()
                    spent[name].append(float(proc.stdout.readline()))
            for name in trees:
                per[name].append(statistics.mean(spent[name]))
    finally:
        for proc in procs.values():
            if proc.stdin is not None:
                proc.stdin.close()
            proc.wait(timeout=60)
    ratios = [a / b for a, b in zip(per["this tree"], per["baseline"], strict=True)]
    report(
        f"  hybrid CPU per search by turns with {baseline} ({TURN_ROUNDS} rounds of {TURN_BLOCK}-query blocks)",
        f"this tree {statistics.mean(per['this tree']):.2f} ms, the baseline {statistics.mean(per['baseline']):.2f} ms; "
        f"load average {os.getloadavg()[0]:.1f}",
        f"this tree / baseline: median {statistics.median(ratios):.3f}; rounds: "
        + ", ".join(f"{x:.3f}" for x in ratios),
    )


#: Rounds the hybrid searches and their raw parts alternate in: a shared host's load moves within a
#: run, and alternating (short rounds, which runs first alternating too) lets it weigh on both alike.
HYBRID_ROUNDS = int(os.environ.get("BENCH_HYBRID_ROUNDS", "12"))


async def _hybrid(root: Path, model: OnnxEmbedder) -> None:
    tier = Tier("agent", root)
    tier.hold_postings_in_numpy()  # as a sidecar with an embedder holds them
    await tier.open()
    # Steady state, as a serving sidecar's: the in-memory postings are built on the writer thread
    # right after open, and a reconcile queued behind them returns once they are, so that build's
    # CPU is not counted as the searches'.
    await tier.reconcile()
    vi = VectorIndex(tier.index.path, model.model_id, DIM)
    await asyncio.to_thread(vi.refresh)
    chunks = vi.size
    searcher = HybridSearcher(model, EmbedderHealth(model, confirmed=True), {"agent": vi}, query_timeout=30.0)
    queries = make_queries(400, seed=5)
    for q in queries[:20]:
        await searcher.search(tier, q, 10, False)
    raw = RawParts(root, vi.matrix)
    samples, bm25 = [], []
    distinct = list(dict.fromkeys(queries[20:]))  # distinct: every query is embedded for real
    hybrid_cpu = 0.0
    spent = dict.fromkeys(("embed", "fts", "embed back to back", "embed beside dense", "dense"), 0.0)
    per_round: list[float] = []
    for r in range(HYBRID_ROUNDS):
        part = distinct[r::HYBRID_ROUNDS]
        # Each pass embeds new texts (no cache), each as many tokens as its query.
        if r % 2:
            embed, fts = raw.interleaved([f"{q} ." for q in part])
        cpu0 = time.process_time()
        for q in part:
            t0 = time.perf_counter()
            _, degraded = await searcher.search(tier, q, 10, False)
            samples.append(time.perf_counter() - t0)
            assert not degraded
        took = time.process_time() - cpu0
        if not r % 2:
            embed, fts = raw.interleaved([f"{q} ." for q in part])
        spent["embed back to back"] += raw.back_to_back([f"{q} ," for q in part])
        embed_dense, dense = raw.beside_dense([f"{q} :" for q in part])
        spent["embed"] += embed
        spent["fts"] += fts
        spent["embed beside dense"] += embed_dense
        spent["dense"] += dense
        hybrid_cpu += took
        per_round.append(took / (embed + fts))
    split = await _hybrid_split(searcher, tier, [f"{q} ;" for q in distinct[::2]], raw.embed)  # new texts: no cache
    raw.close()
    for q in distinct:
        t0 = time.perf_counter()
        await tier.search(q, 100)
        bm25.append(time.perf_counter() - t0)
    report(f"hybrid search, {chunks} chunks, k=10 (query embedded)", ms(samples), "")
    report("  of which the BM25 leg (100 candidates)", ms(bm25), "")
    vi.close()
    await tier.close()
    n = len(distinct)
    hybrid_ms = hybrid_cpu * 1000 / n
    per = {name: cpu * 1000 / n for name, cpu in spent.items()}
    report(
        "  hybrid CPU per search (this process, every thread)",
        f"{hybrid_ms:.2f} ms; load average {os.getloadavg()[0]:.1f}",
        f"{statistics.median(per_round):.2f}x its raw parts, the median of {len(per_round)} rounds (target <= 1.5x); "
        f"the whole run {hybrid_cpu / (spent['embed'] + spent['fts']):.2f}x; rounds: "
        + ", ".join(f"{x:.2f}x" for x in per_round),
    )
    report(
        "  the limit: raw query embedding + raw FTS5 search, one after the other for each query",
        f"{per['embed'] + per['fts']:.2f} ms = {per['embed']:.2f} + {per['fts']:.2f} ms CPU",
        "",
    )
    report(
        "  raw query embeddings back to back (no FTS5 search between them)",
        f"{per['embed back to back']:.2f} ms CPU each",
        f"{hybrid_cpu / (spent['embed back to back'] + spent['fts']):.2f}x with the FTS5 search's",
    )
    report(
        "  raw query embedding + a raw dense product (numpy, the same matrix) for each query",
        f"{per['embed beside dense'] + per['dense']:.2f} ms = {per['embed beside dense']:.2f} + {per['dense']:.2f} ms CPU",
        f"{hybrid_cpu / (spent['embed beside dense'] + spent['dense'] + spent['fts']):.2f}x with the FTS5 search's",
    )
    report(
        "  where a search's CPU goes (a pass of its own, each part timed on its thread)",
        ", ".join(f"{name} {cpu:.2f}" for name, cpu in split.items()) + " ms",
    )


#: The parts ``_hybrid_split`` times, as (owner, method or function name, label): the first
#: ``_WHOLE_PARTS`` are a search's (its BM25 leg on the event loop, and on a reader thread when the
#: query's words have too many postings to score on the loop), the ranking's parts run inside
#: ``_rank`` (timed whole too), and the last two are the search's own Python after the ranking (its
#: answer), inside "the rest".
_PARTS = (
    (OnnxEmbedder, "_embed_foreground", "query embedding"),
    (Tier, "search", "BM25 leg"),
    (TierIndex, "search", "BM25 leg on a reader thread"),
    (HybridSearcher, "_rank", "ranking"),
    (VectorIndex, "search", "of which dense product and top 100"),
    (_Fused, "weighted", "fusion"),
    (VectorIndex, "context", "neighbours and turns"),
    (VectorIndex, "scores", "BM25 hits' cosines"),
    (hybrid, "restated_first", "the restated-line rule"),
    (VectorIndex, "shown_rows", "rows BM25 did not give, with their stored sentence vectors"),
    (hybrid, "_result", "of the rest: results and snippets"),
    (HybridSearcher, "_closest_sentences", "dense-only hits' closest sentences"),
)
_WHOLE_PARTS = 4


async def _hybrid_split(
    searcher: HybridSearcher, tier: Tier, queries: list[str], raw_embed: RawQueryEmbedder
) -> dict[str, float]:
    """CPU per search of each of ``_PARTS`` (the thread that runs it, ``time.thread_time``) over
    ``queries``, and the whole search's (this process, every thread); the rest is the event loop,
    the hops between threads, snippets and building the answer (its results and the dense-only hits'
    sentences timed, the remainder given). The parts are wrapped for this
    pass only: the figures above are measured without the wrappers. After each search, the same
    query text embedded raw (``raw_embed``, this thread): the query embedding's limit under the
    same conditions, between two searches, where the rounds above measure it in a run of its own."""
    spent: dict[str, float] = dict.fromkeys([label for _, _, label in _PARTS], 0.0)
    saved = []
    for owner, name, label in _PARTS:
        original = owner.__dict__[name]
        saved.append((owner, name, original))
        setattr(owner, name, _timed_part(original, label, spent))
    whole = loop = raw = 0.0
    try:
        for q in queries:
            cpu0, loop0 = time.process_time(), time.thread_time()
            await searcher.search(tier, q, 10, False)
            whole += time.process_time() - cpu0
            loop += time.thread_time() - loop0
            cpu0 = time.thread_time()
            raw_embed(q)
            raw += time.thread_time() - cpu0
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)
    n = len(queries)
    parts = {"whole": whole * 1000 / n, **{label: cpu * 1000 / n for label, cpu in spent.items()}}
    parts["the rest"] = parts["whole"] - sum(parts[label] for _, _, label in _PARTS[:_WHOLE_PARTS])
    on_loop = ("BM25 leg", "of the rest: results and snippets", "dense-only hits' closest sentences")
    threads = ("query embedding", "BM25 leg on a reader thread", "ranking")
    parts["of the rest, on the event loop's thread (the search's own Python, the lift, the hops' loop side)"] = (
        loop * 1000 / n - sum(parts[label] for label in on_loop)
    )
    parts["on the other threads (the hops' thread side)"] = (whole - loop) * 1000 / n - sum(
        parts[label] for label in threads
    )
    parts["raw query embedding of the same text, after each search"] = raw * 1000 / n
    return parts


def _timed_part(original: Any, label: str, spent: dict[str, float]) -> Any:
    """``original`` (a function, a coroutine function or a classmethod) adding its thread's CPU to
    ``spent[label]``."""
    inner = original.__func__ if isinstance(original, classmethod) else original
    if asyncio.iscoroutinefunction(inner):

        async def timed_async(*args: Any, **kwargs: Any) -> Any:
            cpu0 = time.thread_time()  # the loop's thread: awaits in between are other tasks' time
            try:
                return await inner(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - cpu0

        wrapped: Any = timed_async
    else:

        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu0 = time.thread_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += time.thread_time() - cpu0

        wrapped = timed
    return classmethod(wrapped) if isinstance(original, classmethod) else wrapped


class RawParts:
    """The two parts no hybrid search can skip, each raw: the query's embedding
    (``tests.bench.raw.RawQueryEmbedder``: tokenizer, ``session.run``, pooling) and the FTS5 search
    of the tier's index (``MATCH`` of the query's words, ranked by ``bm25()``, top 100 rows); and
    beside them, what a dense leg needs at least: ``matrix`` (the tier's unit rows, the search's own
    array) times the query's vector, and its top 100 by ``argpartition``."""

    SQL = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT 100"

    def __init__(self, root: Path, matrix: np.ndarray) -> None:
        self.embed = RawQueryEmbedder()
        self.db = sqlite3.connect(f"file:{root / INDEX_NAME}?mode=ro", uri=True)
        self.matrix = matrix

    def interleaved(self, queries: list[str]) -> tuple[float, float]:
        """CPU seconds of the raw embeddings of ``queries`` and of their raw FTS5 searches, each
        query's embedding then its search, as a search runs them: the limit."""
        embed = fts = 0.0
        for q in queries:
            words = _fts_words(q)
            cpu0 = time.process_time()
            self.embed(q)
            cpu1 = time.process_time()
            self.db.execute(self.SQL, (words,)).fetchall()
            cpu2 = time.process_time()
            embed, fts = embed + cpu1 - cpu0, fts + cpu2 - cpu1
        return embed, fts

    def back_to_back(self, queries: list[str]) -> float:
        """CPU seconds of the raw embeddings of ``queries``, one right after another."""
        cpu0 = time.process_time()
        for q in queries:
            self.embed(q)
        return time.process_time() - cpu0

    def beside_dense(self, queries: list[str]) -> tuple[float, float]:
        """CPU seconds of the raw embeddings of ``queries``, each followed by its raw dense product."""
        embed = dense = 0.0
        n = len(self.matrix)
        for q in queries:
            cpu0 = time.process_time()
            vector = self.embed(q)
            cpu1 = time.process_time()
            cosines = self.matrix @ vector
            top = np.argpartition(cosines, n - 100)[n - 100 :]
            top[np.argsort(-cosines[top])]
            cpu2 = time.process_time()
            embed, dense = embed + cpu1 - cpu0, dense + cpu2 - cpu1
        return embed, dense

    def close(self) -> None:
        self.db.close()


def _fts_words(query: str) -> str:
    """``query``'s words as an FTS5 ``OR`` of phrases."""
    return " OR ".join(f'"{w}"' for w in re.findall(r"\w+", query))


def bench_backlog(base: Path) -> None:
    """The 6k-chunk backlog: (a) a sidecar's batcher, (b) reindex --embed, each beside raw onnxruntime."""
    root = base / "backlog"
    make_corpus(root, BACKLOG * 5 // 6, seed=31, files=max(1, BACKLOG // 6))  # a title chunk + 5 a note
    served = _served_drain(root)
    texts = _chunk_texts(root)
    sample, n = texts[::RAW_EVERY], len(texts)
    report(
        f"backlog of {n:,} chunks, (a) a sidecar's batcher",
        f"{n / served.took:.1f} chunks/s ({served.took:.0f} s), CPU {served.cpu * 1000 / n:.1f} ms/chunk",
    )
    raw = _at_nice(BACKGROUND_NICE, lambda: _raw_onnx(sample, IN_PROCESS_BATCH, threads=1))
    label = f"  raw onnxruntime, 1 thread at nice +{BACKGROUND_NICE}"
    _report_raw(label, n / served.took, served.cpu * 1000 / n, raw, len(sample))
    report(
        "  (a) peak RSS (VmHWM): model load / backlog",
        f"{served.load_hwm:.0f} / {served.backlog_hwm:.0f} MB (RSS {served.ready_rss:.0f} MB at ready,"
        f" {served.final_rss:.0f} MB after)",
        "<= 300 MB",
    )
    report("  (a) GET /memory/status progress, midway", json.dumps(served.progress))
    report("  (a) search round trip while it drains", ms(served.searches))
    report("  (a) search round trip once drained", ms(served.idle))
    with sqlite3.connect(root / INDEX_NAME) as conn:
        conn.execute("DELETE FROM embeddings")
    cli = _reindex_embed(root)
    report(
        f"backlog of {n:,} chunks, (b) reindex --embed",
        f"{cli['rate']:.1f} chunks/s ({cli['took']:.0f} s), CPU {cli['cpu'] * 1000 / n:.1f} ms/chunk (load included)",
    )
    raw = _raw_onnx(sample, IN_PROCESS_BATCH, threads=2)
    _report_raw("  raw onnxruntime, 2 threads", cli["rate"], cli["cpu"] * 1000 / n, raw, len(sample))
    report("  (b) peak RSS (VmHWM, load included)", f"{cli['hwm']:.0f} MB")
    asyncio.run(_query_during_backlog(texts[: min(n, 800)]))


def _report_raw(label: str, rate: float, cpu_ms: float, raw: tuple[float, float], n: int) -> None:
    """Raw onnxruntime's figures, and the path's over them: by chunks/s (wall, which moves with
    what else the machine runs) and by CPU per chunk (which does not)."""
    raw_rate, raw_cpu_ms = n / raw[0], raw[1] * 1000 / n
    report(
        f"{label}, every {RAW_EVERY}th text in runs of {IN_PROCESS_BATCH}",
        f"{raw_rate:.1f} chunks/s, CPU {raw_cpu_ms:.1f} ms/chunk; path / raw {rate / raw_rate:.2f}x"
        f" (by CPU {raw_cpu_ms / cpu_ms:.2f}x)",
        ">= 0.8x",
    )


def _at_nice(nice: int, work: object) -> tuple[float, float]:
    """Run ``work`` on a thread of its own with its nice value raised by ``nice``, as the batcher's."""
    assert callable(work)
    with ThreadPoolExecutor(1, initializer=lower_thread_priority, initargs=(nice,)) as pool:
        result: tuple[float, float] = pool.submit(work).result()
    return result


@dataclass
class Drained:
    """What a sidecar showed while it embedded a backlog in the background."""

    took: float = 0.0  # s from ready to backlog 0
    cpu: float = 0.0  # the sidecar's CPU s meanwhile
    ready_rss: float = 0.0  # MB
    load_hwm: float = 0.0  # MB, VmHWM at ready: the model's load
    backlog_hwm: float = 0.0  # MB, VmHWM from ready to backlog 0
    final_rss: float = 0.0
    progress: dict[str, object] | None = None  # the status's progress, about halfway
    searches: list[float] = field(default_factory=list)  # round trips while it drained
    idle: list[float] = field(default_factory=list)  # and after


def _served_drain(root: Path) -> Drained:
    """A real sidecar embeds ``root``'s backlog in the background; one search a second meanwhile."""
    sidecar = start_sidecar(root, env={"MEMORY_SIDECAR_EMBEDDER": "onnx", "MEMORY_SIDECAR_WATCH": "false"}, wait=120)
    pid, out = sidecar.proc.pid, Drained()
    queries = iter(dict.fromkeys(make_queries(5000, seed=41)))
    try:
        out.ready_rss, out.load_hwm = rss_kb(pid) / 1024, rss_kb(pid, "VmHWM") / 1024
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS: the peak from here on
        cpu0, t0 = cpu_s(pid), time.perf_counter()
        with httpx.Client(base_url=sidecar.url, timeout=60) as http:

            def search() -> float:
                started = time.perf_counter()
                http.post("/memory/search", json={"query": next(queries)}).raise_for_status()
                return time.perf_counter() - started

            while True:
                body = http.get("/memory/status").json()
                embedder = body["embedder"]
                if embedder["backlog"] == 0 and embedder["vectors"] >= body["chunks"]:
                    break
                if out.progress is None and embedder.get("progress", {}).get("done", 0) * 2 >= body["chunks"]:
                    out.progress = embedder["progress"]
                out.searches.append(search())
                time.sleep(1.0)
            out.took, out.cpu = time.perf_counter() - t0, cpu_s(pid) - cpu0
            out.backlog_hwm, out.final_rss = rss_kb(pid, "VmHWM") / 1024, rss_kb(pid) / 1024
            out.idle = [search() for _ in range(60)]
    finally:
        sidecar.stop()
    return out


def _chunk_texts(root: Path) -> list[str]:
    """What the sidecar embedded for each chunk of ``root`` (distinct texts)."""
    with sqlite3.connect(root / INDEX_NAME) as conn:
        rows = conn.execute("SELECT heading, body FROM chunks ORDER BY id").fetchall()
    return list(dict.fromkeys(embed_text(h, b) for h, b in rows))


def _reindex_embed(root: Path) -> dict[str, float]:
    """``memory-sidecar reindex --embed`` on ``root`` as a real process: its own chunks/s and seconds
    (from its last line), its CPU (rusage) and its VmHWM, read until it exits (a child's ru_maxrss
    would count the forking bench's pages too)."""
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "MEMORY_SIDECAR_EMBEDDER": "onnx"}
    argv = [sys.executable, "-m", "sidecar", "reindex", "--embed", "-p", str(root), "-F", "json"]
    peak = 0
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        while True:
            peak = max(peak, rss_kb(proc.pid, "VmHWM"))
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        text = err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"reindex --embed exited {proc.returncode}: {text[-500:]}")
    found = re.search(r"embedded ([\d,]+) chunks in ([\d.]+) s \(([\d.]+) chunks/s\)", text)
    assert found, text[-500:]
    return {
        "took": float(found[2]),
        "rate": float(found[3]),
        "cpu": usage.ru_utime + usage.ru_stime,
        "hwm": peak / 1024,
    }


async def _query_during_backlog(texts: list[str]) -> None:
    """A query's embedding time, idle and while the backlog path works through ``texts`` in the
    batcher's calls of 8 (the embedder as the server builds it)."""
    model = OnnxEmbedder()
    queries = iter(dict.fromkeys(make_queries(5000, seed=43)))

    async def timed() -> float:
        started = time.perf_counter()
        await model.embed([next(queries)])
        return time.perf_counter() - started

    await timed()
    idle = [await timed() for _ in range(40)]

    async def backlog() -> None:
        for start in range(0, len(texts), IN_PROCESS_BATCH):
            await model.embed_background(texts[start : start + IN_PROCESS_BATCH])

    cpu0, t0 = time.process_time(), time.perf_counter()
    task = asyncio.create_task(backlog())
    during = []
    while not task.done():
        during.append(await timed())
        await asyncio.sleep(0.05)
    took, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await model.aclose()
    report("query embedding, idle", ms(idle))
    report(
        f"query embedding while {len(texts)} chunks embed in the background",
        ms(during),
        f"({len(during)} queries; backlog {len(texts) / took:.1f} chunks/s, CPU {cpu * 1000 / len(texts):.1f} ms/chunk)",
    )


def main() -> None:
    configure_logging("console", "warning")
    if not OnnxEmbedder.available():
        report("embed", "skipped: the [embed] extra is not installed")
        return
    model = OnnxEmbedder()
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as tmp:
        base = Path(tmp)
        if "scan" in PARTS:
            bench_scan(base)
        if "throughput" in PARTS:
            bench_throughput(base, model)
        if "rss" in PARTS:
            bench_rss()
        if "hybrid" in PARTS:
            bench_hybrid(base, model)
        del model
        if "backlog" in PARTS:
            bench_backlog(base)


if __name__ == "__main__":
    main()
