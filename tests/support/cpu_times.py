"""Where a test run's CPU goes, per file and per test phase: a pytest plugin for measuring the suite.

    CPU_TIMES_OUT=cpu.txt .venv/bin/python -m pytest -q -p tests.support.cpu_times tests/crew

writes the run's CPU seconds (this process and every child it waited for: sidecar processes, CLI
runs, pip), then each file's, then the 60 costliest setups, calls and teardowns, then the 60
phases with the most idle wall, then every test's CPU from its setup to its teardown, marked S when
it is marked slow (``make test-fast`` leaves those out), below the two sums. CPU seconds hold on a busy host where wall-clock durations
(``--durations``) do not. A child's CPU is counted when it is reaped, so a process a fixture starts
shows up where the fixture stops it (often a teardown). The session's fixtures stop in the
teardown of a process's last test (phase ``teardown+``, the test marked so), with the CPU of
the worker's PostgreSQL over its whole run.

"idle" is the wall time the test's thread spent neither running nor waiting for a core (Linux's
run delay, ``/proc/thread-self/schedstat``): sleeps, timeouts, waits on other processes. It is what
a worker spends on the test even on an idle host, beside its CPU, so on a busy host it shows the
tests that hold a worker by waiting. Work on the process's other threads or in a child (and a
child's wait for a core) also counts as idle here: read it beside the CPU column.

Run ``python -m tests.support.precompile`` first, as ``make unit`` does, when pytest is run by hand:
without the rewritten bytecode it writes, each process collects the suite at more than twice the CPU.

Under pytest-xdist (``PYTHONPATH=. PYTEST_ADDOPTS="-p tests.support.cpu_times" CPU_TIMES_OUT=cpu.txt make test``)
each worker writes its own file, ``cpu.txt.gw0``, ``cpu.txt.gw1`` ..., each ending with the
worker's timeline: when it began and ended each file it was handed.
``python -m tests.support.cpu_times cpu.txt`` lines the workers' timelines up on the clock they
share and prints when each worker ended and its last files: the gap between the first and the last
worker to end is the run's tail, where one worker had nothing left while another still ran.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable, Generator
from typing import Any

import pytest

from tests.support.zygote import UNUSABLE, forked_cpu_s

_ROWS: list[tuple[float, float, float, float, float, str, str]] = []
_COLLECTION: list[tuple[float, float]] = []
#: Each file this process ran: (wall-clock time its first phase began, when its last one ended).
_SPANS: dict[str, list[float]] = {}
_STARTED = time.time()
#: The tests marked slow (what ``make test-fast`` leaves out).
_SLOW: set[str] = set()
#: The test whose teardown also stopped the session's fixtures (this process's last).
_LAST: set[str] = set()


def _cpu() -> tuple[float, float]:
    """This process's CPU seconds, and its children's: those it reaped and the sidecars forked for
    it (``tests/support/zygote.py``), each counted once reaped."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime + forked_cpu_s()


def _thread_busy() -> float:
    """Seconds this thread has run plus waited for a core (0 where the kernel does not say)."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as f:
            ran_ns, waited_ns, _ = f.read().split()
    except (OSError, ValueError):
        return 0.0
    return (int(ran_ns) + int(waited_ns)) / 1e9


def _timed(phase: str) -> Callable[..., Generator[None, None, None]]:
    @pytest.hookimpl(hookwrapper=True)
    def hook(item: pytest.Item, *args: Any, **kwargs: Any) -> Generator[None, None, None]:
        yield from _measure(phase, item)

    return hook


def _measure(phase: str, item: pytest.Item) -> Generator[None, None, None]:
    """Measure one phase of one test around the other implementations of its hook."""
    own, children = _cpu()
    busy = _thread_busy()
    started = time.monotonic()
    span = _SPANS.setdefault(item.nodeid.split("::", 1)[0], [time.time(), 0.0])
    if item.get_closest_marker("slow") is not None:
        _SLOW.add(item.nodeid)
    yield
    span[1] = time.time()
    wall = time.monotonic() - started
    idle = max(wall - (_thread_busy() - busy), 0.0)
    own_after, children_after = _cpu()
    own_s, children_s = own_after - own, children_after - children
    _ROWS.append((own_s + children_s, own_s, children_s, wall, idle, phase, item.nodeid))


pytest_runtest_setup = _timed("setup")
pytest_runtest_call = _timed("call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """The teardown of a process's last test also stops the session's fixtures: the worker's
    PostgreSQL (``tests/support/pg.py``), whose CPU over the whole run is counted there, when it is
    reaped. That phase is reported as ``teardown+`` and its test marked so."""
    if nextitem is None:
        _LAST.add(item.nodeid)
    yield from _measure("teardown" if nextitem is not None else "teardown+", item)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session) -> Generator[None, None, None]:
    own, children = _cpu()
    started = time.monotonic()
    yield
    own_after, children_after = _cpu()
    _COLLECTION.append((own_after - own + children_after - children, time.monotonic() - started))


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("CPU_TIMES_OUT")
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        out = f"{out}.{worker}"
    own, children = _cpu()
    lines = [f"# run: {own + children:.2f} s CPU (this process {own:.2f}, children {children:.2f})"]
    from tests.support.procs import STARTS

    lines.append(f"# sidecars started: {dict(STARTS)}" + (f"; no zygote: {UNUSABLE[0]}" if UNUSABLE else ""))
    if _COLLECTION:
        lines.append(f"# collection: {_COLLECTION[0][0]:.2f} s CPU, {_COLLECTION[0][1]:.2f} s wall")
    files: dict[str, list[float]] = {}
    for cpu, _own, _children, wall, idle, _phase, nodeid in _ROWS:
        total = files.setdefault(nodeid.split("::", 1)[0], [0.0, 0.0, 0.0])
        total[0] += cpu
        total[1] += wall
        total[2] += idle
    lines.append("# per file: CPU s, wall s, idle s")
    lines += [
        f"{cpu:8.2f} {wall:8.2f} {idle:8.2f} {name}"
        for name, (cpu, wall, idle) in sorted(files.items(), key=lambda f: -f[1][0])
    ]
    lines.append("# costliest phases: CPU s (this process, children), wall s, idle s, phase, test")
    for cpu, own_s, children_s, wall, idle, phase, nodeid in sorted(_ROWS, reverse=True)[:60]:
        lines.append(f"{cpu:7.2f} ({own_s:.2f}, {children_s:.2f}) {wall:7.2f} {idle:7.2f} {phase:8s} {nodeid}")
    lines.append("# most idle phases: idle s, CPU s, wall s, phase, test")
    for cpu, _own, _children, wall, idle, phase, nodeid in sorted(_ROWS, key=lambda r: -r[4])[:60]:
        lines.append(f"{idle:7.2f} {cpu:7.2f} {wall:7.2f} {phase:8s} {nodeid}")
    tests: dict[str, list[float]] = {}
    for cpu, _own, _children, wall, _idle, _phase, nodeid in _ROWS:
        total = tests.setdefault(nodeid, [0.0, 0.0])
        total[0] += cpu
        total[1] += wall
    slow = [cpu for name, (cpu, _) in tests.items() if name in _SLOW]
    quick = [cpu for name, (cpu, _) in tests.items() if name not in _SLOW]
    lines.append(
        f"# marked slow: {len(slow)} tests, {sum(slow):.2f} s CPU; the rest (make test-fast): "
        f"{len(quick)} tests, {sum(quick):.2f} s CPU"
    )
    lines.append("# every test, setup to teardown: CPU s, wall s, slow (S) or not (-), test")
    lines += [
        f"{cpu:7.2f} {wall:7.2f} {'S' if name in _SLOW else '-'} {name}"
        + (" (+ the session's fixtures' teardown)" if name in _LAST else "")
        for name, (cpu, wall) in sorted(tests.items(), key=lambda t: -t[1][0])
    ]
    lines.append(
        f"# timeline: process started at {_STARTED:.3f} (epoch s); per file: began, ended (s after that), CPU s"
    )
    cpu_of = {name: total[0] for name, total in files.items()}
    for name, (began, ended) in sorted(_SPANS.items(), key=lambda s: s[1][0]):
        lines.append(f"{began - _STARTED:8.1f} {ended - _STARTED:8.1f} {cpu_of.get(name, 0.0):8.2f} {name}")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _tail(out: str, last: int = 8) -> None:
    """The workers' timelines of a run (``out``.gw0, .gw1 ...) on one clock: each worker's end and
    its last files, seconds after the earliest worker started."""
    import glob

    runs: dict[str, tuple[float, list[tuple[float, float, float, str]]]] = {}
    for path in sorted(glob.glob(f"{out}.gw*")):
        with open(path, encoding="utf-8") as f:
            text = f.read().split("# timeline: process started at ", 1)[1].splitlines()
        started = float(text[0].split()[0])
        spans = [(float(b), float(e), float(c), name) for b, e, c, name in (line.split() for line in text[1:])]
        runs[path.rsplit(".", 1)[1]] = (started, spans)
    if not runs:
        raise SystemExit(f"no {out}.gw* files: was the run made with pytest-xdist and CPU_TIMES_OUT={out}?")
    zero = min(started for started, _ in runs.values())
    ends = {w: started - zero + max(e for _, e, _, _ in spans) for w, (started, spans) in runs.items()}
    for worker, (started, spans) in runs.items():
        print(f"{worker}: ended at {ends[worker]:.1f} s; its last files (began, ended, CPU s):")
        for began, ended, cpu, name in sorted(spans)[-last:]:
            print(f"  {started - zero + began:8.1f} {started - zero + ended:8.1f} {cpu:7.2f} {name}")
    print(f"tail: {max(ends.values()) - min(ends.values()):.1f} s between the first and the last worker to end")
    slow = quick = 0.0
    for path in sorted(glob.glob(f"{out}.gw*")):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("# marked slow: "):
                    parts = line.split()
                    slow += float(parts[5])
                    quick += float(parts[-3])
    print(f"tests marked slow: {slow:.1f} s of CPU; the rest (make test-fast): {quick:.1f} s")


if __name__ == "__main__":
    import sys

    _tail(sys.argv[1])
