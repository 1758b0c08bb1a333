"""The index's work after a consolidation run, on the writer thread, and what search answers then.

A history of the consolidation bench (DEV kinds only) is written through the write path into a
sidecar app (BM25; ``CONSOLIDATION_EMBEDDER=onnx`` for the model, every chunk embedded first), one
run of ``POST /memory/consolidate`` moves its old notes to ``archive/`` and writes summaries, and
the reindex that follows is timed: the CPU of the index's writer thread in every ``reconcile`` and
``apply_paths`` it ran from the run's start to the queue's catching up, and the chunks left without
a vector (each one a model run for the embedder). Then every question of the history is asked
(top 10) and the hits (path, lines, score) are written to ``--out`` as JSON: two builds' files
compare whether search answers the same after the run.

    python -m tests.bench.reindex_moved KIND [KIND ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import hashlib
import json
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from sidecar.http.state import SIDECAR
from sidecar.server.app import create_app
from tests.bench.consolidation import _NO_TIMEOUT, SEEDS, _direct, _embedded, _history, _post, _settings, _write_notes


def _timed(fn: Callable[..., Any], log: list[tuple[str, float, float]], name: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        cpu, wall = time.thread_time(), time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            log.append((name, (time.thread_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000))

    return run


async def _probe(kind: str) -> dict[str, Any]:
    history = _history(kind, SEEDS[kind], datetime.now(UTC).date())
    notes = {history.start + timedelta(days=n): lines for n, lines in enumerate(history.notes)}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        (root / "daily").mkdir(parents=True)
        async with TestClient(TestServer(create_app(_settings(root))), timeout=_NO_TIMEOUT) as client:
            await _write_notes(client, root, notes, _direct(kind))
            await _embedded(client)
            sc = client.server.app[SIDECAR]
            sync = sc.tiers["agent"].index.sync
            calls: list[tuple[str, float, float]] = []
            sync.reconcile = _timed(sync.reconcile, calls, "reconcile")  # type: ignore[method-assign]
            sync.apply_paths = _timed(sync.apply_paths, calls, "apply")  # type: ignore[method-assign]
            lines_before = sync.lines_chunked
            chunks_before = sync.db.writer.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            await _post(client, "/memory/consolidate", {})
            seq = sc.queue.latest_seq
            assert await sc.queue.wait_for(seq, 120)
            assert await sc.queue.wait_hooked(seq, 120)  # the graph's lift reads the run's files
            status = await (await client.get("/memory/status", params={"scope": "agent"})).json()
            backlog = status["embedder"]["backlog"]
            await _embedded(client)
            hits: dict[str, list[Any]] = {}
            degraded = 0
            queries = [f.query for f in (*history.static, *history.recurring)] + [c.query for c in history.changed]
            for q in queries:
                answer = await _post(client, "/memory/search", {"query": q, "limit": 10})
                hits[q] = [(h["path"], h["line_start"], h["line_end"], round(h["score"], 6)) for h in answer["results"]]
            chunks_after = sync.db.writer.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            content = sorted(
                sync.db.writer.execute("SELECT path, ord, heading, body, line_start, line_end, hash FROM chunks")
            )
            lines = sync.lines_chunked - lines_before
    return {
        "calls": [(n, round(c, 1), round(w, 1)) for n, c, w in calls],
        "cpu_ms": round(sum(c for _, c, _ in calls), 1),
        "backlog_after_run": backlog,
        "chunks": (chunks_before, chunks_after),
        "lines_chunked": lines,
        "hits": hits,
        "degraded": degraded,
        "content": hashlib.blake2b(repr(content).encode(), digest_size=16).hexdigest(),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("kinds", nargs="+")
    parser.add_argument("--out")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for kind in args.kinds:
        got = asyncio.run(_probe(kind))
        out[kind] = got
        if args.out:
            Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True))
        print(
            kind,
            f"reindex CPU {got['cpu_ms']} ms in {len(got['calls'])} calls {got['calls']}",
            f"backlog after run {got['backlog_after_run']} chunks {got['chunks']} lines chunked {got['lines_chunked']}",
            f"queries {len(got['hits'])} degraded {got['degraded']} index content {got['content']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
