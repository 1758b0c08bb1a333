"""Foundation benchmarks: BM25 search in-process and over HTTP, reindex, reconcile, RSS, start-up.

In-process search rows give wall-clock percentiles and the mean CPU per search (``process_time``:
this thread's CPU, which other tenants of a shared machine disturb less). The limit beside them is
raw SQLite FTS5 on the same index file and the same queries: a fresh connection running only the
MATCH (the same OR of quoted words) and ``bm25()`` with the same column weights, top 10 rowids,
no rows fetched, no snippets.

    python -m tests.bench index
    INDEX_PARTS=start,reindex python -m tests.bench index   (parts: search,http,start,process,reindex,reconcile,rss,checks)

``http`` searches over one keep-alive connection right after ready (the postings built): on the
tier's first start, while the injection scanner judges every file in the background, and on a
restart, where the files found clean are remembered and only what changed is scanned.

``start`` spawns the sidecar on the 10k-chunk dir five times: the median wall clock from the spawn to
``/healthz`` 200, and the process's CPU by then (every thread), beside the host's reference loop.

``process`` is what one sidecar process costs a test run that starts it over a one-file dir and
stops it: its CPU by ready, once idle after start (the background work that follows ready: the
injection scanner loaded to warm the flagged-section cache, the graph's first reading, the
postings), and in all at exit; then, each in a fresh process, the CPU of importing what ``serve``
imports before ready, and of importing the injection scanner after that.

``rss`` (not in the default parts) splits an idle BM25-only sidecar's RSS: a sidecar over the
10k-chunk dir and one over a 50-chunk dir, each idle once the graph has read every file (then 3 s,
read before any request, as a sidecar nobody has asked anything yet; whether numpy is mapped then,
and which engine answers BM25 once asked: the postings, or FTS5 while they are not built), the 10k
one again after its first search once its postings are built (then 3 s), and a fresh process
importing, in steps, what a bare aiohttp route imports, the other libraries the server loads
(structlog, prometheus_client, watchfiles), the server's own modules (the scanner the first search
loads included) and numpy (which a tier of more than 16,000 chunks builds its postings with; a
smaller one holds them in ``array``s and never loads it): what the code holds, what the 10k chunks'
data holds, and the rest (threads, page caches, the app's state); and which of the server's own
modules hold numpy once imported.

``checks`` (not in the default parts) is what opening an index costs with its checks (``PRAGMA
quick_check`` and FTS5's integrity check) and with them remembered (the file unwritten since they
passed), on 2k- and 10k-chunk dirs whose files and index were last written a minute ago: CPU of
``TierIndex.open`` + ``close`` in this process, median of 7 of each, alternating.
"""

from __future__ import annotations

import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import httpx

from sidecar.index.bm25 import BODY_WEIGHT, HEADING_WEIGHT
from sidecar.index.query import build_match
from sidecar.index.sync import RACY_NS
from sidecar.index.tier_index import CHECKED_SUFFIX, TierIndex
from tests.bench.util import cpu_reference, ms, report, wait_logged
from tests.support.corpus import make_corpus, make_queries
from tests.support.procs import cpu_s, numpy_mapped, rss_kb, start_sidecar


def _search_latency(search: Callable[[str], object], queries: list[str]) -> tuple[list[float], float]:
    """(wall seconds of each search, mean CPU seconds per search)."""
    for q in queries[:50]:
        search(q)  # warm the page cache and the reader connection
    samples = []
    cpu0 = time.process_time()
    for q in queries:
        t0 = time.perf_counter()
        search(q)
        samples.append(time.perf_counter() - t0)
    return samples, (time.process_time() - cpu0) / len(queries)


def _with_cpu(timed: tuple[list[float], float]) -> str:
    samples, cpu = timed
    return f"{ms(samples)}  CPU {cpu * 1000:.3f} ms"


def _raw_fts5(path: Path) -> Callable[[str], object]:
    """The limit: SQLite FTS5 alone, top 10 by bm25() with the sidecar's weights, rowids only."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    sql = "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts, ?, ?) LIMIT 10"

    def search(query: str) -> object:
        match = build_match(query)
        return conn.execute(sql, (match, HEADING_WEIGHT, BODY_WEIGHT)).fetchall() if match else []

    return search


def bench_search(base: Path, chunks: int, target: str) -> None:
    root = base / f"c{chunks}"
    make_corpus(root, chunks)
    index = TierIndex(root)
    index.open()
    t0 = time.perf_counter()
    index.enable_postings()
    built = time.perf_counter() - t0
    status = index.status()
    real, bm25 = status["chunks"], status["bm25"]
    queries = make_queries(2000)
    report(
        f"BM25 search in-process, {real} chunks",
        _with_cpu(_search_latency(lambda q: index.search(q, 10), queries)),
        target,
    )
    report(
        f"  postings build at start, {real} chunks",
        f"{built * 1000:.0f} ms ({bm25['terms']} terms, {bm25['postings']} postings)",
        "after ready, off the request path",
    )
    fts = _search_latency(lambda q: index.bm25.search_fts(q, 10, raw_fts=False), queries[:500])
    report("  same queries through FTS5 bm25() (the fallback)", _with_cpu(fts), "")
    raw = _search_latency(_raw_fts5(index.path), queries[:500])
    report("  the limit: raw SQLite FTS5, top 10 rowids by bm25()", _with_cpu(raw), "")
    index.close()


def bench_http(base: Path) -> None:
    """The round trip right after ready, on the tier's first start (every file's sections judged by
    the injection scanner in the background meanwhile) and on a restart (the files found clean
    remembered: only what changed is scanned), then the restarted process's idle RSS."""
    root = base / "c10000"
    for when in ("first start", "restart"):
        side = start_sidecar(root, "--watch", "false")
        try:
            _http_round_trips(side.url, side.proc.pid, when)
            if when == "restart":
                _idle_rss_after(side.proc.pid)
        finally:
            side.stop()


def _http_round_trips(url: str, pid: int, when: str) -> None:
    with httpx.Client(base_url=url) as client:
        deadline = time.monotonic() + 60
        while client.get("/memory/status").json()["bm25"]["engine"] != "postings":
            assert time.monotonic() < deadline, "postings not built within 60 s"
            time.sleep(0.05)
        queries = make_queries(2000, seed=3)
        for q in queries[:100]:
            client.post("/memory/search", json={"query": q})
        samples = []
        cpu0 = cpu_s(pid)
        for q in queries:
            t0 = time.perf_counter()
            r = client.post("/memory/search", json={"query": q})
            samples.append(time.perf_counter() - t0)
            assert r.status_code == 200
        cpu = (cpu_s(pid) - cpu0) / len(queries)
    report(
        f"HTTP search round trip, 10k chunks (keep-alive), {when}",
        f"{ms(samples)}  server CPU {cpu * 1000:.3f} ms",
        "p99 <= 5 ms",
    )


def _idle_rss_after(pid: int) -> None:
    time.sleep(1.0)
    report(
        "idle RSS, 10k-chunk agent tier (BM25 only)",
        f"{rss_kb(pid) / 1024:.1f} MB",
        "<= a bare aiohttp process + 30 MB (INDEX_PARTS=rss)",
    )
    parts = [rss_kb(pid, field) / 1024 for field in ("RssFile", "RssAnon", "RssShmem")]
    report("  files mapped (code) / anonymous / shared (the postings)", " / ".join(f"{mb:.1f} MB" for mb in parts))
    report("  its code alone: a process importing what serve imports, serving nothing", f"{_imports_only_mb():.1f} MB")


def bench_start(base: Path) -> None:
    root = base / "c10000"
    if not root.exists():
        make_corpus(root, 10_000)
        start_sidecar(root, "--watch", "false").stop()  # the index built once: the runs below open it
    ready, cpu = [], []
    reference = cpu_reference()
    for _ in range(5):
        t0 = time.perf_counter()
        side = start_sidecar(root, "--watch", "false")
        ready.append(time.perf_counter() - t0)
        cpu.append(cpu_s(side.proc.pid))
        side.stop()
    report(
        "start to ready (process spawn to /healthz 200)",
        f"median {sorted(ready)[2] * 1000:.0f} ms, CPU by ready {sorted(cpu)[2] * 1000:.0f} ms",
        "<= 500 ms",
    )
    report(
        "  host: reference loop, load average",
        f"{reference:.0f} ms before, {cpu_reference():.0f} ms after; load {os.getloadavg()[0]:.1f}",
    )


def _import_cpu_ms(before: str, timed: str) -> float:
    """CPU milliseconds a fresh process spends importing ``timed`` after ``before`` (rich made absent
    and one BLAS thread, as ``memory-sidecar serve`` runs)."""
    probe = (
        "import resource, sys\n"
        "sys.modules.setdefault('rich', None)\n"
        "def cpu():\n"
        "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
        "    return r.ru_utime + r.ru_stime\n"
        f"{before}\n"
        "c0 = cpu()\n"
        f"{timed}\n"
        "print((cpu() - c0) * 1000)\n"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.strip())


def bench_process(base: Path) -> None:
    root = base / "one_file"
    root.mkdir(parents=True, exist_ok=True)
    (root / "AGENT.md").write_text("# Agent\n\nA one-file memory dir, as most tests start a sidecar over.\n")
    ready, idle, total = [], [], []
    for _ in range(5):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        side = start_sidecar(root, "--watch", "false")
        ready.append(cpu_s(side.proc.pid))
        last = ready[-1]
        while True:  # idle: no CPU used over half a second
            time.sleep(0.5)
            now = cpu_s(side.proc.pid)
            if now - last < 0.01:
                break
            last = now
        idle.append(now)
        side.stop()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        total.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    report(
        "a sidecar over a one-file dir: CPU by ready",
        f"median {sorted(ready)[2] * 1000:.0f} ms; idle after start {sorted(idle)[2] * 1000:.0f} ms; "
        f"at exit {sorted(total)[2] * 1000:.0f} ms",
    )
    serve = "import sidecar.cli, sidecar.server.serve, sidecar.server.app"
    imports = sorted(_import_cpu_ms("", serve) for _ in range(5))
    scanner = sorted(_import_cpu_ms(serve, "import sidecar.scanner.scan") for _ in range(5))
    report("  its imports before ready (fresh process)", f"median {imports[2]:.0f} ms of CPU")
    report("  then the injection scanner's import", f"median {scanner[2]:.0f} ms of CPU")
    report("  load average", f"{os.getloadavg()[0]:.1f}")


def _imports_only_mb() -> float:
    """VmRSS of a fresh process that imports the server's modules as ``memory-sidecar serve`` does
    (rich made absent, the scanner the first search loads included), and serves nothing."""
    probe = (
        "import sys\n"
        "sys.modules.setdefault('rich', None)\n"
        "import sidecar.server.serve, sidecar.server.app, sidecar.scanner.scan\n"
        "print(next(line for line in open('/proc/self/status') if line.startswith('VmRSS:')).split()[1])\n"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # as serve sets it
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return int(done.stdout.strip()) / 1024


def bench_reindex(base: Path) -> None:
    root = base / "ten_mb"
    size = make_corpus(root, 15_000, seed=5)  # ~10 MB of markdown
    index = TierIndex(root)
    index.open()
    runs, cpus = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        index.rebuild()
        runs.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    report(
        f"full reindex, {size / 1e6:.1f} MB memory dir",
        f"median {sorted(runs)[1]:.2f} s, CPU {sorted(cpus)[1]:.2f} s; load {os.getloadavg()[0]:.1f}",
        "<= 2 s",
    )
    index.close()


def bench_reconcile(base: Path) -> None:
    """A reconcile that finds nothing changed. Files indexed within ``RACY_NS`` of their last write
    are hashed on every reconcile until that window has passed (their mtime cannot vouch for them),
    so the files are left to settle first; the second row is the case where every file's mtime
    moved but not its content (each file read and hashed)."""
    root = base / "thousand"
    make_corpus(root, 6000, seed=9, files=1000)
    index = TierIndex(root)
    index.open()
    time.sleep(RACY_NS / 1e9 + 0.2)
    index.reconcile()  # the files' index entries are no longer racily clean
    runs = []
    for _ in range(20):
        t0 = time.perf_counter()
        result = index.reconcile()
        runs.append(time.perf_counter() - t0)
        assert not result.changed
    files = index.status()["files"]
    report(f"no-change reconcile, {files} files", ms(runs), "<= 100 ms")
    touched = []
    for n in range(5):
        past = time.time_ns() - (60 + n) * 1_000_000_000  # a new mtime, outside the racy window
        for path in root.rglob("*.md"):
            os.utime(path, ns=(past, past))
        t0 = time.perf_counter()
        result = index.reconcile()
        touched.append(time.perf_counter() - t0)
        assert not result.changed
    report(f"  every file's mtime moved, content the same ({files} files hashed)", ms(touched))
    index.close()


class _Idle(NamedTuple):
    """An idle BM25-only sidecar's VmRSS (MB) before any search and after its first one."""

    mb: float
    numpy: bool  # numpy's code mapped into the process while idle, before any search
    engine: str  # what answered BM25 then: "postings", or "fts5" while they are not built
    searched_mb: float  # after one search, its postings built
    written_mb: float  # then after one write (the injection scanner's first judgement of a write)
    written_numpy: bool  # numpy's code mapped then


def _idle_rss(root: Path) -> _Idle:
    """An idle BM25-only sidecar over ``root``: idle once the graph has read every file, then after
    one search once its postings are built, then after one write once its hooks ran (the module's
    doc). The write stays in ``root``."""
    side = start_sidecar(root, env={"MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}, wait=300)
    try:
        wait_logged(side.log, "kg.backfilled")
        time.sleep(3.0)
        pid = side.proc.pid
        mb, numpy = rss_kb(pid) / 1024, numpy_mapped(pid)  # read before any request: a status request
        with httpx.Client(base_url=side.url, timeout=60) as client:  # counts chunks on a reader thread
            engine = client.get("/memory/status").json()["bm25"]["engine"]
            assert client.post("/memory/search", json={"query": "database migration"}).status_code == 200
            deadline = time.monotonic() + 120
            while client.get("/memory/status").json()["bm25"]["engine"] != "postings":
                assert time.monotonic() < deadline, "postings not built within 120 s"
                time.sleep(0.05)
            time.sleep(3.0)
            searched = rss_kb(pid) / 1024
            body = {
                "path": "topics/bench-rss.md",
                "content": "- the staging deploy moved to Thursdays after the freeze",
            }
            assert client.post("/memory/write", json=body).status_code == 201
        wait_logged(side.log, "memory.updated")
        time.sleep(3.0)
        return _Idle(mb, numpy, engine, searched, rss_kb(pid) / 1024, numpy_mapped(pid))
    finally:
        side.stop()


_IMPORT_STEPS = (
    ("a bare aiohttp route's imports", "import asyncio, orjson\nfrom aiohttp import web"),
    ("+ structlog, prometheus_client, watchfiles, sqlite3", "import structlog, prometheus_client, watchfiles, sqlite3"),
    (
        "+ the server's modules (and what they import)",
        "import sidecar.server.serve, sidecar.server.app, sidecar.scanner.scan",
    ),
    ("+ numpy (if they did not import it: what a tier of over 16,000 chunks adds)", "import numpy"),
)


#: Which of the server's own modules hold numpy once imported (``import numpy as np`` at the top):
#: numpy leaves an idle sidecar only when none of them is imported by then.
_NUMPY_HOLDERS = """
import sys, types
sys.modules.setdefault('rich', None)
import numpy, sidecar.server.serve, sidecar.server.app, sidecar.scanner.scan
held = sorted(n for n, m in list(sys.modules.items()) if n.startswith('sidecar') and isinstance(m, types.ModuleType)
              and any(v is numpy for v in vars(m).values()))
print(' '.join(held))
"""


def bench_rss(base: Path) -> None:
    """Where an idle BM25-only sidecar's RSS goes (the module's doc)."""
    big = base / "c10000"
    if not big.exists():
        make_corpus(big, 10_000)
    make_corpus(base / "c50", 50)
    idle, small = _idle_rss(big), _idle_rss(base / "c50")
    probe = "import gc, sys\nsys.modules.setdefault('rich', None)\n"
    probe += "def rss():\n    return next(l for l in open('/proc/self/status') if l.startswith('VmRSS:')).split()[1]\n"
    for _, code in _IMPORT_STEPS:
        probe += f"{code}\ngc.collect()\nprint(rss())\n"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # as serve sets it
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    steps = [int(line) / 1024 for line in done.stdout.split()]
    mapped = "numpy mapped" if idle.numpy else "no numpy"
    report("idle RSS, BM25 only, 10k-chunk dir", f"{idle.mb:.1f} MB", f"{mapped}, BM25 by {idle.engine}")
    report("  the same after its first search, postings built", f"{idle.searched_mb:.1f} MB", "")
    bare = steps[0]
    report(
        "  then after its first write (the injection scanner's first judgement)",
        f"{idle.written_mb:.1f} MB",
        f"{idle.written_mb - bare:+.1f} MB over the bare route; {'numpy mapped' if idle.written_numpy else 'no numpy'}",
    )
    report(
        "  over the bare aiohttp route's imports (same run)",
        f"{idle.mb - bare:+.1f} MB idle, {idle.searched_mb - bare:+.1f} MB after its first search",
        "<= +30 MB",
    )
    last = 0.0
    for (name, _), mb in zip(_IMPORT_STEPS, steps, strict=True):
        report(f"  imports: {name}", f"{mb - last:+.1f} MB", f"{mb:.1f} MB in all")
        last = mb
    imported = steps[-1] if small.numpy else steps[-2]  # what it imported, numpy or not
    beyond = f"{small.mb - imported:+.1f} MB beyond its imports ({'with' if small.numpy else 'without'} numpy)"
    report("  the same sidecar over a 50-chunk dir", f"{small.mb:.1f} MB", beyond)
    report("  the 10k chunks' data", f"{idle.mb - small.mb:+.1f} MB", f"load average {os.getloadavg()[0]:.1f}")
    holders = subprocess.run(
        [sys.executable, "-c", _NUMPY_HOLDERS], capture_output=True, text=True, env=env, check=True
    )
    names = holders.stdout.split()
    report("  the server's modules that import numpy", f"{len(names)}", " ".join(names))


def bench_checks(base: Path) -> None:
    """An index's open with its checks and with them remembered (the module's doc)."""
    for chunks in (2_000, 10_000):
        root = base / f"c{chunks}"
        if not root.exists():
            make_corpus(root, chunks)
        past = time.time_ns() - 60 * 10**9
        for path in root.rglob("*.md"):
            os.utime(path, ns=(past, past))
        index = TierIndex(root)
        index.open()  # the files' new mtimes recorded: later opens write nothing
        index.close()
        os.utime(root / "index.sqlite", ns=(past, past))
        took: dict[str, list[float]] = {"checked": [], "remembered": []}
        for _ in range(7):
            for kind in ("checked", "remembered"):
                if kind == "checked":
                    Path(f"{root / 'index.sqlite'}{CHECKED_SUFFIX}").unlink(missing_ok=True)
                index = TierIndex(root)
                c0 = time.process_time()
                index.open()
                index.close()
                took[kind].append(time.process_time() - c0)
                assert index.checked == kind, (index.checked, kind)
        for kind, runs in took.items():
            report(
                f"open + close, {chunks // 1000}k-chunk dir, checks {kind}",
                f"CPU median {statistics.median(runs) * 1000:.1f} ms",
                f"load {os.getloadavg()[0]:.1f}",
            )


def main() -> None:
    parts = os.environ.get("INDEX_PARTS", "search,http,start,process,reindex,reconcile").split(",")
    base = Path(tempfile.mkdtemp(prefix="bench-index-"))
    try:
        if "search" in parts:
            bench_search(base, 10_000, "p50 <= 0.5 ms, p99 <= 2 ms")
            bench_search(base, 100_000, "p99 <= 10 ms")
        if "http" in parts:
            if not (base / "c10000").exists():
                make_corpus(base / "c10000", 10_000)
            bench_http(base)
        if "start" in parts:
            bench_start(base)
        if "process" in parts:
            bench_process(base)
        if "reindex" in parts:
            bench_reindex(base)
        if "reconcile" in parts:
            bench_reconcile(base)
        if "rss" in parts:
            bench_rss(base)
        if "checks" in parts:
            bench_checks(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
