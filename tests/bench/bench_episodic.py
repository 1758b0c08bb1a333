"""Episodic recall over 10k embedded entries of one agent, index_new throughput, and typed memories
at 10k and 100k live memories of one agent in one namespace.

    python -m tests.bench.bench_episodic        (or: python -m tests.bench episodic)

Vectors: a sample of entries is embedded by the real in-process model (all-MiniLM-L6-v2 int8)
through ``index_new``, which is what the throughput figure measures; the bulk are random unit
vectors stored under the same model id, so the recall scan runs over a full matrix. Query vectors
are real model embeddings, computed afresh by every recall (the product caches none).

Typed memories: remember, recall (scoring importance and activation, query embedding included),
topic-key upserts and feedback, each with wall clock and the process's CPU per operation, and the
limits measured in the same run (the model alone on the same query texts, a numpy product over the
same matrix, raw FTS5 over the same mirror). Knobs: ``EPISODIC_PARTS`` (``journal,typed``),
``EPISODIC_SIZES`` (``10000,100000``), ``EPISODIC_QUERIES`` (200 per figure), ``EPISODIC_WRITES``
(100 upserts and 100 feedbacks per size). ``EPISODIC_PARTS=typed,http`` also serves the typed
journal, at its last size, from a real sidecar and times recall over HTTP (``POST /memory/recall``).
``EPISODIC_PARTS=real`` checks the dense leg's first pass (sign codes, then exact scores) against
exact search on real model vectors: LoCoMo's turns, observations and summaries, embedded by the
model (cached in ``$TMPDIR/memory-sidecar-bench/doc-vectors.sqlite``), asked LoCoMo's questions
from the 401st on (the first 400 were looked at while choosing the codes' size and cut).
"""

from __future__ import annotations

import os

# As the server runs (sidecar/__init__.py): numpy's OpenBLAS on one thread, set before numpy loads.
# Two threads halve a 100k-row product's wall clock, then spin a core for ~0.1 s after it.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# isort: split

import asyncio
import contextlib
import json
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import httpx
import numpy as np
import numpy.typing as npt

from sidecar.episodic import JournalEntry, Query, SqliteJournalStore, hybrid_recall, index_new, recall, vector_set
from sidecar.episodic.entry import MEMORY_TYPES
from sidecar.episodic.memories import (
    NEAR_MISS,
    FeedbackRequest,
    Identity,
    RecallRequest,
    RememberRequest,
    feedback,
    recall_memories,
    remember,
)
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.sqlite_sql import MAX_TERM_DOCS, TERM_DOCS, fts_match, tokens
from sidecar.episodic.store import NewEmbedding
from sidecar.episodic.vector_set import VectorRow, VectorSet
from sidecar.index.query import terms
from sidecar.kg.ingest import SUPERSEDE_S
from sidecar.kg.lifecycle import FOLLOW_S
from sidecar.logs import configure_logging
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.hybrid import DENSE_MATCH
from tests.bench.util import ms, pct, report
from tests.support.procs import cpu_s, start_sidecar

T = TypeVar("T")

ENTRIES = 10_000
REAL_SAMPLE = 500
OTHER_AGENT = 2_000
QUERIES = 300
TOPICS = ["checkout", "payments", "search", "deploy", "keeper", "billing", "auth", "cache", "queue", "export"]
EVENTS = ["OOM killed", "timed out", "was denied", "regressed on eval", "escalated to the lead", "rolled back"]


_SYLLABLES = ["ka", "lo", "mi", "ter", "vos", "dra", "pel", "qui", "zen", "bor", "fa", "nix"]
VOCABULARY = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})


def _summary(rng: random.Random, n: int) -> str:
    """A topic, an event and three rare words, so BM25 postings vary as they would in a real journal."""
    return f"{rng.choice(TOPICS)} {rng.choice(EVENTS)}: {' '.join(rng.sample(VOCABULARY, 3))} #{n}"


async def _fill(store: SqliteJournalStore, rng: random.Random) -> list[str]:
    ids: list[str] = []
    for n in range(ENTRIES + OTHER_AGENT):
        agent = "a1" if n < ENTRIES else "a2"
        entry = JournalEntry(
            workspace_id="bench", agent_id=agent, entry_type="peer.escalation", summary=_summary(rng, n)
        )
        ids.append((await store.append(entry)).id)
    return ids


async def _index_real_sample(store: SqliteJournalStore, embedder: OnnxEmbedder) -> tuple[int, float]:
    t0 = time.perf_counter()
    indexed = await index_new(store, embedder)
    return indexed, time.perf_counter() - t0


async def _bulk_random(store: SqliteJournalStore, model: str, dim: int) -> int:
    pending = await store.unindexed(model, ENTRIES + OTHER_AGENT)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((len(pending), dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [NewEmbedding(e.id, v, model, e.base_importance) for e, v in zip(pending, vectors, strict=True)]
    await store.add_embeddings(rows, [], datetime.now(UTC))
    return len(rows)


async def _timed(run: Callable[[T], Awaitable[object]], items: Sequence[T]) -> list[float]:
    samples = []
    for item in items:
        t0 = time.perf_counter()
        await run(item)
        samples.append(time.perf_counter() - t0)
    return samples


async def _journal(root: Path, embedder: OnnxEmbedder) -> None:
    rng = random.Random(42)
    store = await SqliteJournalStore.open(root / "journal.sqlite")
    try:
        await _fill(store, rng)
        # index_new with the real model on a sample: make only the sample unindexed-and-embeddable first.
        sample_store = await SqliteJournalStore.open(root / "sample.sqlite")
        for n in range(REAL_SAMPLE):
            await sample_store.append(
                JournalEntry(
                    workspace_id="bench", agent_id="a1", entry_type="peer.escalation", summary=_summary(rng, n)
                )
            )
        indexed, seconds = await _index_real_sample(sample_store, embedder)
        await sample_store.aclose()
        report(
            f"index_new, real model, {indexed} entries",
            f"{indexed / seconds:.0f} entries/s ({seconds:.2f} s, batches of 32, similar edges included)",
        )
        bulk = await _bulk_random(store, embedder.model_id, embedder.dim)
        print(f"# recall matrix: {bulk} random unit vectors ({ENTRIES} for agent a1, {OTHER_AGENT} for a2)", flush=True)

        t0 = time.perf_counter()
        await store.vectors("bench", embedder.model_id)
        report("cold matrix load, 12k rows", f"{(time.perf_counter() - t0) * 1000:.1f} ms", "once per index/decay")
        texts = [_summary(rng, n) for n in range(QUERIES)]
        qvecs = await embedder.embed(texts)
        where = ScopeFilter("bench", agent_id="a1")
        scan = await _timed(lambda v: store.dense_rank(where, embedder.model_id, v, 5, weighted=True), list(qvecs))
        report("dense scan only (cosine x importance), 10k rows", ms(scan), "spec: < 50 ms")
        embeds = await _timed(lambda t: embedder.embed([t]), texts)
        report("query embedding alone (real model, 1 text)", ms(embeds), "part of every recall below")
        queries = [Query("bench", t, agent_id="a1", k=5) for t in texts]
        full = await _timed(lambda q: recall(store, embedder, q), queries)
        report("recall end to end (embed query, scan, fetch, mark)", ms(full), "low ms + one embedding")
        hybrid = await _timed(lambda q: hybrid_recall(store, embedder, q), queries)
        report("hybrid_recall end to end (+ BM25 leg, RRF)", ms(hybrid))
    finally:
        await store.aclose()


# -- typed memories --------------------------------------------------------------------------------
PARTS = frozenset(os.environ.get("EPISODIC_PARTS", "journal,typed").split(","))
SIZES = tuple(int(s) for s in os.environ.get("EPISODIC_SIZES", "10000,100000").split(",") if s.strip())
TYPED_QUERIES = int(os.environ.get("EPISODIC_QUERIES", "200"))
WRITES = int(os.environ.get("EPISODIC_WRITES", "100"))
WHO = Identity("bench", "a1", None, "proj")
#: Rows outside the recall's scope, one per OTHER_EVERY in it: alternately another agent's (same
#: namespace) and the same agent's in another namespace, so the scope filter has work to do.
OTHER_EVERY = 10
#: One memory in TOPIC_KEY_EVERY holds a topic key (the upsert figures pick theirs among them).
TOPIC_KEY_EVERY = 10
RANDOM_MODEL = ("bench-random-384", 384)  # model id and dim when the model is not installed
POOL = 50  # how deep each recall leg looks (sidecar.episodic.memories.POOL for k = 5)


@dataclass(slots=True)
class Samples:
    """Wall clock and the process's CPU (every thread: model, SQLite reader and writer) per operation."""

    wall: list[float]
    cpu: list[float]

    def line(self) -> str:
        wall = [s * 1000 for s in self.wall]
        cpu = [s * 1000 for s in self.cpu]
        return (
            f"p50 {pct(wall, 50):.2f} ms, p99 {pct(wall, 99):.2f} ms;"
            f" CPU p50 {pct(cpu, 50):.2f} ms, p99 {pct(cpu, 99):.2f} ms, mean {statistics.fmean(cpu):.2f} ms"
        )


async def _measure(run: Callable[[T], Awaitable[object]], items: Sequence[T]) -> Samples:
    wall, cpu = [], []
    for item in items:
        c0, t0 = time.process_time(), time.perf_counter()
        await run(item)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return Samples(wall, cpu)


def _measure_sync(run: Callable[[T], object], items: Sequence[T]) -> Samples:
    wall, cpu = [], []
    for item in items:
        c0, t0 = time.process_time(), time.perf_counter()
        run(item)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return Samples(wall, cpu)


def _question(rng: random.Random, kind: int) -> str:
    """Varied recall queries: common words only (long BM25 postings), rare words only, and both."""
    (topic, other), event, (w1, w2) = rng.sample(TOPICS, 2), rng.choice(EVENTS), rng.sample(VOCABULARY, 2)
    return [
        f"what happened to {topic} and {other} when it {event}?",
        f"{w1} {w2}",
        f"why was {topic} {event} after the {w1} change",
        f"{topic} {w1}",
    ][kind % 4]


_KINDS = ("common words only", "common and rare", "rare words only")


def _kind(text: str) -> str:
    if text.startswith("what happened"):
        return _KINDS[0]
    return _KINDS[2] if all(w in VOCABULARY for w in text.split()) else _KINDS[1]


def _questions(rng: random.Random, count: int, taken: set[str]) -> list[str]:
    """``count`` texts never asked before in the run (the kinds in turn; one whose texts run out is skipped)."""
    found: list[str] = []
    attempts = 0
    while len(found) < count:
        text = _question(rng, attempts)
        attempts += 1
        if text not in taken:
            taken.add(text)
            found.append(text)
    return found


def _unit_rows(rng: np.random.Generator, count: int, dim: int) -> npt.NDArray[np.float32]:
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


class _Known:
    """An embedder answering from vectors computed before the run (the real model's, or random ones
    when it is not installed): recall through it costs everything but the query's embedding."""

    def __init__(self, model_id: str, dim: int, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        self.model_id, self.dim, self._vectors = model_id, dim, vectors
        self._rng = np.random.default_rng(11)

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        for text in texts:
            if text not in self._vectors:  # an entry embedded on the spot by recall
                self._vectors[text] = _unit_rows(self._rng, 1, self.dim)[0]
        return np.stack([self._vectors[t] for t in texts])

    async def aclose(self) -> None:
        return None


class _TypedJournal:
    """The typed memories of the figures, grown size by size through ``store.append``."""

    def __init__(self, store: SqliteJournalStore, model: str, dim: int) -> None:
        self.store, self.model, self.dim = store, model, dim
        self.rng = random.Random(4)
        self.vector_rng = np.random.default_rng(7)
        self.n = 0
        self.live = 0  # memories in the recall's scope (agent a1, namespace proj)
        self.other_agent = 0
        self.other_namespace = 0
        self.keys: list[str] = []
        self.pending: list[tuple[str, float]] = []

    def _entry(self, agent: str, namespace: str) -> JournalEntry:
        n, self.n = self.n, self.n + 1
        memory_type = MEMORY_TYPES[n % len(MEMORY_TYPES)]
        return JournalEntry(
            workspace_id=WHO.workspace_id,
            agent_id=agent,
            entry_type=f"memory.{memory_type}",
            summary=_summary(self.rng, n),
            priority=1 + n % 10,
            memory_type=memory_type,
            tags=(self.rng.choice(TOPICS),),
            topic_key=f"topic/{n}" if n % TOPIC_KEY_EVERY == 0 else None,
            namespace=namespace,
        )

    async def _append(self, entry: JournalEntry, *, embed_later: bool) -> None:
        stored = await self.store.append(entry)
        if embed_later:
            self.pending.append((stored.id, stored.base_importance))
        if stored.agent_id == WHO.agent_id and stored.namespace == WHO.namespace and stored.topic_key:
            self.keys.append(stored.topic_key)

    async def grow(self, live: int, *, embed_later: bool = True) -> Samples:
        """Append memories until ``live`` are in scope (and the out-of-scope rows in proportion)."""
        wall, cpu = [], []
        while self.live < live:
            c0, t0 = time.process_time(), time.perf_counter()
            await self._append(self._entry(WHO.agent_id, WHO.namespace), embed_later=embed_later)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            self.live += 1
            if self.live % OTHER_EVERY == 0:
                if self.other_agent <= self.other_namespace:
                    await self._append(self._entry("a2", WHO.namespace), embed_later=embed_later)
                    self.other_agent += 1
                else:
                    await self._append(self._entry(WHO.agent_id, "other"), embed_later=embed_later)
                    self.other_namespace += 1
        return Samples(wall, cpu)

    async def embed_pending(self) -> int:
        """Random unit vectors under the model's id for every memory appended since the last call."""
        pending, self.pending = self.pending, []
        vectors = _unit_rows(self.vector_rng, len(pending), self.dim)
        rows = [NewEmbedding(i, v, self.model, b) for (i, b), v in zip(pending, vectors, strict=True)]
        for start in range(0, len(rows), 20_000):
            await self.store.add_embeddings(rows[start : start + 20_000], [], datetime.now(UTC))
        return len(rows)

    @property
    def total(self) -> int:
        return self.live + self.other_agent + self.other_namespace


class _Rss:
    """Resident memory from /proc/self/status: now, and the peak (VmHWM) since the last ``reset``
    (which clears the kernel's high-water mark), and the peak of the whole run."""

    def __init__(self) -> None:
        self.run_peak = 0.0

    @staticmethod
    def _field(name: str) -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{name}:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def now(self) -> float:
        return self._field("VmRSS")

    def peak(self) -> float:
        value = self._field("VmHWM")
        self.run_peak = max(self.run_peak, value)
        return value

    def reset(self) -> None:
        self.peak()
        with contextlib.suppress(OSError):  # if refused, the peak runs from the start of the process
            Path("/proc/self/clear_refs").write_text("5")


RSS = _Rss()


def _recall_request(text: str, scoring: str) -> RecallRequest:
    return RecallRequest.from_json(
        {"query": text, "scoring": scoring}, WHO, default_scope="own", default_scoring="importance"
    )


async def _typed(root: Path, embedder: OnnxEmbedder | None) -> None:
    path = root / "typed.sqlite"
    model, dim = (embedder.model_id, embedder.dim) if embedder is not None else RANDOM_MODEL
    if embedder is None:
        print(
            "# typed memories: the [embed] extra is not installed: the figures that embed a query or a"
            " memory (recall end to end, the query embedding, index_new) are skipped; random query vectors"
            " stand in for the rest",
            flush=True,
        )
    store = await SqliteJournalStore.open(path)
    raw = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    journal = _TypedJournal(store, model, dim)
    taken: set[str] = set()
    qrng = random.Random(99)
    try:
        if embedder is not None:  # a real sample, embedded by the model through the indexer's own path
            await journal.grow(REAL_SAMPLE, embed_later=False)
            t0 = time.perf_counter()
            indexed = await index_new(store, embedder)
            seconds = time.perf_counter() - t0
            report(
                f"index_new, real model, {indexed} typed memories",
                f"{indexed / seconds:.0f} memories/s ({seconds:.2f} s)",
            )
        for size in SIZES:
            await _typed_size(store, raw, path, journal, embedder, size, qrng, taken)
    finally:
        raw.close()
        await store.aclose()


async def _typed_size(
    store: SqliteJournalStore,
    raw: sqlite3.Connection,
    path: Path,
    journal: _TypedJournal,
    embedder: OnnxEmbedder | None,
    size: int,
    qrng: random.Random,
    taken: set[str],
) -> None:
    label = f"{size // 1000}k"
    RSS.reset()
    appended = journal.total
    t0 = time.perf_counter()
    fill = await journal.grow(size)
    seconds = time.perf_counter() - t0
    appended = journal.total - appended
    t0 = time.perf_counter()
    embedded = await journal.embed_pending()
    stored_s = time.perf_counter() - t0
    print(
        f"# typed memories, {label}: {journal.live} live memories of agent a1 in namespace proj, plus"
        f" {journal.other_agent} of agent a2 and {journal.other_namespace} of a1 in another namespace;"
        f" {appended} appended in {seconds:.1f} s, {embedded} random unit vectors stored in {stored_s:.1f} s",
        flush=True,
    )
    report(f"[{label}] append during the fill (store.append)", fill.line())
    vectors = await store.vectors(WHO.workspace_id, journal.model)  # brought up to date in place
    texts = _questions(qrng, TYPED_QUERIES, taken)
    recalled: dict[str, Samples] = {}
    if embedder is not None:
        for text in _questions(qrng, 20, taken):  # warm-up
            await recall_memories(store, embedder, _recall_request(text, "importance"), crew_id=None)
        known: dict[str, npt.NDArray[np.float32]] = {}

        async def embed_one(text: str) -> None:
            known[text] = (await embedder.embed([text]))[0]

        embed = await _measure(embed_one, texts)
        report(f"[{label}] query embedding alone (the model, 1 text)", embed.line(), "the limit of a recall")
        for scoring in ("importance", "activation"):

            async def recall_one(text: str, scoring: str = scoring) -> None:
                await recall_memories(store, embedder, _recall_request(text, scoring), crew_id=None)

            recalled[scoring] = full = await _measure(recall_one, texts)
            report(f"[{label}] recall, scoring {scoring}, query embedded", full.line(), "p99 <= 30 ms at 100k")
    else:
        known = dict(zip(texts, _unit_rows(np.random.default_rng(5), len(texts), journal.dim), strict=True))
    fake = _Known(journal.model, journal.dim, known)
    rest = await _measure(lambda t: recall_memories(store, fake, _recall_request(t, "importance"), crew_id=None), texts)
    report(f"[{label}] recall without the embedding (vector known)", rest.line(), "recall minus the model")
    with_pass, exact = Samples([], []), Samples([], [])
    for text in texts:  # interleaved: the first pass on, then off, query by query
        for into, rows in ((with_pass, vector_set.FIRST_PASS_ROWS), (exact, 10**12)):
            saved, vector_set.FIRST_PASS_ROWS = vector_set.FIRST_PASS_ROWS, rows
            try:
                part = await _measure(
                    lambda t: recall_memories(store, fake, _recall_request(t, "importance"), crew_id=None), [text]
                )
            finally:
                vector_set.FIRST_PASS_ROWS = saved
            into.wall += part.wall
            into.cpu += part.cpu
    report(f"[{label}] the same, A/B by query: the dense leg's first pass on", with_pass.line())
    report(f"[{label}] the same, A/B by query: first pass off (exact product)", exact.line())
    product = await _parts(store, raw, journal, vectors, texts, known, label)
    if recalled:
        _against_limits(label, recalled["importance"], embed, product)
    await _writes(store, journal, embedder, fake, label, _questions(qrng, 2 * WRITES, taken), vectors)
    now, peak = RSS.now(), RSS.peak()
    second = await SqliteJournalStore.open(path)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        cold = await second.vectors(WHO.workspace_id, journal.model)
        cold_ms, cold_cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        rows = cold.size
        del cold
    finally:
        await second.aclose()
    report(
        f"[{label}] cold matrix load, {rows} rows",
        f"{cold_ms:.0f} ms, CPU {cold_cpu:.0f} ms",
        "what a reload would cost a recall",
    )
    report(
        f"[{label}] RSS: after the above / their peak / peak with the cold load",
        f"{now:.0f} / {peak:.0f} / {RSS.peak():.0f} MB",
        "the cold load beside the cached matrix, as in a reload",
    )


async def _parts(
    store: SqliteJournalStore,
    raw: sqlite3.Connection,
    journal: _TypedJournal,
    vectors: VectorSet,
    texts: list[str],
    known: dict[str, npt.NDArray[np.float32]],
    label: str,
) -> Samples:
    """Each step of a recall on its own, on the same query texts, and the limits of the two legs;
    returns numpy's full product over the matrix, query by query."""
    where = ScopeFilter(WHO.workspace_id, agent_id=WHO.agent_id, namespace=WHO.namespace)
    dense_ids: dict[str, list[str]] = {}
    sparse_ids: dict[str, list[str]] = {}
    over: dict[str, list[str]] = {}

    async def dense_leg(text: str) -> None:
        scored = await store.dense_rank(where, journal.model, known[text], POOL, weighted=False)
        dense_ids[text] = [s.entry_id for s in scored]
        over[text] = [s.entry_id for s in scored if s.cosine > DENSE_MATCH]

    async def bm25_leg(text: str) -> None:
        sparse_ids[text] = await store.bm25_rank(where, " ".join(terms(text)), POOL)

    first_ids: dict[str, list[str]] = {}
    near_ids: dict[str, list[str]] = {}  # what a recall fetches of the dense leg's pool

    async def first_pass_leg(text: str) -> None:
        scored = await store.dense_rank(where, journal.model, known[text], POOL, weighted=False, floor=DENSE_MATCH)
        first_ids[text] = [s.entry_id for s in scored if s.cosine > DENSE_MATCH]
        near_ids[text] = [s.entry_id for s in scored if s.cosine >= NEAR_MISS]

    dense, first = Samples([], []), Samples([], [])
    for text in texts:  # interleaved, query by query
        for into, leg in ((first, first_pass_leg), (dense, dense_leg)):
            one = await _measure(leg, [text])
            into.wall += one.wall
            into.cpu += one.cpu
    report(f"[{label}] of which the dense leg as recall runs it (sign codes, then exact)", first.line())
    report(f"[{label}] the dense leg exact (matrix, scope mask, top {POOL})", dense.line())
    same = sum(first_ids[t] == over[t] for t in texts)
    over_floor = statistics.median(len(over[t]) for t in texts)
    report(
        f"[{label}] the first pass's answer over the floor",
        f"equal to exact search's for {same} of {len(texts)} queries (median {over_floor:.0f} rows over it)",
        "all",
    )
    matrix = vectors.matrix
    product = _measure_sync(lambda t: matrix @ known[t], texts)
    report(f"[{label}] numpy: matrix @ query, {matrix.shape[0]} x {matrix.shape[1]}", product.line(), "limit")
    bm25 = await _measure(bm25_leg, texts)
    report(f"[{label}] of which the BM25 leg (FTS5 + scope, top {POOL})", bm25.line())

    def kept_match(text: str) -> str | None:
        """The leg's MATCH on the raw connection: the words it keeps (by the FTS5 vocabulary's counts)."""
        words = []
        for word in dict.fromkeys(tokens(" ".join(terms(text)))):
            found = raw.execute(TERM_DOCS, (word,)).fetchone()
            if found is None or found[1] <= MAX_TERM_DOCS:
                words.append(word)
        return fts_match(" ".join(words), any_token=True)

    sql = "SELECT rowid FROM journal_entries_fts WHERE journal_entries_fts MATCH ? ORDER BY bm25(journal_entries_fts)"

    def raw_fts(text: str) -> None:
        match = kept_match(text)
        if match is not None:
            raw.execute(f"{sql} LIMIT ?", (match, POOL)).fetchall()

    count_sql = "SELECT count(*) FROM journal_entries_fts WHERE journal_entries_fts MATCH ?"
    matches = {t: kept_match(t) for t in texts}
    matched = {t: 0 if m is None else raw.execute(count_sql, (m,)).fetchone()[0] for t, m in matches.items()}
    parts = []
    for kind in _KINDS:
        part = [n for n, t in enumerate(texts) if _kind(t) == kind]
        if part:
            wall = [bm25.wall[n] * 1000 for n in part]
            rows = statistics.median(matched[texts[n]] for n in part)
            parts.append(f"p50 {pct(wall, 50):.1f}, p99 {pct(wall, 99):.1f} ms ({len(part)}, {rows:.0f} rows match)")
    report(f"[{label}] BM25 leg by query: {' / '.join(_KINDS)}", " / ".join(parts), "queries, median rows matching")
    floor = _measure_sync(raw_fts, texts)
    report(f"[{label}] raw FTS5: the words kept, top {POOL} by bm25()", floor.line(), "limit (no scope)")
    pools = {t: list(dict.fromkeys([*near_ids[t], *sparse_ids[t]])) for t in texts}
    fetch = await _measure(lambda t: store.fetch(WHO.workspace_id, pools[t]), texts)  # as a recall asks
    count = statistics.fmean(len(p) for p in pools.values())
    report(f"[{label}] of which fetching the candidates (store.fetch)", fetch.line(), f"{count:.0f} rows each")
    marks = await _measure(lambda t: store.mark_referenced(WHO.workspace_id, pools[t][:5], datetime.now(UTC)), texts)
    report(f"[{label}] of which marking 5 hits referenced", marks.line())
    unindexed = await _measure(lambda _: store.unindexed(journal.model, 32), range(20))
    report(f"[{label}] store.unindexed with nothing to index", unindexed.line(), "in every indexer run")
    return product


def _against_limits(label: str, recall: Samples, embed: Samples, product: Samples) -> None:
    """The recall as a ratio to its limits in the same run: numpy's full float32 product over the
    matrix (wall p99), and the query's embedding plus that product (CPU, means)."""
    wall, limit = pct(recall.wall, 99), pct(product.wall, 99)
    cpu = statistics.fmean(recall.cpu)
    parts = statistics.fmean(embed.cpu), statistics.fmean(product.cpu)
    report(
        f"[{label}] recall (importance) against its limits",
        f"wall p99 {wall * 1000:.1f} ms = {wall / limit:.2f}x the product's p99 ({limit * 1000:.1f} ms);"
        f" CPU mean {cpu * 1000:.2f} ms = {cpu / sum(parts):.2f}x the embedding's + the product's"
        f" ({parts[0] * 1000:.2f} + {parts[1] * 1000:.2f} ms)",
        "ratios, same run",
    )


async def _writes(
    store: SqliteJournalStore,
    journal: _TypedJournal,
    embedder: OnnxEmbedder | None,
    fake: _Known,
    label: str,
    texts: list[str],
    vectors: VectorSet,
) -> None:
    """Upserts and feedbacks, each followed by a recall; the indexer's run after each upsert."""
    keys = journal.rng.sample(journal.keys, min(WRITES, len(journal.keys)))
    recaller = embedder if embedder is not None else fake
    upserts, feedbacks, after, indexing = Samples([], []), Samples([], []), Samples([], []), Samples([], [])
    reloads = 0

    async def timed(into: Samples, run: Awaitable[object]) -> None:
        c0, t0 = time.process_time(), time.perf_counter()
        await run
        into.wall.append(time.perf_counter() - t0)
        into.cpu.append(time.process_time() - c0)

    for n, key in enumerate(keys):
        topic, words = journal.rng.choice(TOPICS), " ".join(journal.rng.sample(VOCABULARY, 3))
        body = {"content": f"{topic} decision revised: {words} #u{n}", "topic_key": key, "memory_type": "decision"}
        await timed(upserts, remember(store, RememberRequest.from_json({**body, "priority": 7}, WHO).entry))
        scoring = ("importance", "activation")[n % 2]
        await timed(after, recall_memories(store, recaller, _recall_request(texts[2 * n], scoring), crew_id=None))
        if embedder is not None:  # what the indexer does once woken: embed the new version, store it
            await timed(indexing, index_new(store, embedder))
        else:
            await journal.embed_pending()
        signal = "+" if n % 3 else "-"
        req = FeedbackRequest.from_json({"topic_key": key, "signal": signal}, WHO)
        await timed(feedbacks, feedback(store, req))
        await timed(after, recall_memories(store, recaller, _recall_request(texts[2 * n + 1], scoring), crew_id=None))
        if await store.vectors(WHO.workspace_id, journal.model) is not vectors:
            reloads += 1
            vectors = await store.vectors(WHO.workspace_id, journal.model)
    report(f"[{label}] upsert: remember with a live topic key", upserts.line())
    report(f"[{label}] feedback by topic key (+ and -)", feedbacks.line())
    if indexing.wall:
        report(f"[{label}] the indexer's run for one upserted memory", indexing.line(), "in the background")
    report(
        f"[{label}] recall right after each upsert and feedback",
        after.line(),
        f"{len(after.wall)} recalls; matrix reloads: {reloads}",
    )


def _until_quiet(pid: int, share: float = 0.05, window: float = 2.0, limit: float = 1200.0) -> float:
    """Seconds until process ``pid`` used at most ``share`` of a core over a ``window``."""
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        before = cpu_s(pid)
        time.sleep(window)
        if cpu_s(pid) - before <= share * window:
            break
    return time.perf_counter() - started


def _over_http(root: Path) -> None:
    """Recall over HTTP from a real sidecar serving the typed part's journal (at its last size): its
    agent is the bench's (workspace, agent, namespace), the model on (the default configuration),
    no scheduled consolidation. One recall first loads the matrix; then ``TYPED_QUERIES`` questions
    never asked before in the run, each ``POST /memory/recall`` (importance scoring, scope own),
    timed at the client, with the sidecar's CPU per recall."""
    served = root / "served"
    served.mkdir()
    for suffix in ("", "-wal", "-shm"):
        if (root / f"typed.sqlite{suffix}").exists():
            (root / f"typed.sqlite{suffix}").rename(served / f"journal.sqlite{suffix}")
    env = {
        "MEMORY_SIDECAR_EMBEDDER": "auto",
        "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0",
        "MEMORY_SIDECAR_WORKSPACE_ID": WHO.workspace_id,
        "MEMORY_SIDECAR_AGENT_ID": WHO.agent_id,
        "MEMORY_SIDECAR_NAMESPACE": WHO.namespace,
    }
    side = start_sidecar(served, env=env, wait=300)
    try:
        # Its start-up work first: the graph reads every journal entry once (110k here), the indexer
        # looks for entries without a vector. Measured from ready until the process is quiet.
        quiet = _until_quiet(side.proc.pid)
        report("the served sidecar's start-up work on this journal", f"{quiet:.0f} s until it idled")
        # The graph keeps the entries it read for SUPERSEDE_S, looking every FOLLOW_S for those a
        # newer one superseded: after reading 110k at start that look costs ~25 ms of the event
        # loop's CPU every 2 s, under the quiet test's threshold yet in the recalls' way.
        time.sleep(SUPERSEDE_S + 2 * FOLLOW_S)
        with httpx.Client(base_url=side.url, timeout=60) as client:
            t0 = time.perf_counter()
            first = client.post("/memory/recall", json={"query": "checkout billing timeout"})
            assert first.status_code == 200 and first.json()["hits"], first.text
            report("recall over HTTP, the first (the matrix loaded)", f"{(time.perf_counter() - t0) * 1000:.0f} ms")
            questions = _questions(random.Random(4242), TYPED_QUERIES, set())
            walls: list[float] = []
            cpu0 = cpu_s(side.proc.pid)
            for text in questions:
                t0 = time.perf_counter()
                answer = client.post("/memory/recall", json={"query": text, "scoring": "importance"})
                walls.append(time.perf_counter() - t0)
                assert answer.status_code == 200, answer.text
            cpu = (cpu_s(side.proc.pid) - cpu0) / len(questions)
        report(
            f"recall over HTTP, {SIZES[-1]:,} live, query embedded (importance)",
            f"{ms(walls)}; sidecar CPU {cpu * 1000:.1f} ms per recall; load average {os.getloadavg()[0]:.1f}",
            "p99 <= 60 ms",
        )
    finally:
        side.stop()


#: LoCoMo questions looked at while choosing the sign codes' size and cut (the rest are held out).
REAL_TUNED = 400


def _strings(node: object) -> list[str]:
    """Every text of 25 characters or more in a LoCoMo sample's nested lists and dicts."""
    if isinstance(node, str):
        return [node] if len(node) >= 25 else []
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [text for value in values for text in _strings(value)]


async def _real(root: Path, embedder: OnnxEmbedder) -> None:
    """The dense leg's first pass against exact search on real model vectors (no journal: the
    matrix itself), alone and padded with random unit rows to the typed part's 110,000."""
    from tests.bench.retrieval import CACHE, DATA, CachedEmbedder

    samples = json.loads((DATA / "locomo-dev.json").read_text(encoding="utf-8"))
    texts = list(
        dict.fromkeys(
            t
            for s in samples
            for k in ("conversation", "observation", "event_summary", "session_summary")
            for t in _strings(s[k])
        )
    )
    questions = [qa["question"] for s in samples for qa in s["qa"]][REAL_TUNED:]
    cached = CachedEmbedder(embedder, CACHE / "doc-vectors.sqlite")
    try:
        started = time.perf_counter()
        rows = np.concatenate([await cached.embed(texts[n : n + 256]) for n in range(0, len(texts), 256)])
        queries = await cached.embed(questions)
    finally:
        await cached.aclose()
    print(
        f"# real vectors: {len(rows)} LoCoMo texts (turns, observations, summaries), {len(queries)} held-out"
        f" questions; {cached.computed} embedded now, the rest from the cache ({time.perf_counter() - started:.0f} s)",
        flush=True,
    )
    where = ScopeFilter("bench", agent_id="a1")

    def vector_set(matrix: npt.NDArray[np.float32]) -> VectorSet:
        return VectorSet.build(
            [
                VectorRow(f"r{i}", "a1", None, "proj", "fact", None, 1.0, row.astype("<f4").tobytes(), len(row))
                for i, row in enumerate(matrix)
            ]
        )

    padded = np.concatenate([rows, _unit_rows(np.random.default_rng(17), 110_000 - len(rows), rows.shape[1])])
    saved = vector_set.FIRST_PASS_ROWS
    vector_set.FIRST_PASS_ROWS = 0  # the first pass at any size: the real rows alone are fewer than it needs
    try:
        for name, vectors in ((f"{len(rows)} real rows", vector_set(rows)), ("padded to 110,000", vector_set(padded))):
            same = lost = 0
            scored: list[int] = []
            fast, exact = Samples([], []), Samples([], [])
            for query in queries:
                c0 = time.process_time()
                first = vectors.rank(where, query, POOL, weighted=False, exclude=(), floor=DENSE_MATCH)
                fast.cpu.append(time.process_time() - c0)
                c0 = time.process_time()
                full = vectors.rank(where, query, POOL, weighted=False, exclude=())
                exact.cpu.append(time.process_time() - c0)
                want = [s.entry_id for s in full if s.cosine > DENSE_MATCH]
                got = [s.entry_id for s in first if s.cosine > DENSE_MATCH]
                same += got == want
                lost += len(set(want) - set(got))
                scored.append(
                    len(vectors.rank(where, query, vectors.size, weighted=False, exclude=(), floor=DENSE_MATCH))
                )
            fast.wall, exact.wall = fast.cpu, exact.cpu
            share = [100 * n / vectors.size for n in scored]
            report(
                f"real vectors, {name}: top {POOL} over {DENSE_MATCH} equal to exact",
                f"{same} of {len(queries)} queries; rows over it left out: {lost}",
                "all",
            )
            report(
                f"real vectors, {name}: rows scored after the codes",
                f"p50 {pct(share, 50):.1f}%, p90 {pct(share, 90):.1f}%, max {max(share):.1f}% of {vectors.size}",
            )
            report(f"real vectors, {name}: dense leg CPU, first pass / exact", f"{fast.line()} / {exact.line()}")
    finally:
        vector_set.FIRST_PASS_ROWS = saved


def main() -> None:
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the start", flush=True)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    configure_logging("console", "warning")
    started = time.perf_counter()
    embedder = OnnxEmbedder() if OnnxEmbedder.available() else None
    with tempfile.TemporaryDirectory(prefix="bench-episodic-") as tmp:
        if "journal" in PARTS:
            if embedder is None:
                print("# bench_episodic, journal: the [embed] extra is not installed; skipped", flush=True)
            else:
                asyncio.run(_journal(Path(tmp), embedder))
        if "real" in PARTS and embedder is not None:
            asyncio.run(_real(Path(tmp), embedder))
        if "typed" in PARTS:
            asyncio.run(_typed(Path(tmp), embedder))
            if "http" in PARTS and embedder is not None:
                _over_http(Path(tmp))
    RSS.peak()
    report("peak RSS of the process (VmHWM)", f"{RSS.run_peak:.0f} MB (now {RSS.now():.0f} MB)")
    print(f"# bench_episodic: {time.perf_counter() - started:.0f} s in all", flush=True)


if __name__ == "__main__":
    main()
