"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence

__all__ = ["ms", "pct", "report"]


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
