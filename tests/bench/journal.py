"""The journal's part of a memory write: the ``memory.updated`` entry the reindex queue's after-hook
journals for every applied change (``record_memory_updated``, as the server calls it).

A journal over a fresh file in a temporary dir, one entry the agent wrote itself (the identity the
entries take), 200 entries to warm up, then ``JOURNAL_ENTRIES`` (1,000) entries one after another,
each awaited. Per entry: the event loop's CPU (``time.thread_time`` on it) and the journal's writer
thread's (``/proc/self/task``, clock ticks), each run in a process of its own. With
``JOURNAL_BASELINE=DIR`` (a source tree, such as ``git archive REV | tar -x -C DIR``) the same runs
are made with that tree's ``sidecar`` package, in the same rounds (each first every other round):
the round-by-round difference shows a cut smaller than the spread between runs on a busy host.
``JOURNAL_ROUNDS`` (5) rounds; the median round is the figure, the range beside it.

    python -m tests.bench journal
    JOURNAL_BASELINE=/tmp/base python -m tests.bench journal
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _thread_cpu(name: str) -> float:
    """CPU seconds of the live thread called ``name`` (0 if there is none)."""
    ids = [t.native_id for t in threading.enumerate() if t.name == name and t.native_id is not None]
    total = 0.0
    for tid in ids:
        fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def _one(entries: int) -> dict[str, float]:
    import sidecar

    assert Path(sidecar.__file__).parent.parent == Path.cwd().resolve(), sidecar.__file__
    from sidecar.episodic.entry import JournalEntry
    from sidecar.episodic.lifecycle import record_memory_updated
    from sidecar.episodic.sqlite_store import SqliteJournalStore

    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        store = await SqliteJournalStore.open(Path(tmp) / "journal.sqlite")
        try:
            await store.append(JournalEntry(workspace_id="w", agent_id="a", entry_type="note", summary="mine"))
            for i in range(200):
                await record_memory_updated(store, f"topics/w{i % 20}.md", "agent", i)
            writer, loop = _thread_cpu("journal-writer"), time.thread_time()
            for i in range(entries):
                await record_memory_updated(store, f"topics/w{i % 20}.md", "agent", 200 + i)
            loop, writer = time.thread_time() - loop, _thread_cpu("journal-writer") - writer
        finally:
            await store.aclose()
    return {"loop": loop / entries * 1000, "writer": writer / entries * 1000}


def _run(tree: Path, entries: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # Run from ``tree`` (its ``sidecar`` first on the path), not with this file's dir on it.
    code = f"import runpy, sys; sys.argv = ['journal', '--one', '{entries}']; runpy.run_path({str(__file__)!r}, run_name='__main__')"
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    from tests.bench.util import report

    entries = int(os.environ.get("JOURNAL_ENTRIES", "1000"))
    rounds = int(os.environ.get("JOURNAL_ROUNDS", "5"))
    baseline = os.environ.get("JOURNAL_BASELINE")
    trees = {"this tree": ROOT} | ({"baseline": Path(baseline)} if baseline else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    load = os.getloadavg()[0]
    for r in range(rounds):
        order = list(trees) if r % 2 == 0 else list(reversed(trees))
        for name in order:
            runs[name].append(_run(trees[name], entries))
    load = (load + os.getloadavg()[0]) / 2
    for name, got in runs.items():
        for part, label in (("loop", "the event loop"), ("writer", "the journal's writer thread")):
            values = [g[part] for g in got]
            report(
                f"[journal] {name}: {label}, per memory.updated",
                f"{statistics.median(values):.3f} ms (rounds {min(values):.3f}-{max(values):.3f})",
                f"{entries} entries x {rounds} rounds; load average {load:.1f}",
            )
    if baseline:
        for part, label in (("loop", "the event loop"), ("writer", "the writer thread")):
            paired = [a[part] - b[part] for a, b in zip(runs["this tree"], runs["baseline"], strict=True)]
            report(
                f"[journal] this tree less the baseline: {label}",
                f"{statistics.median(paired):+.3f} ms (rounds {min(paired):+.3f} to {max(paired):+.3f})",
                "round by round",
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(asyncio.run(_one(int(sys.argv[2])))))
    else:
        main()
