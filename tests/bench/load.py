"""Sustained mixed load on a real sidecar process: 28 search and 4 write connections.

Runs ``LOAD_SECONDS`` (default 60) against a 10k-chunk generated corpus, then checks that every
acknowledged write is in its file and (for a sample) in the index, with the server's RSS sampled
every second. The load generator runs on the same machine and shares its cores with the server.

The traffic comes from wrk (Debian package ``wrk``) when it is installed: 32 threads of one
connection each, driven by ``load.lua``, which times every request itself and records each
acknowledged write (path, token, seq); this process then only samples RSS and, after the run,
verifies. Without wrk (or with ``LOAD_GENERATOR=python``) the traffic comes from 32 aiohttp
workers in this process, which costs the server a good part of the CPU it shares. The first
report line says which generator ran, and the CPU line what the server and the generator each
used per answered request (a figure the other tenants of a shared machine disturb less than
throughput). The per-process line splits the searches (from ``/metrics``) and the CPU between the
sidecar and its read workers: a worker answers searches only, so its CPU per search is what one
search costs under this load (compare it with ``LOAD_WRITERS=0``: writes slow the searches of a
process that does none of them).

The load starts once the tier's BM25 engine is built (``/memory/status``: ``bm25.postings`` no
longer ``building``, a second or so after ``/healthz`` answers) and the server's RSS has stopped
moving: that build's transient heap stays resident until the server is next idle, so load that
overlaps it measures the build, not the load (the RSS line at ready / settled / VmHWM shows it).
``LOAD_CONNECTIONS`` (default 32) sets the connections; ``LOAD_WRITERS`` (default 4) of them only write (appends to 40 files); the other 28
only search. Every connection waits for its answer before the next request; with writes mixed into
every connection, searches would be capped at a multiple of the write rate (writes are serialized
and fsync-bound: ~4-6 ms each on this disk), which measures the disk, not search.

The sidecar runs with ``LOAD_READ_WORKERS`` (default 1) read workers (``--read-workers``): one
Python process serves on one core, and the target is met on two. RSS and CPU figures are those of
the whole process tree (the sidecar and its workers, summed); ``LOAD_READ_WORKERS=0`` measures the
sidecar alone.

    python -m tests.bench load          LOAD_SECONDS=10 LOAD_GENERATOR=python python -m tests.bench load
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import resource
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import httpx

from tests.bench.util import cpu_reference, pct, report
from tests.support.corpus import make_corpus, make_queries
from tests.support.procs import cpu_s, process_tree, start_sidecar, tree_rss_kb

__all__ = ["main"]

CONNECTIONS = int(os.environ.get("LOAD_CONNECTIONS", "32"))
# Connections that only write; the others only search. Each connection waits for its answer, so
# mixing writes into every connection would cap searches at a multiple of the (fsync-bound,
# serialized) write rate; separate classes measure each at its own pace, side by side.
WRITERS = int(os.environ.get("LOAD_WRITERS", "4"))
# Read workers of the sidecar (``--read-workers``): processes that answer searches on the same port.
READ_WORKERS = int(os.environ.get("LOAD_READ_WORKERS", "1"))
CHUNKS = 10_000
WARMUP_S = 5  # RSS samples are 1 s apart: growth is also shown from the one taken 5 s in
WRITE_FILES = 40  # appends spread over topics/load-NN.md, well under the per-file cap


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=lambda: {"search": [], "write": []})
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    transport_errors: int = 0
    acked: list[tuple[str, str, int]] = field(default_factory=list)  # (path, token, seq)
    rss_kb: list[int] = field(default_factory=list)
    elapsed: float = 0.0
    notes: list[tuple[str, str]] = field(default_factory=list)  # extra report lines of a generator


async def worker(
    n: int, session: aiohttp.ClientSession, url: str, until: float, queries: list[str], tally: Tally
) -> None:
    rng = random.Random(n)
    i = 0
    while time.monotonic() < until:
        i += 1
        if n < WRITERS:
            kind = "write"
            token = f"loadw{n}n{i}x"
            path = f"topics/load-{rng.randrange(WRITE_FILES):02d}.md"
            route, body = "/memory/write", {"path": path, "content": f"- {token} noted during the load run"}
        else:
            kind = "search"
            route, body = "/memory/search", {"query": rng.choice(queries), "limit": 10}
        started = time.perf_counter()
        try:
            async with session.post(url + route, json=body) as resp:
                payload = await resp.json()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError):
            tally.transport_errors += 1
            continue
        tally.latency[kind].append(time.perf_counter() - started)
        tally.statuses[(kind, status)] += 1
        if kind == "write" and status == 201:
            tally.acked.append((path, token, payload["seq"]))


async def sample_rss(pid: int, until: float, tally: Tally) -> None:
    while time.monotonic() < until:
        tally.rss_kb.append(tree_rss_kb(pid))
        await asyncio.sleep(1.0)


async def drive(url: str, pid: int, seconds: float, queries: list[str]) -> Tally:
    """The Python generator: 32 aiohttp workers in this process."""
    tally = Tally()
    connector = aiohttp.TCPConnector(limit=CONNECTIONS)
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        started = time.monotonic()
        until = started + seconds
        await asyncio.gather(
            sample_rss(pid, until, tally),
            *(worker(n, session, url, until, queries, tally) for n in range(CONNECTIONS)),
        )
        tally.elapsed = time.monotonic() - started
        return tally


def wrk_version(wrk: str) -> str:
    out = subprocess.run([wrk, "--version"], capture_output=True, text=True, check=False)
    first = (out.stdout or out.stderr).splitlines()
    return first[0].split(" [")[0] if first else "wrk"


def drive_wrk(wrk: str, url: str, pid: int, seconds: float, queries: list[str], work: Path) -> Tally:
    """The wrk generator: ``load.lua`` over 32 threads x 1 connection; this process samples RSS."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    env = {
        **os.environ,
        "LOAD_WRK_DIR": str(work),
        "LOAD_WRITERS": str(WRITERS),
        "LOAD_WRITE_FILES": str(WRITE_FILES),
    }
    script = Path(__file__).with_name("load.lua")
    argv = [wrk, f"-t{CONNECTIONS}", f"-c{CONNECTIONS}", f"-d{seconds:g}s", "--timeout", "30s", "-s", str(script), url]
    tally = Tally()
    with (work / "wrk.out").open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        while proc.poll() is None:
            tally.rss_kb.append(tree_rss_kb(pid))
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1.0)
    if proc.returncode != 0 or not (work / "summary.tsv").exists():
        raise RuntimeError(f"wrk failed ({proc.returncode}): {(work / 'wrk.out').read_text()}")
    summary = {k: int(v) for k, v in (line.split("\t") for line in (work / "summary.tsv").read_text().splitlines())}
    tally.elapsed = summary["duration_us"] / 1e6
    tally.transport_errors = summary["connect"] + summary["read"] + summary["write"] + summary["timeout"]
    for line in (work / "responses.tsv").read_text().splitlines():
        kind, status, us, *acked = line.split("\t")
        tally.latency[kind].append(int(us) / 1e6)
        tally.statuses[(kind, int(status))] += 1
        if acked:
            path, token, seq = acked
            tally.acked.append((path, token, int(seq)))
    tally.notes.append(
        (
            "load: wrk's own latency, all requests",
            f"p50 {summary['p50_us'] / 1000:.1f} ms  p99 {summary['p99_us'] / 1000:.1f} ms  "
            f"max {summary['max_us'] / 1000:.0f} ms ({summary['requests']} requests)",
        )
    )
    return tally


async def verify(url: str, root: Path, tally: Tally) -> tuple[int, int, int]:
    """(acked writes missing from their file, sample size, sample missing from the index)."""
    text = {p: (root / p).read_text() for p in {path for path, _, _ in tally.acked}}
    in_files = sum(token not in text[path].split() for path, token, _ in tally.acked)
    sample = random.Random(5).sample(tally.acked, min(200, len(tally.acked)))
    last = max((seq for _, _, seq in tally.acked), default=0)
    missing = 0
    async with aiohttp.ClientSession() as session:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until the queue has applied the last write
            async with session.post(url + "/memory/search", json={"query": "x", "after_seq": last}) as resp:
                if (await resp.json())["index"].get("after_seq_met"):
                    break
        for path, token, _ in sample:
            async with session.post(url + "/memory/search", json={"query": token, "limit": 5}) as resp:
                missing += path not in {r["path"] for r in (await resp.json())["results"]}
    return in_files, len(sample), missing


def cpu_by_process(pid: int) -> dict[int, float]:
    """CPU seconds (user + system, every thread) each of the sidecar and its read workers has used."""
    out: dict[int, float] = {}
    for p in process_tree(pid):
        with contextlib.suppress(FileNotFoundError):
            out[p] = cpu_s(p)
    return out


def searches_by_process(url: str, pid: int) -> dict[int, tuple[float, float, float]]:
    """Searches each process has answered, requests it forwarded and connections it handed off,
    from ``/metrics``: the primary's own searches (scope agent) and each read worker's searches,
    forwards and handoffs (its number mapped to its pid through its command line)."""
    text = httpx.get(url + "/metrics", timeout=30).text
    numbers: dict[str, int] = {}
    for p in process_tree(pid)[1:]:
        with contextlib.suppress(FileNotFoundError):
            argv = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
            if b"--number" in argv:
                numbers[argv[argv.index(b"--number") + 1].decode()] = p
    searches: dict[int, float] = {}
    forwarded: dict[int, float] = {}
    handed_off: dict[int, float] = {}
    for line in text.splitlines():
        if line.startswith('memory_sidecar_search_seconds_count{scope="agent"}'):
            searches[pid] = float(line.rsplit(" ", 1)[1])
        found = re.match(
            r'memory_sidecar_read_worker_(search_seconds_count|forwarded_total|handed_off_total)\{worker="(\d+)"\} (\S+)',
            line,
        )
        if found and found.group(2) in numbers:
            into = {"search_seconds_count": searches, "forwarded_total": forwarded}.get(found.group(1), handed_off)
            into[numbers[found.group(2)]] = float(found.group(3))
    return {
        p: (searches.get(p, 0.0), forwarded.get(p, 0.0), handed_off.get(p, 0.0))
        for p in searches.keys() | forwarded.keys()
    }


def own_cpu_s(children: bool) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def settle(url: str, pid: int, log: Path, timeout: float = 120.0) -> float:
    """Wait until the agent tier's BM25 engine is built (it builds after /healthz answers), every
    read worker has built its own, and the RSS of them all has stopped moving (< 1 MB over 2 s);
    the seconds waited."""
    started = time.monotonic()
    with httpx.Client() as client:
        while time.monotonic() - started < timeout:
            bm25 = client.get(f"{url}/memory/status", timeout=10).json().get("bm25", {})
            if bm25.get("postings") != "building" and log.read_text().count("replica.postings_built") >= READ_WORKERS:
                break
            time.sleep(0.1)
    before = tree_rss_kb(pid)
    while time.monotonic() - started < timeout:
        time.sleep(2.0)
        now = tree_rss_kb(pid)
        if abs(now - before) < 1024:
            break
        before = now
    return time.monotonic() - started


def pick_generator() -> tuple[str | None, str]:
    """(path of wrk or None for the Python generator, the line saying which one and why)."""
    wanted = os.environ.get("LOAD_GENERATOR", "auto")
    if wanted not in ("auto", "wrk", "python"):
        raise SystemExit(f"LOAD_GENERATOR must be auto, wrk or python, not {wanted!r}")
    wrk = shutil.which("wrk") if wanted != "python" else None
    if wrk is not None:
        return wrk, (
            f"{wrk_version(wrk)} ({CONNECTIONS} threads x 1 connection, tests/bench/load.lua); "
            "this process only samples RSS"
        )
    if wanted == "wrk":
        raise SystemExit("LOAD_GENERATOR=wrk but wrk is not installed (apt-get install -y wrk)")
    why = "LOAD_GENERATOR=python" if wanted == "python" else "wrk not installed (apt-get install -y wrk)"
    return None, f"python aiohttp, {CONNECTIONS} connections in this process ({why})"


def main() -> None:
    seconds = float(os.environ.get("LOAD_SECONDS", "60"))
    reference_before = cpu_reference()
    wrk, generator = pick_generator()
    print(f"# load generator: {generator}", flush=True)
    base = Path(tempfile.mkdtemp(prefix="bench-load-"))
    root = base / "memory"
    corpus_bytes = make_corpus(root, CHUNKS)
    queries = make_queries(2_000)
    side = start_sidecar(root, "--read-workers", str(READ_WORKERS), wait=300)
    try:
        rss_ready = tree_rss_kb(side.proc.pid)
        settled_s = settle(side.url, side.proc.pid, side.log)
        rss_start = tree_rss_kb(side.proc.pid)
        searches_before = searches_by_process(side.url, side.proc.pid)  # before the CPU: its scrape is not the load's
        cpu_before, gen_before = cpu_by_process(side.proc.pid), own_cpu_s(children=wrk is not None)
        if wrk is not None:
            tally = drive_wrk(wrk, side.url, side.proc.pid, seconds, queries, base / "wrk")
        else:
            tally = asyncio.run(drive(side.url, side.proc.pid, seconds, queries))
        rss_end = tree_rss_kb(side.proc.pid)
        cpu_after, cpu_gen = cpu_by_process(side.proc.pid), own_cpu_s(children=wrk is not None) - gen_before
        cpu_server = sum(cpu_after.values()) - sum(cpu_before.values())
        searches_after = searches_by_process(side.url, side.proc.pid)
        none = (0.0, 0.0, 0.0)
        split = [
            (
                p,
                searches_after.get(p, none)[0] - searches_before.get(p, none)[0],
                searches_after.get(p, none)[1] - searches_before.get(p, none)[1],
                searches_after.get(p, none)[2] - searches_before.get(p, none)[2],
                cpu_after[p] - cpu_before.get(p, 0.0),
            )
            for p in cpu_after
        ]
        hwm = tree_rss_kb(side.proc.pid, "VmHWM")  # each process's peak so far, summed
        in_files, sampled, in_index = asyncio.run(verify(side.url, root, tally))
    finally:
        side.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"# {os.cpu_count()} cores shared by the server and the load generator; {CONNECTIONS} connections, "
        f"{seconds:g} s, {CONNECTIONS - WRITERS} search + {WRITERS} write connections, corpus {CHUNKS} chunks ({corpus_bytes / 1e6:.1f} MB)",
        flush=True,
    )
    report(
        "load: host speed (5M-step Python loop, before / after)",
        f"{reference_before:.0f} / {cpu_reference():.0f} ms (a shared host: figures scale with it)",
    )
    report("load: generator", "wrk + load.lua" if wrk is not None else "python aiohttp (in-process)")
    report("load: sidecar processes", f"1 + {READ_WORKERS} read workers (RSS and CPU below: all of them)")
    for kind in ("search", "write"):
        lat = [s * 1000 for s in tally.latency[kind]]
        if not lat:
            continue
        report(f"load: {kind}es/s" if kind == "search" else f"load: {kind}s/s", f"{len(lat) / tally.elapsed:.0f}/s")
        report(f"load: {kind} latency", f"p50 {pct(lat, 50):.1f} ms  p99 {pct(lat, 99):.1f} ms  max {max(lat):.0f} ms")
    answered = sum(tally.statuses.values())
    report(
        "load: CPU per request, server / generator",
        f"{cpu_server * 1000 / answered:.3f} / {cpu_gen * 1000 / answered:.3f} ms "
        f"({cpu_server / tally.elapsed:.2f} / {cpu_gen / tally.elapsed:.2f} cores)",
    )
    # What each process did: a read worker answers searches and forwards the rest, so with few
    # forwards its CPU per search is the cost of a search on this host under this load.
    report(
        "load: per process: searches answered (+ forwarded, handed off), CPU, CPU per search",
        "; ".join(
            f"sidecar {n:.0f}, {cpu:.1f} s"
            if p == side.proc.pid
            else f"worker {n:.0f} (+{fwd:.0f} forwarded, {off:.0f} handed off), {cpu:.1f} s"
            + (f", {cpu * 1000 / n:.3f} ms" if n else "")
            for p, n, fwd, off, cpu in split
        ),
    )
    five = sum(n for (_, status), n in tally.statuses.items() if status >= 500)
    report("load: 5xx responses", str(five), "0")
    report("load: statuses", ", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(tally.statuses.items())))
    report("load: transport errors (timeouts, resets)", str(tally.transport_errors), "0")
    # The last sample taken under load: the one after the run can come after the idle release.
    last = tally.rss_kb[-1] if tally.rss_kb else rss_end
    peak = max(tally.rss_kb, default=rss_end)
    growth = (peak - rss_start) * 100 / rss_start if rss_start else 0.0
    report(
        "load: RSS start / last under load / peak",
        f"{rss_start / 1024:.0f} / {last / 1024:.0f} / {peak / 1024:.0f} MB (peak {growth:+.1f}%)",
        "growth < 10%",
    )
    report(
        "load: RSS at ready / settled (s) / high-water mark",
        f"{rss_ready / 1024:.0f} MB / {rss_start / 1024:.0f} MB ({settled_s:.1f} s) / {hwm / 1024:.0f} MB (VmHWM)",
    )
    if len(tally.rss_kb) > WARMUP_S:
        warm = tally.rss_kb[WARMUP_S]
        report(
            f"load: RSS after the first {WARMUP_S} s / peak after it",
            f"{warm / 1024:.0f} / {max(tally.rss_kb[WARMUP_S:]) / 1024:.0f} MB "
            f"({(max(tally.rss_kb[WARMUP_S:]) - warm) * 100 / warm:+.1f}%)",
        )
    report("load: RSS a moment after the run (idle)", f"{rss_end / 1024:.0f} MB")
    trend = " ".join(f"{kb / 1024:.0f}" for kb in tally.rss_kb[:: max(1, len(tally.rss_kb) // 6)])
    report("load: RSS over the run (MB, evenly spaced samples)", trend)
    report("load: acked writes missing from their file", f"{in_files} of {len(tally.acked)}", "0")
    report("load: acked writes missing from the index", f"{in_index} of {sampled} sampled", "0")
    for name, value in tally.notes:
        report(name, value)


if __name__ == "__main__":
    main()
