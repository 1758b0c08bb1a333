"""SIGTERM on a real sidecar process: the reindex queue drains before exit, nothing is lost."""

from __future__ import annotations

import json
import signal
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from sidecar.index.tier_index import TierIndex
from tests.support.procs import start_sidecar
from tests.support.waiting import wait_until


@pytest.mark.slow
def test_sigterm_with_a_full_queue_drains_it(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    side = start_sidecar(memory, "--watch", "false", "--reconcile-interval", "0")
    # A few sections each: what is queued matters here, not its size (the checks a write passes
    # before it is acknowledged cost CPU by the kilobyte).
    body = "\n\n".join(f"## Part {i}\n" + ("filler words about deploys " * 30) for i in range(3))

    def one(i: int) -> int:
        with httpx.Client(base_url=side.url, timeout=30) as client:
            r = client.post(
                "/memory/write",
                json={"path": f"topics/t{i:03d}.md", "content": f"# T{i}\nmarker{i:03d}\n\n{body}", "mode": "replace"},
            )
            assert r.status_code == 201, r.text
            return int(r.json()["seq"])

    # Hold the index's write lock from another connection, as a long reader-writer would: the
    # worker blocks (busy_timeout), acknowledged writes pile up in the queue.
    blocker = sqlite3.connect(memory / "index.sqlite", isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    with ThreadPoolExecutor(8) as pool:
        seqs = list(pool.map(one, range(120)))
    side.proc.send_signal(signal.SIGTERM)
    # The lock is held until the sidecar has taken the signal and counted its queue.
    wait_until(lambda: '"sidecar.shutdown"' in side.log_text(), timeout=60, message="sidecar.shutdown in the log")
    blocker.execute("ROLLBACK")
    blocker.close()
    assert side.proc.wait(timeout=60) == 0
    events = [json.loads(line) for line in side.log_text().splitlines() if line.startswith("{")]
    shutdown = next(e for e in events if e["event"] == "sidecar.shutdown")
    drained = next(e for e in events if e["event"] == "queue.drained")
    assert drained["indexed_seq"] == max(seqs) == 120
    assert shutdown["queue_pending"] >= 119
    # The index on disk (opened without reconciling) already holds every write.
    index = TierIndex(memory)
    index._try_open()
    for i in (0, 57, 119):
        assert [h.path for h in index.search(f"marker{i:03d}", 5)] == [f"topics/t{i:03d}.md"]
    assert index.writer.execute("SELECT COUNT(*) FROM files").fetchone()[0] == 120
    index.close()
