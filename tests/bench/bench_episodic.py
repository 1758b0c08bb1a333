"""Episodic recall over 10k embedded entries of one agent, and index_new throughput.

    python -m tests.bench.bench_episodic        (or: python -m tests.bench episodic)

Vectors: a sample of entries is embedded by the real in-process model (all-MiniLM-L6-v2 int8)
through ``index_new``, which is what the throughput figure measures; the bulk are random unit
vectors stored under the same model id, so the recall scan runs over a full 10k-row matrix.
Query vectors for the scan-only figure are real model embeddings.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np

from sidecar.episodic import JournalEntry, Query, SqliteJournalStore, hybrid_recall, index_new, recall
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.store import NewEmbedding
from sidecar.logs import configure_logging
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from tests.bench.util import ms, report

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


async def _run(root: Path) -> None:
    rng = random.Random(42)
    embedder = OnnxEmbedder()
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


def main() -> None:
    print(f"# load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (figures are wall clock)", flush=True)
    if not OnnxEmbedder.available():
        print("# bench_episodic: the [embed] extra is not installed; skipped", flush=True)
        return
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    configure_logging("console", "warning")
    with tempfile.TemporaryDirectory(prefix="bench-episodic-") as tmp:
        asyncio.run(_run(Path(tmp)))


if __name__ == "__main__":
    main()
