"""The sidecar's own part of a consolidation run keeps its event loop's steps short: the run's
process is started off the loop, and the run's report, read back from it (half a megabyte and tens
of thousands of objects on a full tier), is unpickled off the loop, so ``/healthz`` and every other
route are answered meanwhile. Measured as the loop thread's CPU time per step, never as wall time."""

from __future__ import annotations

import asyncio
import os
import pickle
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from sidecar.clock import utcnow
from sidecar.consolidate import child
from sidecar.consolidate.report import DroppedLine, Report
from tests.support.procs import process_tree

#: The most CPU one step of the loop may take while the report is read (a step that unpickles it
#: takes several times this).
STEP_CPU_S = 0.02


def _report(lines: int) -> Report:
    """A report as a full tier's run sends it: many lines left out, each naming its notes."""
    return Report(
        dry_run=False,
        periods=[f"2026-W{w:02d}" for w in range(1, 18)],
        dropped=[
            DroppedLine(
                f"Line {n} of the week's log, said again with the service on port {n % 977}.",
                (f"daily/2026-03-{n % 28 + 1:02d}.md", f"daily/2026-04-{n % 28 + 1:02d}.md"),
                "duplicate" if n % 3 else "budget",
                f"2026-W{n % 17 + 1:02d}",
                f"Line {n - n % 5} of the week's log." if n % 3 else None,
            )
            for n in range(lines)
        ],
    )


@pytest.fixture
def loop_steps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The CPU time (the loop thread's) of every step the event loop runs while the test does."""
    steps: list[float] = []
    original = asyncio.events.Handle._run

    def timed(handle: asyncio.events.Handle) -> None:
        started = time.thread_time()
        try:
            original(handle)
        finally:
            steps.append(time.thread_time() - started)

    monkeypatch.setattr(asyncio.events.Handle, "_run", timed)
    yield steps


def test_the_runs_report_is_read_back_without_a_long_loop_step(loop_steps: list[float]) -> None:
    report = _report(20_000)
    framed = child._frame(("done", report))
    started = time.thread_time()
    pickle.loads(framed[8:])
    unpickling = time.thread_time() - started
    assert unpickling > 2 * STEP_CPU_S, f"the report unpickles in {unpickling * 1000:.0f} ms: too small to tell"

    async def read_back() -> tuple[str, object] | None:
        stream = asyncio.StreamReader()
        stream.feed_data(framed)
        stream.feed_eof()
        return await child._receive(stream)

    message = asyncio.run(read_back())

    assert message == ("done", report)
    assert loop_steps, "no step of the loop was timed"
    assert max(loop_steps) < STEP_CPU_S, (
        f"a step of the loop took {max(loop_steps) * 1000:.0f} ms of CPU reading back a report that "
        f"unpickles in {unpickling * 1000:.0f} ms"
    )


def test_the_runs_process_is_started_off_the_loop(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Starting the run's process (a fork, then a wait until the new process has exec'd: as long
    as the host takes to schedule it) is no step of the loop; the run still ends with its report
    and leaves no process behind."""
    note = tmp_path / "daily" / f"{utcnow().date() - timedelta(days=30)}.md"
    note.parent.mkdir(parents=True)
    note.write_text("## Log\n- The billing worker listens on port 7311.\n")
    forks: list[int] = []
    fork_exec = subprocess._fork_exec  # type: ignore[attr-defined]

    def counted(*args: Any) -> Any:
        forks.append(threading.get_ident())
        return fork_exec(*args)

    monkeypatch.setattr(subprocess, "_fork_exec", counted)
    run = child.Run(
        tmp_path,
        None,
        utcnow().date(),
        False,
        evergreen="AGENT.md",
        workspace_id="default",
        agent_id=None,
        evergreen_cap_bytes=20_000,
        operator=None,
        archive_cap_bytes=None,
        summariser=child.SummariserSpec("none", "", "", "", 20.0, 45.0),
        log_format="console",
        log_level=30,
    )

    async def consolidate() -> tuple[Report, int]:
        return await child.run_in_child(run), threading.get_ident()

    report, loop_thread = asyncio.run(consolidate())

    assert [a.source for a in report.archived] == [f"daily/{note.name}"]
    assert forks and loop_thread not in forks
    left = [pid for pid in process_tree(os.getpid())[1:] if b"sidecar.consolidate.child" in _cmdline(pid)]
    assert left == []  # the run's process ended with it, reaped


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
