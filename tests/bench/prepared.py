"""A generated memory dir whose index already holds the shipped model's vectors, for benchmarks of
the default (hybrid) configuration in steady state.

Embedding 10k chunks takes minutes on two cores, so vectors (and their sentence vectors) are
cached across runs in ``$TMPDIR/memory-sidecar-bench/chunk-vectors.sqlite``, keyed by (model,
chunk hash) as the index's own ``embeddings`` table is: the first run embeds, later runs copy. The memory dir is written by
``make_corpus`` (fixed seed), indexed by the real ``Tier``, and the vectors are stored through the
tier's writer the way the background batcher stores them, so a sidecar started on it has no
backlog.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import tempfile
import time
from pathlib import Path

import numpy as np

from sidecar.index.tier import Tier
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.vectors import VectorIndex

__all__ = ["CACHE", "embed_memory"]

CACHE = Path(tempfile.gettempdir()) / "memory-sidecar-bench"
BATCH = 32


async def _embed(root: Path, model: OnnxEmbedder, cache: sqlite3.Connection) -> tuple[int, int]:
    tier = Tier("agent", root)
    await tier.open(postings=False)
    await tier.reconcile()
    vectors = VectorIndex(tier.index.path, model.model_id, model.dim)
    fresh = stored = 0
    try:
        await asyncio.to_thread(vectors.refresh)
        while pending := await asyncio.to_thread(vectors.missing, 512):
            hashes = [p.hash for p in pending]
            marks = ",".join("?" * len(hashes))
            sql = f"SELECT hash, vector, sentences FROM chunk_vectors WHERE model = ? AND hash IN ({marks})"
            found = {
                h: (np.frombuffer(v, dtype="<f4").copy(), np.frombuffer(s, dtype="<f4").reshape(-1, model.dim).copy())
                for h, v, s in cache.execute(sql, (model.model_id, *hashes))
            }
            todo = [p for p in pending if p.hash not in found]
            for start in range(0, len(todo), BATCH):
                part = todo[start : start + BATCH]
                texts, spans = [p.text for p in part], [p.sentences for p in part]
                matrix, parts = await asyncio.to_thread(model.embed_sync_sentences, texts, spans)
                rows = [
                    (model.model_id, p.hash, matrix[i].astype("<f4").tobytes(), parts[i].astype("<f4").tobytes())
                    for i, p in enumerate(part)
                ]
                cache.executemany("INSERT OR REPLACE INTO chunk_vectors VALUES (?, ?, ?, ?)", rows)
                cache.commit()
                found.update({p.hash: (matrix[i], parts[i]) for i, p in enumerate(part)})
                fresh += len(part)
            items = [(h, found[h][0].astype(np.float32)) for h in hashes]
            sentences = {h: found[h][1] for h in hashes if len(found[h][1])}
            stored += await tier.write_with(
                lambda c, items=items, sentences=sentences: VectorIndex.store(
                    c, model.model_id, model.dim, items, sentences
                )
            )
            await asyncio.to_thread(vectors.refresh)
    finally:
        vectors.close()
        await tier.close()
    return stored, fresh


def embed_memory(root: Path) -> str:
    """Index ``root`` (a memory dir, no sidecar serving it) and store the shipped model's vector of
    every chunk in its index; a line saying how many were cached and how many embedded now."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cache = sqlite3.connect(CACHE / "chunk-vectors.sqlite")
    cache.execute(
        "CREATE TABLE IF NOT EXISTS chunk_vectors "
        "(model TEXT, hash TEXT, vector BLOB, sentences BLOB, PRIMARY KEY (model, hash))"
    )
    model = OnnxEmbedder(intra_op_threads=os.cpu_count() or 1)  # the bench waits for it: every core
    started = time.perf_counter()
    try:
        stored, fresh = asyncio.run(_embed(root, model, cache))
    finally:
        cache.close()
    took = time.perf_counter() - started
    return f"{stored} chunk vectors stored ({fresh} embedded now, the rest from {CACHE}) in {took:.1f} s"
