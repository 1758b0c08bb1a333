"""Crash safety: writers killed with SIGKILL at random points never tear or lose acknowledged data."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from sidecar.index.chunker import chunk_markdown
from sidecar.index.tier_index import TierIndex
from tests.support.procs import start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until


@pytest.mark.slow
def test_crash_campaign_200_sigkill_trials(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.support.crash_campaign",
            str(tmp_path / "memory"),
            "--trials",
            "200",
            "--seed",
            "7",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["trials"] == 200
    assert summary["acked_writes"] > 200, "too few writes were acknowledged for the campaign to mean much"
    assert (summary["torn"], summary["lost"], summary["index_mismatch"]) == (0, 0, 0), (summary, proc.stderr[-3000:])
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_sigkilled_sidecar_keeps_every_acknowledged_append(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    rng = random.Random(3)
    acked: list[str] = []
    for trial in range(3):
        side = start_sidecar(memory, "--watch", "false")
        stop = threading.Event()

        def writer(n: int, side_url: str = side.url, trial: int = trial, stop: threading.Event = stop) -> None:
            with httpx.Client(base_url=side_url, timeout=HANG_GUARD_S) as client:
                for i in range(10_000):
                    if stop.is_set():
                        return
                    line = f"- t{trial} w{n} i{i} ackcheck"
                    try:
                        r = client.post("/memory/write", json={"path": f"daily/2026-02-0{n}.md", "content": line})
                    except httpx.HTTPError:
                        return
                    if r.status_code == 201:
                        acked.append(line)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(1, 4)]
        before = len(acked)
        for t in threads:
            t.start()
        # Killed once this trial has acknowledged some writes (a loaded host answers the first
        # ones slowly), at a random point after that.
        wait_until(lambda before=before: len(acked) - before >= 10, timeout=60, message="ten acknowledged writes")
        threading.Event().wait(rng.uniform(0.0, 0.5))
        side.proc.send_signal(signal.SIGKILL)
        side.proc.wait()
        stop.set()
        for t in threads:
            t.join()
    lines = [ln for p in sorted(memory.glob("daily/*.md")) for ln in p.read_text().splitlines()]
    assert len(acked) > 30
    assert set(acked) <= set(lines), "an acknowledged append is missing after SIGKILL"
    assert len(lines) == len(set(lines)), "an append landed twice"
    # A restarted sidecar sweeps temp files and serves an index equal to the files.
    side = start_sidecar(memory, "--watch", "false")
    side.stop()
    assert not list(memory.rglob(".*.tmp"))
    index = TierIndex(memory)
    index.open()
    for path in sorted(memory.glob("daily/*.md")):
        rel = path.relative_to(memory).as_posix()
        got = index.writer.execute("SELECT hash FROM chunks WHERE path = ? ORDER BY ord", (rel,)).fetchall()
        assert [g[0] for g in got] == [c.hash for c in chunk_markdown(path.read_text())]
    index.close()
