"""``make bench``: run every benchmark script and print its figures.

Run one with ``python -m tests.bench index`` (names: index, writes, cli, crew, embed, episodic, journal, retrieval,
load, http, crash, scan, consolidation, store, kg, kg_store, palace, backfill). Results on this machine, and the command behind each: docs/benchmarks.md.
"""

from __future__ import annotations

import importlib
import sys

SUITES = [
    "bench_index",
    "bench_writes",
    "bench_cli",
    "bench_crew",
    "bench_embed",
    "bench_episodic",
    "journal",
    "retrieval",
    "load",
    "bench_http",
    "bench_crash",
    "bench_scan",
    "consolidation",
    "store",
    "kg",
    "kg_store",
    "palace",
    "backfill",
]


def main(argv: list[str]) -> int:
    wanted = [f"bench_{a}" if f"bench_{a}" in SUITES else a for a in argv] or SUITES
    for name in wanted:
        try:
            module = importlib.import_module(f"tests.bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tests.bench.{name}":
                print(f"# {name}: not present, skipped", flush=True)
                continue
            raise
        print(f"# {name}", flush=True)
        module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
