"""tests/support/waiting.py: returns the predicate's value once truthy, fails saying what it waited for."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
import threading
import time

import pytest

from tests.support.lag import PathStopwatch, Stopwatch, host_wait_s, main_thread_wait_s, thread_wait_s
from tests.support.waiting import async_wait_until, wait_until, wait_while_growing


def test_wait_until_returns_the_first_truthy_value() -> None:
    calls = iter([0, None, [], {"ready": True}])
    assert wait_until(lambda: next(calls), timeout=1, interval=0) == {"ready": True}


def test_wait_until_fails_with_what_it_waited_for_and_the_last_value() -> None:
    with pytest.raises(AssertionError) as failure:
        wait_until(lambda: 0, timeout=0.05, interval=0.01)
    text = str(failure.value)
    assert "timed out after 0.05s" in text and "wait_until(lambda: 0" in text and "last returned 0" in text
    with pytest.raises(AssertionError, match=r"waiting for the index at 3; last returned False"):
        wait_until(lambda: False, timeout=0.01, message=lambda: f"the index at {1 + 2}")


def test_wait_until_treats_ignored_errors_as_not_yet() -> None:
    attempts = iter([ConnectionError("refused"), ConnectionError("refused"), "up"])

    def probe() -> str:
        outcome = next(attempts)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert wait_until(probe, timeout=1, interval=0, ignore=(ConnectionError,)) == "up"
    with pytest.raises(AssertionError, match=r"last raised ConnectionError\('down'\)"):
        wait_until(lambda: (_ for _ in ()).throw(ConnectionError("down")), timeout=0.01, ignore=(ConnectionError,))
    with pytest.raises(KeyError):  # anything else is a failure at once
        wait_until(lambda: {}["missing"], timeout=1)


async def test_async_wait_until_awaits_coroutines_and_lets_the_loop_run() -> None:
    state = {"n": 0}

    async def bump() -> None:
        for _ in range(3):
            await asyncio.sleep(0)
            state["n"] += 1

    task = asyncio.create_task(bump())

    async def reached() -> int:
        return state["n"] if state["n"] >= 3 else 0

    assert await async_wait_until(reached, timeout=1) == 3
    assert await async_wait_until(lambda: state["n"], timeout=1) == 3
    await task
    with pytest.raises(AssertionError, match=r"timed out after 0.02s .* waiting for nothing; last returned None"):
        await async_wait_until(lambda: None, timeout=0.02, message="nothing")


def test_wait_while_growing_waits_as_long_as_the_count_grows_and_fails_once_it_stalls() -> None:
    counts = iter([0, 1, 1, 2, 3, 5, 8])
    assert wait_while_growing(lambda: next(counts), 8, stall=1, interval=0) == 8
    stuck = iter([0, 3, 4, 4, 4, 4])
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"to reach 9 \(no growth for 0.05s\).*last returned 4"):
        wait_while_growing(lambda: next(stuck, 4), 9, stall=0.05, interval=0.01, message="the copy")
    assert time.monotonic() - started >= 0.05


_SLEEPER = """
import sys, time
from tests.support.lag import Stopwatch
time.sleep(0.3)  # the start's CPU paid for: see the test
watch = Stopwatch()
time.sleep(0.2)
print(watch.own(), watch.wall())
"""


def test_a_stopwatch_counts_sleeping_and_computing_as_the_sidecars_own_time() -> None:
    # What the stopwatch takes off is run-queue wait alone, of every thread of the process. The
    # sleep is timed in a process with one thread, so no other thread's wait (nor a thread that
    # ends between two readings of /proc) can stand in for what was taken off: the sleep itself
    # never is, however long the sleeper waits for a CPU when it wakes. The timed sleep follows an
    # untimed one: a task that goes to sleep owing CPU time to the others (an interpreter's start
    # on a crowded host) stays on the run queue until it has paid (Linux's delayed dequeue, 6.12
    # and later), and a wake-up meanwhile has the kernel count the whole sleep as run-queue wait
    # (seen once in 150 sleeps right after the start under three spinning processes per core:
    # 0.192 s of wait in a wall of 0.205 s). The untimed sleep pays the start's debt.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, "-c", _SLEEPER], capture_output=True, text=True, check=True, env=env)
    own, wall = map(float, out.stdout.split())
    assert own >= 0.19
    assert own <= wall


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel counts no run-queue wait")
def test_a_thread_reads_its_own_wait_for_a_cpu() -> None:
    # Three threads per CPU hashing outside the GIL, as below: each is runnable throughout and runs
    # about a third of the time, so each reads more of its own waiting for a CPU than of running.
    data = os.urandom(1 << 24)
    n = 3 * (os.cpu_count() or 1)
    waited: list[float] = []
    ran: list[float] = []

    def hash_for(seconds: float) -> None:
        start, cpu, end = thread_wait_s(), time.thread_time(), time.monotonic() + seconds
        while time.monotonic() < end:
            hashlib.sha256(data).digest()
        waited.append(thread_wait_s() - start)
        ran.append(time.thread_time() - cpu)

    threads = [threading.Thread(target=hash_for, args=(0.5,)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(waited) == n and sum(waited) > max(0.2, sum(ran))
    assert thread_wait_s() <= host_wait_s()  # this thread's count is one of the process's


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel counts no run-queue wait")
def test_a_stopwatch_takes_off_the_time_threads_waited_for_a_cpu() -> None:
    # Three threads per CPU hashing outside the GIL (long calls, so they run side by side): most of
    # them are runnable and waiting for a CPU at any moment, which the kernel counts per thread and
    # the stopwatch takes off the wall time. The threads are read before they end (an ended
    # thread's count leaves /proc with it).
    data = os.urandom(1 << 24)
    n = 3 * (os.cpu_count() or 1)
    hashed, release = threading.Barrier(n + 1), threading.Event()

    def hash_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            hashlib.sha256(data).digest()
        hashed.wait()
        release.wait()

    watch = Stopwatch()
    threads = [threading.Thread(target=hash_for, args=(0.5,)) for _ in range(n)]
    for t in threads:
        t.start()
    try:
        hashed.wait()
        assert host_wait_s() - watch.waited > 0.2
        assert watch.own() < watch.wall() - 0.2
    finally:
        release.set()
        for t in threads:
            t.join()


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel counts no run-queue wait")
@pytest.mark.slow
def test_a_path_stopwatch_takes_off_the_wait_of_the_processes_it_names_and_no_other_thread() -> None:
    # Three busy processes per CPU: each one's main thread waits for a CPU most of the time. A
    # stopwatch naming them takes that off; one naming none takes off only this thread's wait,
    # and this thread sleeps meanwhile, so it counts the sleep as its own time.
    n = 3 * (os.cpu_count() or 1)
    spin = "import time\nend = time.monotonic() + 0.8\nwhile time.monotonic() < end: pass"
    procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(n)]
    try:
        named, plain = PathStopwatch(*(p.pid for p in procs)), PathStopwatch()
        mine = plain.mine
        time.sleep(0.6)
        assert named.own() < named.wall() - 0.2
        assert plain.own() >= 0.59 - (thread_wait_s() - mine)
    finally:
        for p in procs:
            p.wait()
    assert main_thread_wait_s(procs[0].pid) == 0.0  # gone


def _busy(script: str, n: int) -> list[subprocess.Popen[str]]:
    """``n`` processes running ``script`` with a pipe each way, returned once each one has said a
    line (it is running)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(n)
    ]
    for p in procs:
        assert p.stdout is not None
        p.stdout.readline()
    return procs


@pytest.mark.skipif(not os.path.exists("/proc/thread-self/schedstat"), reason="the kernel counts no run-queue wait")
@pytest.mark.slow
def test_a_path_stopwatch_takes_off_nothing_while_a_poll_answers_not_yet() -> None:
    # The path is half a second that needs no CPU; the observer polls two servers (named, as a test
    # names the sidecars it asks), each computing for its answer, on a host kept busy by three
    # spinning processes per CPU. What the observer and the servers waited for a CPU while
    # answering "not yet" ran beside the path: the path's own time is at least the time until the
    # last "not yet", less only what the servers waited between polls (each one's wait for a CPU
    # after it answered, read here around each poll).
    spin = "import time\nprint(flush=True)\nwhile True: pass"
    serve = (
        "import hashlib, os, sys\ndata = os.urandom(1 << 20)\nprint(flush=True)\n"
        "for _ in sys.stdin:\n    for _ in range(4): hashlib.sha256(data).digest()\n    print(flush=True)"
    )
    spinners = _busy(spin, 3 * (os.cpu_count() or 1))
    servers = _busy(serve, 2)

    def servers_wait() -> float:
        return sum(main_thread_wait_s(p.pid) for p in servers)

    try:
        watch = PathStopwatch(*(p.pid for p in servers))
        ready, answered = watch.started + 0.5, [(watch.started, watch.theirs)]
        between = 0.0  # the servers' wait between polls, each stretch at most its length

        def asking_until_ready() -> bool:
            nonlocal between
            asked, waited = time.perf_counter(), servers_wait()
            between += min(waited - answered[-1][1], asked - answered[-1][0])
            if asked >= ready:
                return True
            for p in servers:
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write("\n")
                p.stdin.flush()
                p.stdout.readline()
            answered.append((time.perf_counter(), servers_wait()))
            return False

        assert watch.wait_until(asking_until_ready)
        own, wall, before = watch.own(), watch.wall(), answered[-1][0] - watch.started
        assert len(answered) > 1 and before - between <= own <= wall, (own, before, between, wall)
        # A named process busy between cheap polls (work on a sidecar's loop): its wait is the
        # path's and is taken off. (The kernel counts a wait when it ends, so a wait that ends in a
        # stretch shorter than it is taken off only up to that stretch: long stretches here.)
        # It waits until the kernel has counted half a second of the spinner's wait (on a host other
        # jobs keep busy too, a second may hold less of it), and at least a second has passed.
        spinner = spinners[0].pid
        counted = main_thread_wait_s(spinner)
        watch = PathStopwatch(spinner)
        ready = watch.started + 1.0
        assert watch.wait_until(
            lambda: time.perf_counter() >= ready and main_thread_wait_s(spinner) - counted >= 0.5, interval=0.1
        )
        own, wall = watch.own(), watch.wall()
        assert own < wall - 0.3, (own, wall, main_thread_wait_s(spinner) - counted)
    finally:
        for p in spinners + servers:
            p.kill()
            p.communicate()  # closes the pipes
