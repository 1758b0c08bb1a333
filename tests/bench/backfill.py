"""Searches during the knowledge graph's first read of a large memory dir.

    python -m tests.bench backfill        BACKFILL_ROUNDS=2

A real sidecar app on a real loopback HTTP server (in this process, BM25 only) over the index
bench's 10k-chunk memory dir (833 files), started fresh: the graph has read none of the files. Once
the BM25 postings are built, 100 warm-up searches and then 2,000 measured ones, one at a time, while
the graph's start-up backfill runs with its shipped pacing (``BACKFILL_REST``). Two ways, in
rotating rounds so that a shared host's drift hits them alike:

- child: as shipped: the rules run in a child process, and the backfill waits while the sidecar
  is busy (``QUIET_SHARE``);
- thread: the rules in a thread and no quiet gate (``EXTRACTOR_FROM`` and ``QUIET_PATIENCE`` set
  out of reach): how every first start read the files before, and how a backfill of fewer than
  ``EXTRACTOR_FROM`` files still does.

Per round: search latency, the process's CPU per search (the client's share included: the same
in both), the files the graph read during the searches, and how late a 2 ms timer on the event
loop ran (the limit: the loop itself).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from sidecar.http.state import SIDECAR
from sidecar.kg import ingest
from sidecar.server.app import create_app
from sidecar.settings import load_settings
from tests.bench.util import ms, pct, report
from tests.support.corpus import make_corpus, make_queries

__all__ = ["main"]

ROUNDS = int(os.environ.get("BACKFILL_ROUNDS", "2"))
CHUNKS = 10_000


async def _round(root: Path, way: str) -> dict[str, float | str]:
    shipped = (ingest.EXTRACTOR_FROM, ingest.QUIET_PATIENCE)
    if way == "thread":
        ingest.EXTRACTOR_FROM, ingest.QUIET_PATIENCE = 10**9, 0.0
    settings = load_settings(
        {
            "memory_dir": str(root),
            "crew_dir": str(root.parent / f"{root.name}-crew"),
            "embedder": "none",
            "watch": "false",
            "reconcile_interval": "0",
            "crew_reindex_interval": "0",
        },
        environ={},
    )
    app = create_app(settings)
    server = TestServer(app)
    try:
        await server.start_server()
        for tier in app[SIDECAR].tiers.values():
            tier.start_postings()
        async with ClientSession(str(server.make_url(""))) as client:
            for _ in range(2400):  # the postings build: a few seconds
                if (await (await client.get("/memory/status")).json())["bm25"]["engine"] == "postings":
                    break
                await asyncio.sleep(0.05)
            queries = make_queries(2000, seed=3)
            for query in queries[:100]:
                await (await client.post("/memory/search", json={"query": query})).read()
            lags: list[float] = []
            done = asyncio.Event()

            async def probe() -> None:
                loop = asyncio.get_running_loop()
                while not done.is_set():
                    before = loop.time()
                    await asyncio.sleep(0.002)
                    lags.append(loop.time() - before - 0.002)

            probing = asyncio.create_task(probe())
            read_before = app[SIDECAR].kg.ingest.files_read
            samples = []
            cpu = time.process_time()
            for query in queries:
                started = time.perf_counter()
                resp = await client.post("/memory/search", json={"query": query})
                await resp.read()
                samples.append(time.perf_counter() - started)
                assert resp.status == 200
            cpu = (time.process_time() - cpu) / len(queries)
            done.set()
            await probing
            read = app[SIDECAR].kg.ingest.files_read - read_before
    finally:
        await server.close()
        ingest.EXTRACTOR_FROM, ingest.QUIET_PATIENCE = shipped
    return {
        "latency": ms(samples),
        "p99": pct(samples, 99) * 1000,
        "cpu": cpu * 1000,
        "read": read,
        "lag": statistics.median(lags) * 1000,
        "lag99": pct(lags, 99) * 1000,
    }


async def _main() -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-backfill-"))
    try:
        make_corpus(base / "memory", CHUNKS)
        results: dict[str, list[dict[str, float | str]]] = {"child": [], "thread": []}
        for r in range(ROUNDS):
            for way in ("child", "thread") if r % 2 == 0 else ("thread", "child"):
                root = base / f"{way}-{r}"
                shutil.copytree(base / "memory", root)
                one = await _round(root, way)
                results[way].append(one)
                print(
                    f"# round {r + 1} {way}: {one['latency']}  CPU {one['cpu']:.3f} ms per search; "
                    f"{one['read']} files read meanwhile; loop timer late p50 {one['lag']:.2f} ms, "
                    f"p99 {one['lag99']:.2f} ms; load average {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
                shutil.rmtree(root, ignore_errors=True)
        for way, label in (("child", "as shipped (child process, quiet gate)"), ("thread", "rules in a thread")):
            rounds = results[way]
            report(
                f"backfill: search during the first read, {label}",
                "p99 " + ", ".join(f"{float(x['p99']):.2f}" for x in rounds) + " ms; CPU per search "
                + ", ".join(f"{float(x['cpu']):.3f}" for x in rounds) + " ms (rounds)",
            )  # fmt: skip
            report(
                f"backfill: {label}, files read during the searches",
                ", ".join(str(x["read"]) for x in rounds) + "; loop timer late p99 "
                + ", ".join(f"{float(x['lag99']):.2f}" for x in rounds) + " ms",
            )  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    asyncio.run(_main())


if __name__ == "__main__":
    main()
