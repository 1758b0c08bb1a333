"""What HTTP costs the search route: a real sidecar next to bare aiohttp routes, same load, same run.

The sidecar is a real process (``memory-sidecar serve``) on a generated 10k-chunk memory dir, BM25
only (``MEMORY_SIDECAR_EMBEDDER=none``) and no scheduled consolidation (its first run would
summarise the generated dir's past weeks during the rounds), default settings otherwise. Next to it, two bare aiohttp
processes (``tests/bench/bare_route.py``: aiohttp run the way the sidecar runs it, one route, no
middleware):

- bare: answers a real sidecar search answer of median size, captured first: the limit;
- bare + search: answers the same BM25 search (``TierIndex.search`` from the in-memory postings,
  hits as the sidecar's JSON) over its own index of an identical copy of the memory dir.

All three get the same requests from the same generator (wrk + ``load.lua``, search connections
only; see ``loadgen.py``), in rotating rounds so that a shared host's drift hits them alike. Per
round: requests/s, and the server's CPU per request over the measured window (what the other
tenants of a shared machine disturb least). Ratios are medians of the per-round ratios. The CPU
per request splits into aiohttp (bare), the search (bare + search minus bare) and the rest of the
sidecar (sidecar minus bare + search: middleware, validation, metrics, the answer's index state).

Before the load: the sidecar's idle RSS once its BM25 postings are built, the knowledge graph has
read every file once (``kg.backfilled``: a fresh memory dir's first reading runs in a child
process for a while after start, and would otherwise share the measured rounds) and it has been
idle long enough to hand back what it does not need (``IdleRelease``: 0.25 s), next to the bare
route's (target: at most the bare route's + 30 MB).

    python -m tests.bench http        HTTP_SECONDS=8 HTTP_ROUNDS=3 HTTP_CONNECTIONS=8 HTTP_WARMUP=2
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from tests.bench.bare_route import start_bare
from tests.bench.loadgen import Run, drive, pick_generator, server_cpu_s
from tests.bench.util import cpu_reference, pct, report, wait_logged
from tests.support.corpus import make_corpus, make_queries
from tests.support.procs import free_port, rss_kb, start_sidecar

__all__ = ["main"]

CHUNKS = 10_000
SECONDS = float(os.environ.get("HTTP_SECONDS", "8"))
WARMUP = float(os.environ.get("HTTP_WARMUP", "2"))
ROUNDS = int(os.environ.get("HTTP_ROUNDS", "3"))
CONNECTIONS = int(os.environ.get("HTTP_CONNECTIONS", "8"))
#: BM25 only; no scheduled consolidation: on a generated memory dir of old daily notes its first run
#: (shortly after start, since it is overdue) summarises every past week and would share the rounds.
STEADY = {"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}
IDLE_RSS_OVER_BARE_MB = 30  # the target: idle RSS (BM25 only) at most a bare aiohttp route's + this


def wait_postings(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while httpx.get(f"{url}/memory/status", timeout=10).json()["bm25"]["engine"] != "postings":
        if time.monotonic() > deadline:
            raise RuntimeError(f"BM25 postings not built within {timeout:g} s")
        time.sleep(0.05)


def typical_answer(url: str, queries: list[str]) -> bytes:
    """The sidecar's answer of median size over ``queries`` (limit 10, as the load sends)."""
    with httpx.Client(timeout=10) as client:
        answers = [client.post(f"{url}/memory/search", json={"query": q, "limit": 10}).content for q in queries]
    return sorted(answers, key=len)[len(answers) // 2]


def idle_cpu_share(pid: int, seconds: float = 3.0) -> float:
    before = server_cpu_s(pid)
    time.sleep(seconds)
    return (server_cpu_s(pid) - before) / seconds


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _rounds(values: list[float], fmt: str) -> str:
    return ", ".join(format(v, fmt) for v in values)


NAMES = {
    "bare": "bare aiohttp route",
    "search": "bare aiohttp route + the same search",
    "sidecar": "sidecar POST /memory/search",
}


def main() -> None:
    reference_before = cpu_reference()
    wrk, generator = pick_generator()
    print(f"# load generator: {generator}", flush=True)
    base = Path(tempfile.mkdtemp(prefix="bench-http-"))
    root = base / "memory"
    corpus_bytes = make_corpus(root, CHUNKS)
    make_corpus(base / "memory-copy", CHUNKS)  # the same files (same seed), for the bare search's own index
    queries = make_queries(2_000)
    side = start_sidecar(root, env=STEADY, wait=300)
    bares = []
    runs: dict[str, list[Run]] = {name: [] for name in NAMES}
    try:
        wait_postings(side.url)
        wait_logged(side.log, "kg.backfilled")
        time.sleep(2.0)  # idle: the postings build's transient heap handed back
        idle_cpu = idle_cpu_share(side.proc.pid)
        rss_idle, hwm_idle = rss_kb(side.proc.pid), rss_kb(side.proc.pid, "VmHWM")
        answer = typical_answer(side.url, queries[:200])
        bares.append(bare := start_bare(base / "bare", free_port(), body=answer))
        bares.append(searching := start_bare(base / "bare", free_port(), memory_dir=base / "memory-copy"))
        time.sleep(1.0)
        rss_bare = rss_kb(bare.proc.pid)
        search_answer = typical_answer(searching.url, queries[:200])
        targets = {
            "bare": (bare.url, bare.proc.pid),
            "search": (searching.url, searching.proc.pid),
            "sidecar": (side.url, side.proc.pid),
        }
        names = list(NAMES)
        for r in range(ROUNDS):
            for name in names[r % 3 :] + names[: r % 3]:
                url, pid = targets[name]
                run = drive(
                    url,
                    pid,
                    seconds=SECONDS,
                    warmup=WARMUP,
                    connections=CONNECTIONS,
                    writers=0,
                    queries=queries,
                    work=base / f"gen-{name}",
                    wrk=wrk,
                )
                bad = {k: n for k, n in run.statuses().items() if k[1] != 200}
                if bad or run.transport_errors:
                    raise RuntimeError(f"{name}: non-200 answers {bad}, {run.transport_errors} transport errors")
                runs[name].append(run)
                print(
                    f"# round {r + 1} {NAMES[name]}: {run.rate():.0f} req/s, "
                    f"{run.cpu_per_request_ms():.3f} ms CPU/request, {run.server_cpu / run.seconds:.2f} cores",
                    flush=True,
                )
    finally:
        for one in bares:
            one.stop()
        side.stop()
        shutil.rmtree(base, ignore_errors=True)

    print(
        f"# {os.cpu_count()} cores shared by the servers, the generator and other tenants; {CONNECTIONS} connections "
        f"searching, {ROUNDS} rounds of {WARMUP:g} s warm-up + {SECONDS:g} s measured per server, rotated; "
        f"corpus {CHUNKS} chunks ({corpus_bytes / 1e6:.1f} MB)",
        flush=True,
    )
    report(
        "http: host speed (5M-step Python loop, before / after)",
        f"{reference_before:.0f} / {cpu_reference():.0f} ms (a shared host: figures scale with it)",
    )
    report("http: generator", generator.split(" (")[0])
    report(
        "http: answer size, median",
        f"sidecar {len(answer)} bytes (served as-is by the bare route); bare + search {len(search_answer)} bytes",
    )
    rate = {k: [r.rate() for r in v] for k, v in runs.items()}
    cpu = {k: [r.cpu_per_request_ms() for r in v] for k, v in runs.items()}
    cores = {k: [r.server_cpu / r.seconds for r in v] for k, v in runs.items()}
    for name, label in NAMES.items():
        report(
            f"http: {label}, requests/s", f"median {_median(rate[name]):.0f}/s (rounds: {_rounds(rate[name], '.0f')})"
        )
        report(
            f"http: {label}, server CPU per request",
            f"median {_median(cpu[name]):.3f} ms (rounds: {_rounds(cpu[name], '.3f')}); "
            f"{_median(cores[name]):.2f} cores",
        )
        lat = [ms for r in runs[name] for ms in r.latencies_ms("search")]
        report(
            f"http: {label}, latency", f"p50 {pct(lat, 50):.2f} ms  p99 {pct(lat, 99):.2f} ms  max {max(lat):.0f} ms"
        )
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["bare"], strict=True)]
    report(
        "http: sidecar / bare route, requests/s",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.6x",
    )
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["search"], strict=True)]
    report(
        "http: sidecar / bare route + search, requests/s",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x",
    )
    ratios = [b / s for s, b in zip(cpu["sidecar"], cpu["search"], strict=True)]
    report(
        "http: bare route + search / sidecar, CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x (the route's own work <= 25% of the search's)",
    )
    bare_ms, search_ms, side_ms = (_median(cpu[k]) for k in ("bare", "search", "sidecar"))
    report(
        "http: sidecar CPU per request = aiohttp + search + rest",
        f"{side_ms:.3f} = {bare_ms:.3f} + {search_ms - bare_ms:.3f} + {side_ms - search_ms:.3f} ms",
    )
    gen = [r.generator_cpu_per_request_ms() for v in runs.values() for r in v]
    report("http: generator CPU per request", f"median {_median(gen):.3f} ms")
    report(
        "http: idle RSS, sidecar BM25 only, 10k chunks",
        f"{rss_idle / 1024:.1f} MB (VmHWM {hwm_idle / 1024:.1f} MB)",
        f"<= the bare route's + {IDLE_RSS_OVER_BARE_MB} MB = {rss_bare / 1024 + IDLE_RSS_OVER_BARE_MB:.1f} MB",
    )
    report(
        "http: idle RSS, bare aiohttp route",
        f"{rss_bare / 1024:.1f} MB",
        f"the sidecar holds {(rss_idle - rss_bare) / 1024:.1f} MB more",
    )
    report("http: idle CPU, sidecar (3 s with no requests)", f"{idle_cpu * 100:.2f}% of a core")


if __name__ == "__main__":
    main()
