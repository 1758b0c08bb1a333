"""``/healthz`` while a consolidation runs over a full tier on a busy host.

A real sidecar (a new interpreter, BM25) serves a tier holding one of the consolidation bench's
histories (DEV ones: ``tuning``, ``fresh13``, ...), written as notes straight to disk, its cap set
as that bench sets it (the tier at 80-90% of it). CPU hogs (``--hogs``, three by default: on two
cores, as four benches side by side) spin beside it; a client in a process of its own asks
``/healthz`` of the sidecar and of a bare aiohttp process by turns while one ``POST
/memory/consolidate`` runs. Printed per history: the answer times (p95 and worst) of both, the run's
wall time, the CPU the sidecar and the processes it started used during it, and the peak RSS of the
sidecar and of its children (sampled every 50 ms).

``--trace`` runs the sidecar under a trace of its own loop (``_Trace``): every loop step that took
over ``--step-ms`` (20 ms) of wall or of the loop thread's CPU, with what the loop was running then
(its stack, sampled every few ms while the step lasted); the run's phases (the child's life, the
report's unpickling and JSON, the typed-memory merge, the reindex); the CPU of each of the
sidecar's threads per 100 ms. Each of the slowest /healthz answers is printed with the phases and
steps it overlapped.

    python -m tests.bench.consolidation_healthz [KIND ...] [--hogs N] [--rounds N] [--trace]
"""

from __future__ import annotations

import argparse
import atexit
import collections
import functools
import heapq
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.bench.bare_route import start_bare
from tests.bench.consolidation import CAP, SEEDS, _history, _markdown
from tests.bench.ping_beside import EVERY_S, _ask, _connection
from tests.support.procs import SidecarProcess, free_port, process_tree, rss_kb, start_sidecar

_HELD_OUT = ("fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "h1", "held_out")  # h15a-h19c


def _write_tier(root: Path, kind: str) -> int:
    """``kind``'s notes as ``daily/YYYY-MM-DD.md`` files; their bytes."""
    history = _history(kind, SEEDS[kind], datetime.now(UTC).date())
    total = 0
    for n, lines in enumerate(history.notes):
        day = history.start + timedelta(days=n)
        note = root / "daily" / f"{day.isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        text = f"# {day}\n\n## Log\n" + "".join(_markdown(ln) for ln in lines)
        note.write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def _cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of process ``pid`` itself and of its children it has reaped, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


class _Peaks:
    """The peak RSS of a process and of its descendants, sampled on a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.own_kb, self.children_kb, self.children = pid, 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        seen: set[int] = set()
        while not self._stop.wait(0.05):
            self.own_kb = max(self.own_kb, rss_kb(self.pid))
            kids = process_tree(self.pid)[1:]
            seen.update(kids)
            self.children_kb = max(self.children_kb, sum(rss_kb(k) for k in kids))
        self.children = len(seen)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


class _Trace:
    """The sidecar's loop, traced from inside its process (``--serve-traced``): each loop step
    (``Handle._run``) over ``step_s`` of wall time or of the loop thread's CPU, with the loop's
    stack sampled every 3 ms once a step has lasted 10 ms; the phases of a run (functions wrapped); the CPU
    of each thread per 50 ms (``/proc/self/task``). Written as JSON when the process exits."""

    def __init__(self, out: Path, step_s: float) -> None:
        self.out, self.step_s = out, step_s
        self.steps: list[dict[str, Any]] = []
        self.phases: list[dict[str, Any]] = []
        self.cpu: list[tuple[float, dict[str, int]]] = []
        #: The five steps that took the most of the loop thread's CPU (cpu, start, handle, stacks).
        self.costliest: list[tuple[float, float, str, Any]] = [(0.0, 0.0, "", [])] * 5
        self._started: float | None = None
        self._samples: collections.Counter[str] = collections.Counter()
        self._loop: int | None = None

    def install(self) -> None:
        import asyncio.events

        import sidecar.ops.consolidate as ops
        from sidecar.consolidate import child, memories, runner
        from sidecar.consolidate.report import Report
        from sidecar.index import sync

        original = asyncio.events.Handle._run
        trace = self

        def run(handle: asyncio.events.Handle) -> None:
            trace._loop = trace._loop or threading.get_ident()
            t0, c0 = time.monotonic(), time.thread_time()
            trace._samples = collections.Counter()
            trace._started = t0
            try:
                original(handle)
            finally:
                trace._started = None
                wall, cpu = time.monotonic() - t0, time.thread_time() - c0
                if cpu > trace.costliest[0][0]:
                    heapq.heapreplace(trace.costliest, (cpu, t0, repr(handle)[:160], trace._samples.most_common(2)))
                if wall >= trace.step_s or cpu >= trace.step_s:
                    trace.steps.append(
                        {
                            "t": t0,
                            "wall": wall,
                            "cpu": cpu,
                            "handle": repr(handle)[:160],
                            "stacks": trace._samples.most_common(4),
                        }
                    )

        asyncio.events.Handle._run = run  # type: ignore[method-assign]
        runner.run_in_child = self._async_phase("child run", runner.run_in_child)  # type: ignore[assignment]
        runner.record_run = self._phase("record_run", runner.record_run)
        memories.merge_memories = self._async_phase("merge_memories", memories.merge_memories)  # type: ignore[assignment]
        ops.consolidate_tier = self._async_phase("route", ops.consolidate_tier)  # type: ignore[assignment]
        Report.to_json = self._phase("report.to_json", Report.to_json)  # type: ignore[method-assign]
        sync.IndexSync.reconcile = self._phase("reconcile", sync.IndexSync.reconcile)  # type: ignore[method-assign]
        shim = type("pickle", (), {})()
        for name in ("dumps", "HIGHEST_PROTOCOL", "PicklingError", "UnpicklingError"):
            setattr(shim, name, getattr(child.pickle, name))
        shim.loads = self._phase("unpickle", child.pickle.loads, over_s=0.002)
        child.pickle = shim
        threading.Thread(target=self._sample, daemon=True).start()
        atexit.register(self.write)

    def _phase(self, name: str, fn: Callable[..., Any], over_s: float = 0.0) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.monotonic(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                t1 = time.monotonic()
                if t1 - t0 >= over_s:
                    self.phases.append(
                        {
                            "name": name,
                            "t0": t0,
                            "t1": t1,
                            "cpu": time.thread_time() - c0,
                            "thread": threading.current_thread().name,
                        }
                    )

        return wrapped

    def _async_phase(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            t0 = time.monotonic()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.phases.append({"name": name, "t0": t0, "t1": time.monotonic(), "cpu": 0.0, "thread": "loop"})

        return wrapped

    def _sample(self) -> None:
        last_cpu = 0.0
        while True:
            time.sleep(0.003)
            now = time.monotonic()
            started = self._started
            if started is not None and now - started > 0.01 and self._loop is not None:
                frame = sys._current_frames().get(self._loop)
                if frame is not None:
                    self._samples[_where(frame)] += 1
            if now - last_cpu >= 0.05:
                last_cpu = now
                names = {t.native_id: t.name for t in threading.enumerate()}
                ticks: dict[str, int] = {}
                for task in os.listdir("/proc/self/task"):
                    try:
                        f = Path(f"/proc/self/task/{task}/stat").read_text().rsplit(")", 1)[1].split()
                    except OSError:
                        continue
                    name = names.get(int(task), f"tid{task}")
                    ticks[name] = ticks.get(name, 0) + int(f[11]) + int(f[12])
                self.cpu.append((now, ticks))

    def write(self) -> None:
        costliest = sorted(self.costliest, reverse=True)
        self.out.write_text(
            json.dumps({"steps": self.steps, "phases": self.phases, "cpu": self.cpu, "costliest": costliest})
        )


def _where(frame: Any) -> str:
    """A stack, innermost first: the innermost frame, then up to four of the sidecar's."""
    out = [f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}:{frame.f_lineno}"]
    frame = frame.f_back
    while frame is not None and len(out) < 5:
        if "/sidecar/" in frame.f_code.co_filename:
            out.append(f"{Path(frame.f_code.co_filename).stem}.{frame.f_code.co_name}:{frame.f_lineno}")
        frame = frame.f_back
    return " < ".join(out)


def serve_traced(out: Path, step_s: float, argv: list[str]) -> int:
    """``memory-sidecar`` with ``argv``, its loop traced (``_Trace``) into ``out``."""
    _Trace(out, step_s).install()
    from sidecar.cli import main as cli

    return cli(argv)


def ping(out: Path, urls: list[str]) -> None:
    """``tests.bench.ping_beside``'s client, each answer with the time it was asked (monotonic)."""
    stop = False

    def on_term(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    conns = {url: _connection(url) for url in urls}
    times: dict[str, list[tuple[float, float]]] = {url: [] for url in urls}
    turn = 0
    while not stop:
        for url in urls if turn % 2 == 0 else urls[::-1]:
            asked = time.monotonic()
            times[url].append((asked, _ask(conns[url], urlsplit(url).path or "/healthz")))
        turn += 1
        time.sleep(EVERY_S)
    out.write_text(json.dumps(times))


class _Pinger:
    def __init__(self, out: Path, urls: list[str]) -> None:
        self.out = out
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.bench.consolidation_healthz", "--ping", str(out), *urls]
        )

    def stop(self) -> dict[str, list[tuple[float, float]]]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)
        if self.proc.returncode != 0:
            raise RuntimeError(f"the pinging process exited with {self.proc.returncode}")
        times: dict[str, list[tuple[float, float]]] = json.loads(self.out.read_text())
        return times


def _start_traced(root: Path, env: dict[str, str], log_dir: Path, trace: Path, step_s: float) -> SidecarProcess:
    """``start_sidecar``'s process (a new interpreter, BM25), its loop traced."""
    port = free_port()
    log = log_dir / f"sidecar-{port}.log"
    full_env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "MEMORY_SIDECAR_EMBEDDER": "none", **env}
    argv = [
        sys.executable,
        "-m",
        "tests.bench.consolidation_healthz",
        "--serve-traced",
        str(trace),
        str(step_s),
        "serve",
        "--memory-dir",
        str(root),
        "--port",
        str(port),
        "--log-format",
        "json",
    ]
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    return SidecarProcess(proc, port, log, argv).wait_ready()


def _report_trace(trace: dict[str, Any], answers: list[tuple[float, float]], start: float, worst: int = 8) -> None:
    """The slowest answers, each with the phases and loop steps it overlapped (times from the
    run's start), then every slow step."""
    print(
        "phases (s from the run's start): "
        + "; ".join(
            f"{p['name']} {p['t0'] - start:.2f}-{p['t1'] - start:.2f} ({p['thread']}, cpu {p['cpu'] * 1000:.0f} ms)"
            for p in trace["phases"]
            if p["name"] != "unpickle" or p["t1"] - p["t0"] > 0.005
        )
    )
    cpu = trace["cpu"]
    for asked, took in sorted(answers, key=lambda a: -a[1])[:worst]:
        end = asked + took
        phases = [p["name"] for p in trace["phases"] if p["t0"] < end and p["t1"] > asked]
        steps = [
            f"{s['wall'] * 1000:.0f}/{s['cpu'] * 1000:.0f} ms {s['stacks'][0][0] if s['stacks'] else s['handle']}"
            for s in trace["steps"]
            if s["t"] < end and s["t"] + s["wall"] > asked
        ]
        busy: dict[str, int] = {}
        before = [c for c in cpu if c[0] <= asked]
        after = [c for c in cpu if c[0] >= end]
        if before and after:
            for name, ticks in after[0][1].items():
                if (d := ticks - before[-1][1].get(name, 0)) > 0:
                    busy[name] = d * 10
        print(
            f"  /healthz {took * 1000:.0f} ms at {asked - start:.2f} s: phases {phases or '-'}; steps {steps or '-'}; "
            f"thread CPU ms {busy}"
        )
    print("the loop steps that took the most CPU of the loop thread (the sidecar's whole life):")
    for cpu_s, t, handle, stacks in trace["costliest"]:
        print(f"  {cpu_s * 1000:5.1f} ms at {t - start:8.2f} s  {handle[:80]}  {stacks[0][0] if stacks else ''}")
    print(f"loop steps over the line ({len(trace['steps'])}), wall/cpu:")
    for s in trace["steps"]:
        print(f"  {s['t'] - start:8.2f} s {s['wall'] * 1000:6.0f} / {s['cpu'] * 1000:5.0f} ms  {s['handle'][:90]}")
        for stack, n in s["stacks"]:
            print(f"      {n:3d} x {stack}")


def _p95_worst(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return (ordered[int(len(ordered) * 0.95)], ordered[-1]) if ordered else (0.0, 0.0)


def measure(kind: str, hogs: int, *, after_s: float = 3.0, trace_step_s: float | None = None) -> dict[str, float]:
    """One run of ``kind``'s tier with ``hogs`` spinning processes beside it; /healthz asked until
    ``after_s`` after the run's answer (the reindex of what it wrote follows it)."""
    with tempfile.TemporaryDirectory(prefix="healthz-bench-") as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        written = _write_tier(root, kind)
        env = {
            "MEMORY_SIDECAR_TIER_CAP_BYTES": str(CAP),
            "MEMORY_SIDECAR_WATCH": "false",
            "MEMORY_SIDECAR_RECONCILE_INTERVAL": "0",
            "MEMORY_SIDECAR_CREW_REINDEX_INTERVAL": "0",
            "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0",
        }
        trace = Path(tmp) / "trace.json"
        if trace_step_s is None:
            sidecar = start_sidecar(root, env=env, log_dir=Path(tmp), fork=False)
        else:
            sidecar = _start_traced(root, env, Path(tmp), trace, trace_step_s)
        bare = start_bare(Path(tmp), free_port(), body=b"{}")
        spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
        try:
            time.sleep(1.0)  # the hogs take the cores before the run starts
            sidecar_url, bare_url = f"{sidecar.url}/healthz", f"{bare.url}/healthz"
            beside = _Pinger(Path(tmp) / "ping.json", [sidecar_url, bare_url])
            time.sleep(0.5)
            load = os.getloadavg()[0]
            own, children = _cpu(sidecar.proc.pid)
            peaks = _Peaks(sidecar.proc.pid)
            started, mono = time.perf_counter(), time.monotonic()
            resp = httpx.post(f"{sidecar.url}/memory/consolidate", json={}, timeout=None)
            wall = time.perf_counter() - started
            time.sleep(after_s)
            peaks.stop()
            own_after, children_after = _cpu(sidecar.proc.pid)
            asked = beside.stop()
            times = {url: [took for _, took in answers] for url, answers in asked.items()}
            assert resp.status_code == 200, resp.text
            archived = len(resp.json()["archived"])
        finally:
            for hog in spinning:
                hog.kill()
                hog.wait()
            bare.stop()
            sidecar.stop()
        if trace_step_s is not None:
            print(f"trace of {kind}: the run took {wall:.1f} s; /healthz asked until {after_s:g} s after it")
            _report_trace(json.loads(trace.read_text()), asked[sidecar_url], mono)
    (p95, worst), (bare_p95, bare_worst) = _p95_worst(times[sidecar_url]), _p95_worst(times[bare_url])
    return {
        "tier_kb": written / 1024,
        "archived": archived,
        "load": load,
        "asked": len(times[sidecar_url]),
        "p95_ms": p95 * 1000,
        "worst_ms": worst * 1000,
        "bare_p95_ms": bare_p95 * 1000,
        "bare_worst_ms": bare_worst * 1000,
        "wall_s": wall,
        "cpu_sidecar_s": own_after - own,
        "cpu_children_s": children_after - children,
        "rss_sidecar_mb": peaks.own_kb / 1024,
        "rss_children_mb": peaks.children_kb / 1024,
        "children": peaks.children,
    }


def main(argv: list[str]) -> None:
    if argv[:1] == ["--ping"]:
        return ping(Path(argv[1]), argv[2:])
    if argv[:1] == ["--serve-traced"]:
        raise SystemExit(serve_traced(Path(argv[1]), float(argv[2]), argv[3:]))
    parser = argparse.ArgumentParser(prog="python -m tests.bench.consolidation_healthz")
    parser.add_argument("kinds", nargs="*", default=["tuning"])
    parser.add_argument("--hogs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--after", type=float, default=3.0, help="seconds /healthz is asked after the run's answer")
    parser.add_argument("--trace", action="store_true", help="trace the sidecar's loop (slow steps, phases)")
    parser.add_argument("--step-ms", type=float, default=20.0)
    args = parser.parse_args(argv)
    if bad := [k for k in args.kinds if k not in SEEDS or k.startswith(_HELD_OUT)]:
        raise SystemExit(f"not a DEV history: {', '.join(bad)}")
    print(f"{os.cpu_count()} cores, {args.hogs} hogs; load at start {os.getloadavg()[0]:.1f}")
    print(
        "| history | tier | load | asked | /healthz p95 / worst | bare p95 / worst | wall | CPU sidecar + children "
        "| peak RSS sidecar / children |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for _ in range(args.rounds):
        for kind in args.kinds:
            r = measure(kind, args.hogs, after_s=args.after, trace_step_s=args.step_ms / 1000 if args.trace else None)
            print(
                f"| {kind} | {r['tier_kb']:.0f} KB, {r['archived']:.0f} archived | {r['load']:.1f} | {r['asked']:.0f} "
                f"| {r['p95_ms']:.0f} / {r['worst_ms']:.0f} ms | {r['bare_p95_ms']:.0f} / {r['bare_worst_ms']:.0f} ms "
                f"| {r['wall_s']:.1f} s | {r['cpu_sidecar_s']:.1f} + {r['cpu_children_s']:.1f} s "
                f"| {r['rss_sidecar_mb']:.0f} / {r['rss_children_mb']:.0f} MB ({r['children']:.0f}) |",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
