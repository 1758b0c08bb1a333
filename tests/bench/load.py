"""Sustained mixed load on a real sidecar process: 90% search, 10% write, 32 connections.

Runs ``LOAD_SECONDS`` (default 60) against a 10k-chunk generated corpus, then checks that every
acknowledged write is in its file and (for a sample) in the index. The load generator runs on the
same machine and shares its cores with the server, so the figures are a floor, not a ceiling.

    python -m tests.bench load          LOAD_SECONDS=10 python -m tests.bench load
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.bench.corpus import make_corpus, make_queries
from tests.bench.util import pct, report
from tests.procs import rss_kb, start_sidecar

__all__ = ["main"]

CONNECTIONS = 32
WRITE_SHARE = 0.10
CHUNKS = 10_000
WRITE_FILES = 40  # appends spread over topics/load-NN.md, well under the per-file cap


@dataclass
class Tally:
    latency: dict[str, list[float]] = field(default_factory=lambda: {"search": [], "write": []})
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)
    transport_errors: int = 0
    acked: list[tuple[str, str, int]] = field(default_factory=list)  # (path, token, seq)
    rss_kb: list[int] = field(default_factory=list)


async def worker(
    n: int, session: aiohttp.ClientSession, url: str, until: float, queries: list[str], tally: Tally
) -> None:
    rng = random.Random(n)
    i = 0
    while time.monotonic() < until:
        i += 1
        if rng.random() < WRITE_SHARE:
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
        tally.rss_kb.append(rss_kb(pid))
        await asyncio.sleep(1.0)


async def drive(url: str, pid: int, seconds: float, queries: list[str]) -> tuple[Tally, float]:
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
        return tally, time.monotonic() - started


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


def main() -> None:
    seconds = float(os.environ.get("LOAD_SECONDS", "60"))
    base = Path(tempfile.mkdtemp(prefix="bench-load-"))
    root = base / "memory"
    corpus_bytes = make_corpus(root, CHUNKS)
    queries = make_queries(2_000)
    side = start_sidecar(root, wait=300)
    try:
        rss_start = rss_kb(side.proc.pid)
        tally, elapsed = asyncio.run(drive(side.url, side.proc.pid, seconds, queries))
        rss_end = rss_kb(side.proc.pid)
        in_files, sampled, in_index = asyncio.run(verify(side.url, root, tally))
    finally:
        side.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"# {os.cpu_count()} cores shared by the server and this load generator; {CONNECTIONS} connections, "
        f"{seconds:g} s, corpus {CHUNKS} chunks ({corpus_bytes / 1e6:.1f} MB)",
        flush=True,
    )
    for kind in ("search", "write"):
        lat = [s * 1000 for s in tally.latency[kind]]
        if not lat:
            continue
        report(f"load: {kind}es/s" if kind == "search" else f"load: {kind}s/s", f"{len(lat) / elapsed:.0f}/s")
        report(f"load: {kind} latency", f"p50 {pct(lat, 50):.1f} ms  p99 {pct(lat, 99):.1f} ms  max {max(lat):.0f} ms")
    five = sum(n for (_, status), n in tally.statuses.items() if status >= 500)
    report("load: 5xx responses", str(five), "0")
    report("load: statuses", ", ".join(f"{k} {s}: {n}" for (k, s), n in sorted(tally.statuses.items())))
    report("load: transport errors (timeouts, resets)", str(tally.transport_errors), "0")
    peak = max(tally.rss_kb, default=rss_end)
    growth = (rss_end - rss_start) * 100 / rss_start if rss_start else 0.0
    report(
        "load: RSS start / end / peak",
        f"{rss_start / 1024:.0f} / {rss_end / 1024:.0f} / {peak / 1024:.0f} MB ({growth:+.1f}%)",
    )
    trend = " ".join(f"{kb / 1024:.0f}" for kb in tally.rss_kb[:: max(1, len(tally.rss_kb) // 6)])
    report("load: RSS over the run (MB, evenly spaced samples)", trend)
    report("load: acked writes missing from their file", f"{in_files} of {len(tally.acked)}", "0")
    report("load: acked writes missing from the index", f"{in_index} of {sampled} sampled", "0")


if __name__ == "__main__":
    main()
