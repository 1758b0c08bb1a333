"""A journal with no embedder needs no numpy: its modules import it where vectors are ranked or
made, so a sidecar serving BM25 alone does not hold it (about 10 MB of its memory)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_PROBE = """
import asyncio, sys
from pathlib import Path

import sidecar.episodic
from sidecar.episodic import JournalEntry, SqliteJournalStore
from sidecar.episodic.memories import FeedbackRequest, Identity, RecallRequest, feedback, recall_memories

async def main(path):
    store = await SqliteJournalStore.open(path)
    try:
        who = Identity("w", "a", None, "default")
        stored = await store.append(JournalEntry(
            workspace_id="w", agent_id="a", entry_type="memory.fact", summary="the deploy needs two approvals",
            memory_type="fact",
        ))
        req = RecallRequest.from_json({"query": "deploy approvals"}, who, default_scope="own", default_scoring="importance")
        hits, dense = await recall_memories(store, None, req, crew_id=None)
        assert [h.entry.id for h in hits] == [stored.id] and dense == "no_embedder", (hits, dense)
        await feedback(store, FeedbackRequest.from_json({"id": stored.id, "signal": "+"}, who))
    finally:
        await store.aclose()

asyncio.run(main(Path(sys.argv[1])))
print("numpy" in sys.modules)
"""


def test_a_journal_with_no_embedder_recalls_without_importing_numpy(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "journal.sqlite")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
