"""Helpers for tests and benchmarks that embed a tier with the real batcher."""

from __future__ import annotations

import asyncio
import time

from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.vectors import VectorIndex

__all__ = ["drain"]


async def drain(batcher: EmbedBatcher, vectors: VectorIndex) -> float:
    """Start ``batcher``, wait until ``vectors`` holds a vector for every chunk, stop it; return
    the seconds until the backlog was empty."""
    started = time.perf_counter()
    batcher.start()
    while True:
        await asyncio.sleep(0.05)
        await asyncio.to_thread(vectors.refresh)
        if vectors.size and not vectors.backlog:
            break
    took = time.perf_counter() - started
    await batcher.stop()
    return took
