"""How long the sidecar kept an answer, less the time the host kept it from running.

A test that asks ``/healthz`` while long work runs measures the event loop's lag. On a host shared
with other work, part of that wall time is the kernel's: this process's threads were runnable but
waited for a CPU (the run-queue wait the kernel counts per thread in
``/proc/self/task/<tid>/schedstat``, second field, in ns). That part is taken off, so the bound
judges the sidecar (a loop held by a callback or by a thread keeping the GIL while it computes),
not the host's load. Where the kernel does not count it, nothing is taken off (wall time); a
thread that ends meanwhile takes its count with it, so less is taken off, never more.

Summed over every thread, that wait can exceed what held the answer up: threads waiting side by
side (a thread pool, a model's threads) each count it. ``PathStopwatch`` takes off only the wait
of the threads the timed answer passes through one after the other: the calling thread (the test's
event loop, which runs an in-process sidecar too) and the main thread (the event loop) of each
other process asked.

A wait on a state polls: the test asks again and again until the answer shows the state. Only the
answer that shows it is on the path; the answers "not yet" were asked beside the work, so the wait
their threads had while giving them is the observer's, not the path's. ``PathStopwatch.wait_until``
polls as ``tests.support.waiting.wait_until`` does and takes off nothing while a poll answers "not
yet"; elsewhere it takes off the path's wait, at most the time that passed (the path is held one
step at a time, so it cannot have waited longer than that). The kernel adds a wait to the count
when it ends, so a wait counts in the stretch where it ended, and one longer than that stretch is
taken off only up to its length: what is left errs towards the wall clock."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeVar

from tests.support.waiting import HANG_GUARD_S, describe, wait_until

__all__ = ["PathStopwatch", "Stopwatch", "host_wait_s", "main_thread_wait_s", "thread_wait_s"]

T = TypeVar("T")


def host_wait_s() -> float:
    """Seconds this process's threads have spent runnable but waiting for a CPU, summed."""
    total = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                total += int(f.read().split()[1])
        except (OSError, IndexError, ValueError):  # a thread that ended meanwhile
            continue
    return total / 1e9


def thread_wait_s() -> float:
    """Seconds the calling thread has spent runnable but waiting for a CPU (0 where the kernel does
    not count it)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def main_thread_wait_s(pid: int) -> float:
    """Seconds the main thread of process ``pid`` has spent runnable but waiting for a CPU (0 for a
    process that is gone, or where the kernel does not count it)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat", encoding="ascii") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class Stopwatch:
    """Started when made; ``own()`` is the wall time since, less the host's run-queue wait. The wait
    is read inside the span the clock reads (after it at the start, before it at the end), so a
    wait for a CPU between the two readings is never taken off time it is not part of: ``own()``
    is never less than the time the process had."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.waited = host_wait_s()

    def wall(self) -> float:
        return time.perf_counter() - self.started

    def own(self) -> float:
        waited = host_wait_s() - self.waited
        return max(0.0, self.wall() - waited)


class PathStopwatch:
    """Started when made, on the thread that waits for the answer; ``own()`` is the wall time since,
    less the run-queue wait of that thread and of the main threads of the processes ``pids`` (for
    ``wait_until``, as it says)."""

    def __init__(self, *pids: int) -> None:
        self.pids = pids
        self.started = time.perf_counter()
        self.mark = self.started  # the end of the last stretch settled in `held`
        self.mine, self.theirs = self._waits()  # the waits at `mark`
        self.held = 0.0  # the run-queue wait taken off up to `mark`

    def _waits(self) -> tuple[float, float]:
        """The calling thread's wait, and the named processes' main threads' wait, summed."""
        return thread_wait_s(), sum(main_thread_wait_s(pid) for pid in self.pids)

    def _stretch(self) -> tuple[float, float, float]:
        """The time since ``mark``, and the calling thread's and the named processes' wait in it;
        ``mark`` moves to now."""
        now, (mine, theirs) = time.perf_counter(), self._waits()
        out = (now - self.mark, max(0.0, mine - self.mine), max(0.0, theirs - self.theirs))
        self.mark, self.mine, self.theirs = now, mine, theirs
        return out

    def wall(self) -> float:
        return time.perf_counter() - self.started

    def own(self) -> float:
        took, mine, theirs = self._stretch()
        self.held += min(mine + theirs, took)
        return max(0.0, self.mark - self.started - self.held)

    def wait_until(
        self,
        predicate: Callable[[], T],
        timeout: float = HANG_GUARD_S,
        interval: float = 0.01,
        *,
        message: str | Callable[[], str] | None = None,
        ignore: tuple[type[BaseException], ...] = (),
    ) -> T:
        """``tests.support.waiting.wait_until``, less only the path's wait: the calling thread's for
        the poll that shows the state and the time since the poll before it; the named processes'
        except while they answer a poll "not yet". Each stretch gives at most its own length."""

        def polled() -> T:
            gap, gap_mine, gap_theirs = self._stretch()
            shown = False
            try:
                value = predicate()
                shown = bool(value)
            finally:
                took, mine, theirs = self._stretch()
                if shown:
                    self.held += min(gap_mine + gap_theirs, gap) + min(mine + theirs, took)
                else:
                    self.held += min(gap_theirs, gap)
            return value

        return wait_until(polled, timeout, interval, message=lambda: describe(predicate, message), ignore=ignore)
