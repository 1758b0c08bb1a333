"""Small helpers shared by the benchmark scripts."""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["ms", "pct", "report", "wait_logged"]


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


def wait_logged(log: Path, event: str, timeout: float = 600.0) -> None:
    """Until a sidecar's JSON log (``--log-format json``) has an ``event`` line."""
    deadline = time.monotonic() + timeout
    while f'"event":"{event}"' not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {event} in {log} after {timeout:g} s")
        time.sleep(0.2)
