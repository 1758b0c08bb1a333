"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.retrieval.batcher import EmbedBatcher
    from sidecar.retrieval.vectors import VectorIndex

__all__ = ["drain", "ms", "pct", "report"]


def pct(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def ms(samples_s: Sequence[float]) -> str:
    values = [s * 1000 for s in samples_s]
    return f"p50 {pct(values, 50):.3f} ms  p99 {pct(values, 99):.3f} ms  mean {statistics.fmean(values):.3f} ms"


def cpu_reference() -> float:
    """Milliseconds this machine takes for a fixed pure-Python loop (best of 3): the same code's
    figures move with it on a shared host, so the load bench prints it beside them."""
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        total = 0
        for i in range(5_000_000):
            total += i
        best = min(best, time.process_time() - started)
    return best * 1000


def report(name: str, value: str, target: str = "") -> None:
    """One benchmark figure per line: name | value | target (the README table is made from these)."""
    print(f"{name:<48} | {value:<52} | {target}", flush=True)


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
