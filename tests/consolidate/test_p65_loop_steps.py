"""The sidecar's own part of a consolidation run keeps its event loop's steps short: the run's
report, read back from the run's process (half a megabyte and tens of thousands of objects on a
full tier), is unpickled off the loop, so ``/healthz`` and every other route are answered between
its turns. Measured as the loop thread's CPU time per step, never as wall time."""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Iterator

import pytest

from sidecar.consolidate import child
from sidecar.consolidate.report import DroppedLine, Report

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
