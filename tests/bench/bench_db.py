"""The cost of the SQLite plumbing the journal and the graph stand on: one small write or read
through each store, awaited one at a time and with writers side by side, in wall clock and in the
process's CPU per operation (CPU is the figure to trust on a shared host).

    python -m tests.bench.bench_db

It uses the stores' public methods only, so the same file measures another checkout of the code:
``git worktree add /tmp/before <commit>`` then ``PYTHONPATH=/tmp/before python tests/bench/bench_db.py``.
Knob: ``BENCH_DB_OPS`` (operations per figure, default 1000).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from sidecar.episodic import JournalEntry, SqliteJournalStore
from sidecar.kg.model import NewFact, Scope
from sidecar.kg.sqlite_kg import SqliteKgStore

OPS = int(os.environ.get("BENCH_DB_OPS", "1000"))
SIDE_BY_SIDE = 8
SCOPE = Scope("w")


async def _timed(name: str, ops: int, run: Callable[[], Awaitable[object]]) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    await run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{name:<38} {ops:>6} ops  {wall / ops * 1e6:>8.0f} us wall/op  {cpu / ops * 1e6:>8.0f} us CPU/op")


def _entry(n: int) -> JournalEntry:
    return JournalEntry(workspace_id="w", agent_id="a", entry_type="peer.conversation", summary=f"note {n}")


async def _journal(root: Path) -> None:
    store = await SqliteJournalStore.open(root / "journal.sqlite")
    ids: list[str] = []
    try:

        async def appends() -> None:
            for n in range(OPS):
                ids.append((await store.append(_entry(n))).id)

        async def reads() -> None:
            for entry_id in ids:
                await store.get("w", entry_id)

        async def side_by_side() -> None:
            async def one(k: int) -> None:
                for n in range(OPS // SIDE_BY_SIDE):
                    await store.append(_entry(k * OPS + n))

            await asyncio.gather(*(one(k) for k in range(1, SIDE_BY_SIDE + 1)))

        await _timed("journal append", OPS, appends)
        await _timed("journal get", OPS, reads)
        await _timed(
            f"journal append, {SIDE_BY_SIDE} writers side by side", OPS // SIDE_BY_SIDE * SIDE_BY_SIDE, side_by_side
        )
    finally:
        await store.aclose()


async def _graph(root: Path) -> None:
    store = await SqliteKgStore.open(root / "kg.sqlite")
    ids: list[int] = []
    try:

        async def adds() -> None:
            for n in range(OPS):
                fact = NewFact(f"service {n}", "uses", f"db {n % 50}", "2025-01-01", f"api:{n}")
                ids.extend(f.id for f in await store.add(SCOPE, [fact]))

        async def reads() -> None:
            for fid in ids:
                await store.fact(SCOPE, fid)

        await _timed("graph add (one fact)", OPS, adds)
        await _timed("graph fact read", OPS, reads)
    finally:
        await store.aclose()


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await _journal(Path(tmp))
        await _graph(Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())
