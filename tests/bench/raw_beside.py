"""The limit of write -> searchable under the load itself: ``bench_writes.RawAppends`` in a process of
its own, running beside the load benchmark's sidecar and its load generator.

    python -m tests.bench.raw_beside ROOT WORK EMBED EVERY_S

Copies the memory dir ``ROOT`` into ``WORK`` and builds its raw FTS5 table there (with ``EMBED`` 1,
loads the raw query embedder too), prints ``ready``, then makes one raw append (durable, into raw
FTS5, searched, the query embedded raw) every ``EVERY_S`` seconds (a pause after each, so that it
takes a writer's share of the cores, not a core of its own) until its stdin closes. Each append is
one line: ``START DURATION CPU`` (``time.monotonic()`` at its start, which the load generator's
times share, its wall-clock seconds, and this process's CPU seconds in it); then ``done``.
"""

from __future__ import annotations

import select
import sys
import time
from pathlib import Path

from tests.bench.bench_writes import RawAppends
from tests.bench.raw import RawQueryEmbedder

__all__ = ["main", "parse"]


def parse(lines: list[str]) -> list[tuple[float, float, float]]:
    """The appends' (start, seconds, CPU seconds) from the process's output lines."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) == 3:
            start, took, cpu = (float(p) for p in parts)
            out.append((start, took, cpu))
    return out


def main(argv: list[str]) -> None:
    root, work, embed, every = Path(argv[0]), Path(argv[1]), argv[2] == "1", float(argv[3])
    work.mkdir(parents=True, exist_ok=True)
    raw = RawAppends(root, work, RawQueryEmbedder() if embed else None)
    try:
        raw.append(0)  # warm up: the table's pages, the model's first run
        print("ready", flush=True)
        i = 1
        while not select.select([sys.stdin], [], [], every)[0]:  # stdin readable: closed, stop
            start, cpu0 = time.monotonic(), time.process_time()
            took = raw.append(i)
            print(f"{start:.6f} {took:.6f} {time.process_time() - cpu0:.6f}", flush=True)
            i += 1
    finally:
        raw.close()
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
