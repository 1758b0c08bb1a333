"""The injection scanner on its labelled corpus: catch and false-alarm rates per class, and speed.

    .venv/bin/python -m tests.bench.bench_scan            # the per-class table and the targets
    .venv/bin/python -m tests.bench.bench_scan --list     # also every miss and every false alarm

A malicious note is caught when ``verdict`` gives a ``block`` or ``flag`` finding; a benign note
is a false alarm when it gives either. Targets: at least 95% of malicious notes caught, at most 2%
of benign notes flagged, none blocked. Each note belongs to a set: ``tuning`` (the notes the rules
were written against) or ``heldout-N`` (notes kept apart from them until measured); the rates per
set show how far the rules carry to wording they were not written against.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sidecar.scanner.scan import Finding, scan_write, verdict

CORPUS = Path(__file__).resolve().parent.parent / "data" / "injection_corpus.jsonl"
TARGET_CAUGHT, TARGET_FLAGGED, TARGET_BLOCKED = 0.95, 0.02, 0.0


def load() -> list[dict[str, Any]]:
    with CORPUS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def rates(cases: list[dict[str, Any]]) -> dict[str, dict[str, list[tuple[dict[str, Any], Finding | None]]]]:
    """class -> level ("block", "flag", "none") -> the cases and their verdicts."""
    out: dict[str, dict[str, list[tuple[dict[str, Any], Finding | None]]]] = defaultdict(lambda: defaultdict(list))
    for case in cases:
        found = verdict(case["text"])
        out[case["class"]][found.level if found else "none"].append((case, found))
    return out


def _table(title: str, by_class: dict[str, dict[str, list[Any]]], malicious: bool) -> tuple[int, int, int]:
    print(f"\n{title}")
    print(f"  {'class':<22} {'n':>4} {'block':>6} {'flag':>5} {'none':>5}  {'caught' if malicious else 'flagged':>8}")
    total = blocked = flagged = 0
    for name in sorted(by_class):
        levels = by_class[name]
        n_block, n_flag, n_none = (len(levels[level]) for level in ("block", "flag", "none"))
        n = n_block + n_flag + n_none
        total, blocked, flagged = total + n, blocked + n_block, flagged + n_flag
        share = (n_block + n_flag) / n
        print(f"  {name:<22} {n:>4} {n_block:>6} {n_flag:>5} {n_none:>5}  {share:>7.1%}")
    return total, blocked, flagged


def _listing(by_class: dict[str, dict[str, list[Any]]], levels: tuple[str, ...], title: str) -> None:
    print(f"\n{title}")
    for name in sorted(by_class):
        for level in levels:
            for case, found in by_class[name][level]:
                why = f"{found.level} {found.pattern}: {found.excerpt!r}" if found else "missed"
                print(f"  [{name}] {case['text'][:90]!r}\n      -> {why}")


def _speed() -> None:
    para = "Deploys go out on Tuesdays; the on-call engineer watches the error budget. " * 12 + "\n\n"
    for size in (4_000, 100_000, 2_000_000):
        text = (para * (size // len(para) + 1))[:size]
        started = time.perf_counter()
        verdict(text)
        took = time.perf_counter() - started
        started = time.perf_counter()
        scan_write(text, text + "\nAppended a line about the deploy.\n")
        append = time.perf_counter() - started
        print(f"  {size:>9,} chars: verdict {took * 1000:8.1f} ms   scan_write(append) {append * 1000:7.1f} ms")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    cases = load()
    malicious = rates([c for c in cases if c["malicious"]])
    benign = rates([c for c in cases if not c["malicious"]])
    m_total, m_block, m_flag = _table("malicious notes (caught = block or flag)", malicious, True)
    b_total, b_block, b_flag = _table("benign notes (a block or flag is a false alarm)", benign, False)
    caught = (m_block + m_flag) / m_total
    flagged, blocked = (b_block + b_flag) / b_total, b_block / b_total
    print("\ntargets")
    print(f"  malicious caught   {caught:7.1%}  of {m_total}  (target >= {TARGET_CAUGHT:.0%})")
    print(f"  benign flagged     {flagged:7.1%}  of {b_total}  (target <= {TARGET_FLAGGED:.0%})")
    print(f"  benign blocked     {blocked:7.1%}  of {b_total}  (target {TARGET_BLOCKED:.0%})")
    print("\nper set (caught / benign flagged / benign blocked)")
    for name in sorted({c["set"] for c in cases}):
        mal = [c for c in cases if c["set"] == name and c["malicious"]]
        ben = [c for c in cases if c["set"] == name and not c["malicious"]]
        found = [verdict(c["text"]) for c in ben]
        caught_n = sum(verdict(c["text"]) is not None for c in mal)
        flagged_n = sum(f is not None for f in found)
        blocked_n = sum(f is not None and f.level == "block" for f in found)
        print(f"  {name:<10} {caught_n}/{len(mal)}  {flagged_n}/{len(ben)}  {blocked_n}/{len(ben)}")
    print("\nspeed (clean prose)")
    _speed()
    if "--list" in args:
        _listing(malicious, ("none",), "missed malicious notes")
        _listing(benign, ("block", "flag"), "benign notes flagged or blocked")


if __name__ == "__main__":
    main()
