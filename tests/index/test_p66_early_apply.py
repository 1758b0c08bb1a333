"""A write's apply handed to the index's writer thread by the write thread (``apply_early``): the
write's item takes it up, the worker does not apply the file a second time, and ``indexed_seq``
still moves in order once the index has it. A change of the same file the watcher queued in the
batch, a later write's stat key, or an early apply that failed: the worker applies the file as
before."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable
from concurrent.futures import Future
from pathlib import Path

import pytest

from sidecar.index.queue import ReindexQueue
from sidecar.index.sync import ReconcileResult
from sidecar.index.tier import Tier
from sidecar.write.durable import stat_key
from tests.support.applies import applied_by_worker
from tests.support.memory import write

WITHIN = 60.0  # a hang guard for a wait on state
PATH = "topics/early.md"

Seen = list[tuple[str, str, int, str]]


@pytest.fixture
async def tier(memory_dir: Path) -> AsyncIterator[Tier]:
    t = Tier("agent", memory_dir)
    await t.open()
    yield t
    await t.close()


@pytest.fixture
async def queue(tier: Tier) -> AsyncIterator[ReindexQueue]:
    q = ReindexQueue({"agent": tier})
    q.start()
    yield q
    await q.drain_and_stop()


def key(memory_dir: Path, rel: str) -> tuple[int, ...]:
    return stat_key(os.stat(memory_dir / rel, follow_symlinks=False))


async def found(q: ReindexQueue, query: str) -> list[str]:
    return [h.path for h in await q.tiers["agent"].search(query, 10)]


async def test_an_apply_handed_over_early_is_not_applied_again(
    queue: ReindexQueue, tier: Tier, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: Seen = []

    async def hook(tier_name: str, path: str, seq: int, kind: str) -> None:
        seen.append((tier_name, path, seq, kind))

    queue.hooks.append(hook)
    calls = applied_by_worker(tier, monkeypatch)
    write(memory_dir, PATH, "- zqearly noted\n")
    written = key(memory_dir, PATH)
    future = queue.apply_early("agent", PATH, written)
    assert future is not None
    assert (await asyncio.wrap_future(future)).added == [PATH]
    seq = queue.put("agent", PATH, "write", written)
    assert await queue.wait_for(seq, WITHIN)
    assert calls == []  # the worker took the early apply's result
    assert seen == [("agent", PATH, seq, "added")]  # its hooks ran, at the write's seq
    assert await found(queue, "zqearly") == [PATH]


async def test_a_change_the_watcher_queued_before_the_write_is_applied_again(
    queue: ReindexQueue, tier: Tier, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The early apply read the file before an edit whose watcher event was queued ahead of the
    write: the batch holds both, so the worker reads the file again and the edit is searchable."""
    calls = applied_by_worker(tier, monkeypatch)
    write(memory_dir, PATH, "- zqwritten by the sidecar\n")
    written = key(memory_dir, PATH)
    future = queue.apply_early("agent", PATH, written)
    assert future is not None
    await asyncio.wrap_future(future)
    write(memory_dir, PATH, "- zqedited by hand\n")
    queue.put("agent", PATH, "watcher")
    seq = queue.put("agent", PATH, "write", written)  # both queued before the worker runs
    assert await queue.wait_for(seq, WITHIN)
    assert calls == [[PATH]]
    assert await found(queue, "zqedited") == [PATH]
    assert await found(queue, "zqwritten") == []


async def test_a_later_writes_stat_key_does_not_take_an_earlier_writes_apply(
    queue: ReindexQueue, tier: Tier, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = applied_by_worker(tier, monkeypatch)
    write(memory_dir, PATH, "- zqfirst\n")
    first = key(memory_dir, PATH)
    future = queue.apply_early("agent", PATH, first)
    assert future is not None
    await asyncio.wrap_future(future)
    write(memory_dir, PATH, "- zqfirst\n- zqsecond, a longer line so the size moves\n")
    second = key(memory_dir, PATH)
    assert second != first
    seq = queue.put("agent", PATH, "write", second)  # no apply was handed over for this one
    assert await queue.wait_for(seq, WITHIN)
    assert calls == [[PATH]]
    assert await found(queue, "zqsecond") == [PATH]
    later = queue.put("agent", PATH, "write", first)  # the first write's own put still takes its apply
    assert await queue.wait_for(later, WITHIN)
    assert calls == [[PATH]]


async def test_an_early_apply_that_failed_is_applied_by_the_worker(
    queue: ReindexQueue, tier: Tier, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = applied_by_worker(tier, monkeypatch)

    def failing(rels: Iterable[str]) -> Future[ReconcileResult]:
        future: Future[ReconcileResult] = Future()
        future.set_exception(sqlite3.OperationalError("database is locked"))
        return future

    monkeypatch.setattr(tier, "submit_apply", failing)
    write(memory_dir, PATH, "- zqretried\n")
    written = key(memory_dir, PATH)
    assert queue.apply_early("agent", PATH, written) is not None
    seq = queue.put("agent", PATH, "write", written)
    assert await queue.wait_for(seq, WITHIN)
    assert calls == [[PATH]]
    assert queue.is_indexed(seq)
    assert await found(queue, "zqretried") == [PATH]


async def test_no_apply_is_handed_over_once_the_queue_is_closing(tier: Tier, memory_dir: Path) -> None:
    q = ReindexQueue({"agent": tier})
    q.start()
    await q.drain_and_stop()
    write(memory_dir, PATH, "- zqlate\n")
    assert q.apply_early("agent", PATH, key(memory_dir, PATH)) is None
    assert q.apply_early("crew", PATH, key(memory_dir, PATH)) is None
