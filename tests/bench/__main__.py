"""``make bench``: run every benchmark script and print its figures.

Run one with ``python -m tests.bench index`` (names: index, writes, cli, crew, embed, episodic, journal, retrieval,
load, http, crash, scan, consolidation, store, kg, kg_store, palace, backfill, int8_rows). The words after a bench's name, up to
the next bench's name, are that bench's arguments: ``python -m tests.bench retrieval --only locomo kg`` runs
``retrieval.main(["--only", "locomo"])`` and then ``kg.main([])``. A bench whose ``main`` takes no arguments is
configured by its environment variables (``INDEX_PARTS=...``) and refuses any. Results on this machine, and the
command behind each: docs/benchmarks.md.
"""

from __future__ import annotations

import importlib
import inspect
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
    "scan_speed",
    "consolidation",
    "store",
    "kg",
    "kg_store",
    "palace",
    "backfill",
    "int8_rows",
]


def _suite(word: str) -> str | None:
    """The module a command-line word names (``index`` or ``bench_index``), or None."""
    if f"bench_{word}" in SUITES:
        return f"bench_{word}"
    return word if word in SUITES else None


def plan(argv: list[str]) -> list[tuple[str, list[str]]]:
    """Each bench asked for, with the words after its name up to the next bench's name; every
    bench with no arguments when none is named. A word before the first name is an error."""
    if not argv:
        return [(name, []) for name in SUITES]
    runs: list[tuple[str, list[str]]] = []
    for word in argv:
        name = _suite(word)
        if name is not None:
            runs.append((name, []))
        elif runs:
            runs[-1][1].append(word)
        elif word.startswith("-"):
            raise SystemExit(
                f"{word!r} comes before any bench's name: python -m tests.bench NAME [ARGS] [NAME [ARGS]]..."
            )
        else:
            runs.append((word, []))  # not one of SUITES: reported as not present below
    return runs


def main(argv: list[str]) -> int:
    for name, args in plan(argv):
        try:
            module = importlib.import_module(f"tests.bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"tests.bench.{name}":
                print(f"# {name}: not present, skipped", flush=True)
                continue
            raise
        takes = bool(inspect.signature(module.main).parameters)
        if args and not takes:
            raise SystemExit(f"{name} takes no arguments (its environment variables choose what it runs): {args}")
        print(f"# {name}" + (f" {' '.join(args)}" if args else ""), flush=True)
        if takes:
            module.main(args)
        else:
            module.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
