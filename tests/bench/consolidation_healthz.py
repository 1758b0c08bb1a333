"""``/healthz`` while a consolidation runs over a full tier on a busy host.

A real sidecar (a new interpreter, BM25) serves a tier holding one of the consolidation bench's
histories (DEV ones: ``tuning``, ``fresh13``, ...), written as notes straight to disk, its cap set
as that bench sets it (the tier at 80-90% of it). CPU hogs (``--hogs``, three by default: on two
cores, as four benches side by side) spin beside it; a client in a process of its own asks
``/healthz`` of the sidecar and of a bare aiohttp process by turns while one ``POST
/memory/consolidate`` runs. Printed per history: the answer times (p95 and worst) of both, the run's
wall time, the CPU the sidecar and the processes it started used during it, and the peak RSS of the
sidecar and of its children (sampled every 50 ms).

    python -m tests.bench.consolidation_healthz [KIND ...] [--hogs N] [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from tests.bench.bare_route import start_bare
from tests.bench.consolidation import CAP, SEEDS, _history, _markdown
from tests.bench.ping_beside import PingBeside
from tests.support.procs import free_port, process_tree, rss_kb, start_sidecar

_HELD_OUT = ("fresh18", "fresh19", "fresh20", "fresh21", "fresh22", "fresh23", "h15", "h16", "h17", "held_out")


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


def _p95_worst(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return (ordered[int(len(ordered) * 0.95)], ordered[-1]) if ordered else (0.0, 0.0)


def measure(kind: str, hogs: int) -> dict[str, float]:
    """One run of ``kind``'s tier with ``hogs`` spinning processes beside it."""
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
        sidecar = start_sidecar(root, env=env, log_dir=Path(tmp), fork=False)
        bare = start_bare(Path(tmp), free_port(), body=b"{}")
        spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(hogs)]
        try:
            time.sleep(1.0)  # the hogs take the cores before the run starts
            sidecar_url, bare_url = f"{sidecar.url}/healthz", f"{bare.url}/healthz"
            beside = PingBeside(Path(tmp) / "ping.json", [sidecar_url, bare_url])
            time.sleep(0.5)
            load = os.getloadavg()[0]
            own, children = _cpu(sidecar.proc.pid)
            peaks = _Peaks(sidecar.proc.pid)
            started = time.perf_counter()
            resp = httpx.post(f"{sidecar.url}/memory/consolidate", json={}, timeout=None)
            wall = time.perf_counter() - started
            peaks.stop()
            own_after, children_after = _cpu(sidecar.proc.pid)
            times = beside.stop()
            assert resp.status_code == 200, resp.text
            archived = len(resp.json()["archived"])
        finally:
            for hog in spinning:
                hog.kill()
                hog.wait()
            bare.stop()
            sidecar.stop()
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
    parser = argparse.ArgumentParser(prog="python -m tests.bench.consolidation_healthz")
    parser.add_argument("kinds", nargs="*", default=["tuning"])
    parser.add_argument("--hogs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
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
            r = measure(kind, args.hogs)
            print(
                f"| {kind} | {r['tier_kb']:.0f} KB, {r['archived']:.0f} archived | {r['load']:.1f} | {r['asked']:.0f} "
                f"| {r['p95_ms']:.0f} / {r['worst_ms']:.0f} ms | {r['bare_p95_ms']:.0f} / {r['bare_worst_ms']:.0f} ms "
                f"| {r['wall_s']:.1f} s | {r['cpu_sidecar_s']:.1f} + {r['cpu_children_s']:.1f} s "
                f"| {r['rss_sidecar_mb']:.0f} / {r['rss_children_mb']:.0f} MB ({r['children']:.0f}) |",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
