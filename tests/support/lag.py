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
other process asked."""

from __future__ import annotations

import os
import time

__all__ = ["PathStopwatch", "Stopwatch", "host_wait_s", "main_thread_wait_s", "thread_wait_s"]


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
    """Started when made; ``own()`` is the wall time since, less the host's run-queue wait."""

    def __init__(self) -> None:
        self.waited = host_wait_s()
        self.started = time.perf_counter()

    def wall(self) -> float:
        return time.perf_counter() - self.started

    def own(self) -> float:
        return max(0.0, self.wall() - (host_wait_s() - self.waited))


class PathStopwatch:
    """Started when made, on the thread that waits for the answer; ``own()`` is the wall time since,
    less the run-queue wait of that thread and of the main threads of the processes ``pids``."""

    def __init__(self, *pids: int) -> None:
        self.pids = pids
        self.waited = self._waits()
        self.started = time.perf_counter()

    def _waits(self) -> float:
        return thread_wait_s() + sum(main_thread_wait_s(pid) for pid in self.pids)

    def wall(self) -> float:
        return time.perf_counter() - self.started

    def own(self) -> float:
        return max(0.0, self.wall() - (self._waits() - self.waited))
