"""A run imports nothing on the event loop: the route loads the job's modules on a thread before
its first run, so everything the run then does on the loop (the typed memories' merge included) must
come with ``sidecar.consolidate.runner``. A module first imported inside the run is compiled and
executed on the loop, holding every route (a tenth of a second on a busy host)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.memory import write

PROBE = """
import asyncio, json, sys
from pathlib import Path
import sidecar.consolidate.runner as runner
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.settings import load_settings

root = Path(sys.argv[1])
settings = load_settings({"memory_dir": str(root), "crew_dir": str(root.parent / "crew")}, environ={})

async def main():
    journal = await SqliteJournalStore.open(root / JOURNAL_FILE)
    try:
        before = set(sys.modules)
        report = await runner.run_consolidation(settings, "agent", dry_run=False, journal=journal)
        after = set(sys.modules)
    finally:
        await journal.aclose()
    print(json.dumps({"new": sorted(m for m in after - before if m.startswith("sidecar")),
                      "archived": len(report.archived), "merged": report.memories_merged is not None}))

asyncio.run(main())
"""


def test_a_run_with_a_journal_imports_no_module_of_ours_on_the_loop(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    for day in ("2026-01-05", "2026-01-06", "2026-01-07"):
        write(root, f"daily/{day}.md", f"# {day}\n\n## Log\n- The billing ledger moved to the new host on {day}.\n")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(root)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["archived"] == 3 and seen["merged"], seen  # the run did its work, the merge included
    assert seen["new"] == [], seen["new"]
