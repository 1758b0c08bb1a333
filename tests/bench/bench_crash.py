"""SIGKILL crash campaign as a benchmark: 1000 trials of a writer killed at a random point.

Runs ``python -m tests.support.crash_campaign DIR --trials N`` (``CRASH_TRIALS``, default 1000) in a
fresh directory and reports its JSON summary: trials, acknowledged writes, torn files, lost
acknowledged writes, index mismatches, seconds.

    python -m tests.bench bench_crash          CRASH_TRIALS=200 python -m tests.bench bench_crash
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.bench.util import report

__all__ = ["main"]


def main() -> None:
    trials = int(os.environ.get("CRASH_TRIALS", "1000"))
    base = Path(tempfile.mkdtemp(prefix="bench-crash-"))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.support.crash_campaign", str(base / "memory"), "--trials", str(trials)],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    lines = done.stdout.strip().splitlines()
    if not lines:
        report("crash campaign", f"no summary (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return
    totals = json.loads(lines[-1])
    report("crash: trials (SIGKILL at a random point)", str(totals["trials"]))
    report("crash: files advanced by an acknowledged write", f"{totals['acked_writes']} (summed per trial)")
    report("crash: torn files", str(totals["torn"]), "0")
    report("crash: lost acknowledged writes", str(totals["lost"]), "0")
    report("crash: index mismatches after reopen", str(totals["index_mismatch"]), "0")
    report("crash: orphan temp files swept", str(totals["orphans"]))
    report("crash: seconds", str(totals["seconds"]))
    if done.returncode != 0:
        report("crash: campaign exit status", str(done.returncode), "0")


if __name__ == "__main__":
    main()
