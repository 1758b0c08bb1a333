"""One sidecar per memory dir: a second one on the same dir stops at once, naming the first, and
touches nothing in the dir (two used to run side by side, the second running the daily decay on
the first's journal). Real processes on a real dir; the in-process test takes the lock twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from sidecar.errors import TierLocked
from sidecar.retrieval.flags import CLEAN_FILES
from sidecar.server.lifecycle import OpeningTiers
from sidecar.settings import Settings
from tests.support.procs import free_port, start_sidecar


async def test_the_second_opening_of_a_locked_dir_is_refused_until_the_first_lets_go(
    memory_dir: Path, make_settings: Callable[..., Settings]
) -> None:
    first = OpeningTiers(make_settings())
    with pytest.raises(TierLocked, match=rf"pid {os.getpid()}"):
        OpeningTiers(make_settings())
    with pytest.raises(TierLocked):  # a lead locks its crew dir too: the agent dir stops it here
        OpeningTiers(make_settings(role="lead"))
    tiers = await first.wait()
    await tiers["agent"].close()
    first.release()
    second = OpeningTiers(make_settings())
    await (await second.wait())["agent"].close()
    second.release()


def test_a_second_sidecar_on_the_same_dir_exits_at_once_and_touches_nothing(memory_dir: Path, tmp_path: Path) -> None:
    first = start_sidecar(memory_dir, "--watch", "false")
    try:
        left_behind = memory_dir / ".AGENT.md.0badc0de.tmp"  # what a start-up sweep would delete
        left_behind.write_text("a temp file the first sidecar's writes could own")
        index = memory_dir / "index.sqlite"
        before = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in memory_dir.iterdir() if p.is_file()}
        second = subprocess.run(
            [sys.executable, "-m", "sidecar", "serve", "--memory-dir", str(memory_dir), "--port", str(free_port()),
             "--log-format", "json", "--embedder", "none", "--watch", "false"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert second.returncode == 1, second
        events = [json.loads(line) for line in second.stdout.splitlines() + second.stderr.splitlines() if line]
        failed = [e for e in events if e["event"] == "sidecar.start_failed"]
        assert failed and failed[0]["code"] == "tier_locked" and f"pid {first.proc.pid}" in failed[0]["error"]
        assert not [e for e in events if e["event"] in ("index.opened", "episodic.started", "sidecar.ready")]
        after = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in memory_dir.iterdir() if p.is_file()}
        assert left_behind.exists() and index.exists()
        # The first sidecar's own files (index, journal, knowledge graph, the files its scanner found
        # clean) may move meanwhile.
        own = ("journal", "index", "kg", CLEAN_FILES)
        assert {k: v for k, v in after.items() if not k.startswith(own)} == {
            k: v for k, v in before.items() if not k.startswith(own)
        }
    finally:
        first.stop(signal.SIGKILL)
    third = start_sidecar(memory_dir, "--watch", "false")  # the kernel dropped the dead one's lock
    try:
        assert not left_behind.exists(), "the sweep runs again once the dir is this sidecar's"
    finally:
        third.kill()
