"""The reindex queue on a real tier: ``indexed_seq`` moves once the index has a change, its hooks
run before that, and its after-hooks follow on their own task behind ``hooked_seq``."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.index.checkpoint import WRITER_PAGES
from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from tests.support.memory import write
from tests.support.waiting import async_wait_until

#: A hang guard for a wait on state (an apply, a hook): a busy host delays the state, never changes it.
WITHIN = 60.0

Seen = list[tuple[str, str, int, str]]


@pytest.fixture
async def queue(memory_dir: Path) -> AsyncIterator[ReindexQueue]:
    tier = Tier("agent", memory_dir)
    await tier.open()
    q = ReindexQueue({"agent": tier})
    q.start()
    yield q
    await q.drain_and_stop()
    await tier.close()


class Held:
    """A hook that records what it saw and waits for ``release`` before it returns."""

    def __init__(self) -> None:
        self.seen: Seen = []
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def __call__(self, tier: str, path: str, seq: int, kind: str) -> None:
        self.seen.append((tier, path, seq, kind))
        self.entered.set()
        await self.release.wait()


async def found(q: ReindexQueue, query: str) -> list[str]:
    return [h.path for h in await q.tiers["agent"].search(query, 10)]


async def test_a_held_hook_does_not_hold_the_index(queue: ReindexQueue, memory_dir: Path) -> None:
    held = Held()
    queue.after_hooks.append(held)
    write(memory_dir, "topics/a.md", "# A\nzqfirst\n")
    seq = queue.put("agent", "topics/a.md", "write")
    assert await queue.wait_for(seq, WITHIN)
    assert await found(queue, "zqfirst") == ["topics/a.md"]  # searchable while the hook is held
    await asyncio.wait_for(held.entered.wait(), WITHIN)
    assert queue.hooked_seq < seq and not await queue.wait_hooked(seq, 0.05)
    write(memory_dir, "topics/b.md", "# B\nzqsecond\n")
    second = queue.put("agent", "topics/b.md", "write")
    assert await queue.wait_for(second, WITHIN)  # the next write is indexed behind the held hook too
    assert await found(queue, "zqsecond") == ["topics/b.md"]
    held.release.set()
    assert await queue.wait_hooked(second, WITHIN)
    assert held.seen == [("agent", "topics/a.md", seq, "added"), ("agent", "topics/b.md", second, "added")]


async def test_hooks_run_before_the_index_state_moves(queue: ReindexQueue, memory_dir: Path) -> None:
    states: list[tuple[int, int]] = []

    async def inline(tier: str, path: str, seq: int, kind: str) -> None:
        states.append((seq, queue.indexed_seq))

    queue.hooks.append(inline)
    write(memory_dir, "topics/a.md", "# A\nzqinline\n")
    seq = queue.put("agent", "topics/a.md", "write")
    assert await queue.wait_for(seq, WITHIN)
    assert len(states) == 1 and states[0][0] == seq and states[0][1] < seq


async def test_a_lagging_follower_announces_a_file_once_at_its_last_change(
    queue: ReindexQueue, memory_dir: Path
) -> None:
    held = Held()
    queue.after_hooks.append(held)
    write(memory_dir, "topics/first.md", "# First\nzqhold\n")
    first = queue.put("agent", "topics/first.md", "write")
    await asyncio.wait_for(held.entered.wait(), WITHIN)  # the follower is inside the hook
    seqs = []
    for i in range(3):  # three batches of changes to one new file, and one to another
        write(memory_dir, "topics/many.md", f"# Many\nzqmany{i}\n")
        seqs.append(queue.put("agent", "topics/many.md", "write"))
        assert await queue.wait_for(seqs[-1], WITHIN)
    write(memory_dir, "topics/other.md", "# Other\nzqother\n")
    other = queue.put("agent", "topics/other.md", "write")
    assert await queue.wait_for(other, WITHIN)
    (memory_dir / "topics/first.md").unlink()
    gone = queue.put("agent", "topics/first.md", "write")
    assert await queue.wait_for(gone, WITHIN)
    held.release.set()
    assert await queue.wait_hooked(gone, WITHIN)
    assert held.seen == [
        ("agent", "topics/first.md", first, "added"),
        ("agent", "topics/many.md", seqs[-1], "added"),  # added, then updated twice: still added
        ("agent", "topics/other.md", other, "added"),
        ("agent", "topics/first.md", gone, "removed"),
    ]


async def test_a_failing_hook_is_logged_and_the_others_still_run(queue: ReindexQueue, memory_dir: Path) -> None:
    seen: Seen = []

    async def broken(tier: str, path: str, seq: int, kind: str) -> None:
        raise RuntimeError("a hook that fails")

    async def record(tier: str, path: str, seq: int, kind: str) -> None:
        seen.append((tier, path, seq, kind))

    queue.after_hooks += [broken, record]
    write(memory_dir, "topics/a.md", "# A\nzqbroken\n")
    seq = queue.put("agent", "topics/a.md", "write")
    assert await queue.wait_hooked(seq, WITHIN)
    assert seen == [("agent", "topics/a.md", seq, "added")]


async def test_a_reconcile_with_no_change_still_moves_hooked_seq(queue: ReindexQueue) -> None:
    seq = queue.put("agent", None, "reconcile")
    assert await queue.wait_hooked(seq, WITHIN) and queue.hooked_seq == queue.indexed_seq == seq


async def test_stopping_runs_the_hooks_of_everything_applied(memory_dir: Path) -> None:
    tier = Tier("agent", memory_dir)
    await tier.open()
    q = ReindexQueue({"agent": tier})
    seen: Seen = []

    async def slow(tier: str, path: str, seq: int, kind: str) -> None:
        await asyncio.sleep(0)  # the hook yields, as the journal's and the graph's do
        seen.append((tier, path, seq, kind))

    q.after_hooks.append(slow)
    q.start()
    try:
        for i in range(5):
            write(memory_dir, f"topics/f{i}.md", f"# F\nzqstop{i}\n")
            q.put("agent", f"topics/f{i}.md", "write")
    finally:
        await q.drain_and_stop()
        await tier.close()
    assert q.indexed_seq == q.hooked_seq == 5
    assert sorted(p for _, p, _, _ in seen) == [f"topics/f{i}.md" for i in range(5)]


async def test_wait_hooked_gives_up_after_its_limit(queue: ReindexQueue, memory_dir: Path) -> None:
    held = Held()
    queue.after_hooks.append(held)
    write(memory_dir, "topics/a.md", "# A\nzqlimit\n")
    seq = queue.put("agent", "topics/a.md", "write")
    await async_wait_until(held.entered.is_set, message="the follower to enter the hook")
    assert await queue.wait_hooked(seq, 0.05) is False
    held.release.set()
    assert await queue.wait_hooked(seq, WITHIN) is True


async def test_wait_hooked_awaits_the_work_an_after_hook_deferred(queue: ReindexQueue, memory_dir: Path) -> None:
    """An after-hook that only notes a change (the graph lets a changed file linger) has its
    ``catch_up`` do the work: whoever waits on ``wait_hooked`` finds it done, even when
    ``hooked_seq`` had moved already."""
    noted: list[str] = []
    done: list[str] = []

    async def note(tier: str, path: str, seq: int, kind: str) -> None:
        noted.append(path)

    async def catch_up() -> None:
        await asyncio.sleep(0)
        done.extend(noted)
        noted.clear()

    queue.after_hooks.append(note)
    queue.catch_up.append(catch_up)
    write(memory_dir, "topics/a.md", "# A\nzqdeferred\n")
    seq = queue.put("agent", "topics/a.md", "write")
    assert await queue.wait_hooked(seq, WITHIN)
    assert (noted, done) == ([], ["topics/a.md"])
    write(memory_dir, "topics/b.md", "# B\nzqdeferred\n")
    second = queue.put("agent", "topics/b.md", "write")
    await async_wait_until(lambda: queue.hooked_seq >= second, message="the follower to note the change")
    assert (noted, done) == (["topics/b.md"], ["topics/a.md"])  # noted, not done
    assert await queue.wait_hooked(second, WITHIN)  # hooked_seq had moved: the work is still done first
    assert (noted, done) == ([], ["topics/a.md", "topics/b.md"])


async def appended(memory_dir: Path, every: int, count: int) -> tuple[int, int, int]:
    """``count`` appends to one daily note, each applied alone by a real queue whose checkpoints
    run every ``every`` batches, a writer pausing until a checkpoint under way is done: (the
    writer's wal_autocheckpoint meanwhile, checkpoints run, frames in the WAL at the end, since
    SQLite last started it over)."""
    tier = Tier("agent", memory_dir)
    await tier.open()
    q = ReindexQueue({"agent": tier})
    q.start()
    text = "# Day\n"
    try:
        for i in range(count):
            text += f"- zqday{i} the deploy went out at noon and the rollback was not needed\n"
            write(memory_dir, "daily/2026-06-01.md", text)
            assert await q.wait_for(q.put("agent", "daily/2026-06-01.md", "write"), WITHIN)
            checkpoints = q._checkpoints["agent"]  # the tier's checkpointer exists once it applied
            checkpoints.every = every
            await checkpoints.settled()
        assert await found(q, f"zqday{count - 1}") == ["daily/2026-06-01.md"]
        automatic = await tier.write_with(lambda conn: int(conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]))
        await q.drain_and_stop()
        conn = sqlite3.connect(tier.index.path, isolation_level=None)
        try:
            frames = int(conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])
        finally:
            conn.close()
        return automatic, checkpoints.done, frames
    finally:
        await tier.close()


async def test_checkpoints_run_beside_the_applies_not_in_them(tmp_path: Path) -> None:
    """While the queue runs, no apply's commit copies the WAL back (the writer's own checkpoint
    waits for 4,000 pages, a backstop): a checkpoint runs on a connection of its own every few
    batches, and SQLite starts the WAL over after it as after its own. Without them (every:
    never) the WAL grows with each commit."""
    runs = {}
    for every, name in ((8, "often"), (10**9, "never")):
        memory_dir = tmp_path / name
        memory_dir.mkdir()
        runs[name] = await appended(memory_dir, every, 120)
    automatic, done, frames = runs["often"]
    assert (automatic, done) == (WRITER_PAGES, 120 // 8)
    never_automatic, never_done, never_frames = runs["never"]
    assert (never_automatic, never_done) == (WRITER_PAGES, 0)
    assert frames * 5 < never_frames < WRITER_PAGES, (frames, never_frames)
