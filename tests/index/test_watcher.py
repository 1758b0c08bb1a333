"""Changes made outside the sidecar (shell, editor, rm, mv) reach the index through the watcher."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sidecar.index.chunker import chunk_markdown
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until


async def paths_for(client: Any, query: str) -> list[str]:
    resp = await client.post("/memory/search", json={"query": query, "limit": 50})
    return [r["path"] for r in (await resp.json())["results"]]


async def eventually(client: Any, query: str, expected: list[str], within: float = 60.0) -> float:
    """Poll until the search gives ``expected``; return how long it took. ``within`` bounds a wait for
    a state, not a latency: on a busy host one search may take seconds. How soon a change is
    searchable is measured by ``WRITES_BENCH=bm25 python -m tests.bench writes`` (its shell write row)."""
    started = time.monotonic()
    got: list[str] = []

    async def found() -> bool:
        nonlocal got
        got = await paths_for(client, query)
        return got == expected

    await async_wait_until(
        found, timeout=within, interval=0.02, message=lambda: f"{query!r}: still {got}, wanted {expected}"
    )
    return time.monotonic() - started


async def test_shell_append_without_fsync_is_picked_up(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(watch=True)
    subprocess.run(["sh", "-c", f"echo '- the build box is named axolotl' >> {memory_dir / 'AGENT.md'}"], check=True)
    # Reconciling is off in these sidecars (reconcile_interval 0), so only the watcher can bring it in.
    await eventually(client, "axolotl", ["AGENT.md"])


async def test_editor_style_save_delete_and_rename(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(watch=True)
    # An editor writes a swap file and renames it over the original.
    swap = memory_dir / ".AGENT.md.swp"
    swap.write_text("# Identity\nnarwhal is the new codename\n")
    os.replace(swap, memory_dir / "AGENT.md")
    await eventually(client, "narwhal", ["AGENT.md"])
    await eventually(client, "screenshot", [])
    (memory_dir / "daily/2026-05-14.md").unlink()
    await eventually(client, "invoices", [])
    os.rename(memory_dir / "AGENT.md", memory_dir / "topics-moved.md")
    await eventually(client, "narwhal", ["topics-moved.md"])
    (memory_dir / "topics").mkdir()
    os.rename(memory_dir / "topics-moved.md", memory_dir / "topics" / "n.md")
    await eventually(client, "narwhal", ["topics/n.md"])


async def test_new_directories_are_watched(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(watch=True)
    write(memory_dir, "topics/deep/er/x.md", "# X\npangolin\n")
    await eventually(client, "pangolin", ["topics/deep/er/x.md"])


async def test_a_thousand_rapid_edits_end_with_the_final_content(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client(watch=True)
    target = memory_dir / "topics" / "churn.md"
    target.parent.mkdir()
    for i in range(1000):
        target.write_text(f"# Churn\nversion{i} capybara\n")
    await eventually(client, "version999", ["topics/churn.md"])
    assert await paths_for(client, "version998") == []
    resp = await client.get("/memory/status")
    status = await resp.json()
    assert status["queue"]["pending"] == 0 or await eventually(client, "capybara", ["topics/churn.md"]) >= 0
    # The index holds exactly the final file's chunks.
    resp = await client.post("/memory/search", json={"query": "capybara", "limit": 50})
    hits = (await resp.json())["results"]
    expected = chunk_markdown(target.read_text())
    assert [(h["heading"], h["line_start"]) for h in hits] == [(c.heading, c.line_start) for c in expected]


async def test_periodic_reconcile_catches_what_no_watcher_saw(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(watch=False, reconcile_interval=0.2)
    write(memory_dir, "AGENT.md", "# Identity\nokapi\n")
    await eventually(client, "okapi", ["AGENT.md"])


async def test_watcher_restarts_when_the_tier_dir_is_replaced(
    sidecar_client: ClientFactory, memory_dir: Path, tmp_path: Path
) -> None:
    client = await sidecar_client(watch=True)
    moved = tmp_path / "memory-old"
    os.rename(memory_dir, moved)
    memory_dir.mkdir()
    write(memory_dir, "AGENT.md", "# Identity\nmeerkat\n")
    await eventually(client, "meerkat", ["AGENT.md"])
    # A search may heal the index before the watcher notices; the watcher still restarts on its own.

    async def restarted() -> bool:
        return bool((await (await client.get("/memory/status")).json())["watcher"]["restarts"] >= 1)

    await async_wait_until(restarted, timeout=60, interval=0.05, message="the watcher to restart on the replaced dir")
    write(memory_dir, "topics/after.md", "# After\nbilby\n")
    await eventually(client, "bilby", ["topics/after.md"])


class _Recorder:
    """What a watcher hands the reindex queue, in order: (path or None for the whole tier, origin)."""

    def __init__(self) -> None:
        self.items: list[tuple[str | None, str]] = []

    def put(self, tier: str, path: str | None, origin: str, written: tuple[int, ...] | None = None) -> int:
        self.items.append((path, origin))
        return len(self.items)

    def own_write(self, tier: str, path: str, key: tuple[int, ...]) -> bool:
        return False


async def test_a_replaced_dir_is_noticed_while_its_old_inode_sees_only_database_commits(tmp_path: Path) -> None:
    """`rm -rf tier && cp -r backup tier` under a running sidecar, the rm slowed down by a busy host:
    the watcher takes the markdown deletions while the dir is still there, then the dir goes. Its
    inode lives on while the sidecar holds its databases open (no deletion of the dir is reported,
    and the old watch stays), and every commit the sidecar still makes into them is a change the
    watcher filters out: a watch that checked the dir only when it delivered something never would."""
    import threading

    from sidecar.index.queue import ReindexQueue
    from sidecar.index.watcher import TierWatcher

    root = tmp_path / "tier"
    write(root, "AGENT.md", "# Identity\nold\n")
    write(root, "daily/2026-05-14.md", "# 2026-05-14\nold\n")
    database = (root / "journal.sqlite-wal").open("ab")  # as the sidecar's journal holds it
    queue = _Recorder()
    watcher = TierWatcher("agent", root, cast(ReindexQueue, queue), step_ms=15, debounce_ms=50, reconcile_s=0.0)
    watcher.start()
    committing = threading.Event()

    def commit() -> None:  # a commit every 20 ms, far more often than any check the watch could wait for
        while not committing.wait(0.02):
            database.write(b"\0")
            database.flush()

    committer = threading.Thread(target=commit, daemon=True)
    try:
        await async_wait_until(lambda: watcher.running)  # its watch is set up in the same step
        write(root, "daily/2026-05-14.md", "# 2026-05-14\nup\n")
        await async_wait_until(lambda: ("daily/2026-05-14.md", "watcher") in queue.items)
        committer.start()
        taken = len(queue.items)
        (root / "AGENT.md").unlink()
        shutil.rmtree(root / "daily")
        gone = {("AGENT.md", "watcher"), ("daily/2026-05-14.md", "watcher"), (None, "watcher-dir")}
        await async_wait_until(lambda: gone <= set(queue.items[taken:]), message="the deletions to be taken")
        shutil.rmtree(root)  # what is left: the database and the dir itself
        write(root, "AGENT.md", "# Identity\nrestored\n")
        await async_wait_until(lambda: watcher.restarts >= 1 and watcher.running, message="the watcher to restart")
        assert (None, "watcher-restart") in queue.items  # the restored files are reconciled
        taken = len(queue.items)
        write(root, "AGENT.md", "# Identity\nrestored, then edited\n")  # a shell write into the restored dir
        await async_wait_until(lambda: ("AGENT.md", "watcher") in queue.items[taken:])
    finally:
        committing.set()
        if committer.is_alive():
            committer.join()
        database.close()
        await watcher.stop()


async def test_a_dir_made_in_the_place_of_the_watched_one_at_once_is_a_new_dir(tmp_path: Path) -> None:
    """`rm -rf tier && mkdir tier` with nothing holding the old dir open: a filesystem that hands a
    freed inode number to the next new file (ext4 does, at once) gives the new dir the old one's
    number, and a watcher that told its dir by that number alone would watch nothing for ever."""
    from sidecar.index.queue import ReindexQueue
    from sidecar.index.watcher import TierWatcher

    root = tmp_path / "tier"
    write(root, "AGENT.md", "# Identity\nold\n")
    queue = _Recorder()
    watcher = TierWatcher("agent", root, cast(ReindexQueue, queue), step_ms=15, debounce_ms=50, reconcile_s=0.0)
    watcher.start()
    try:
        await async_wait_until(lambda: watcher.running)  # its watch is set up in the same step
        shutil.rmtree(root)
        write(root, "AGENT.md", "# Identity\nrestored\n")  # before the watcher's next look
        await async_wait_until(lambda: watcher.restarts >= 1 and watcher.running, message="the watcher to restart")
        assert (None, "watcher-restart") in queue.items
        taken = len(queue.items)
        write(root, "AGENT.md", "# Identity\nrestored, then edited\n")
        await async_wait_until(lambda: ("AGENT.md", "watcher") in queue.items[taken:])
    finally:
        await watcher.stop()


@pytest.mark.slow
async def test_writes_do_not_make_the_watcher_reconcile_the_tier(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    """Every index commit touches index.sqlite-wal; the watcher must not take that for a directory
    change and reconcile the whole tier after each write."""
    from tests.support.metrics import scrape as _scrape
    from tests.support.metrics import value as _value

    client = await sidecar_client(watch=True)
    # The watcher is up once it delivers a change: an in-place append by the shell, as an editor's.
    with (memory_dir / "AGENT.md").open("a") as agent:
        agent.write("- the watcher saw this aardwolf\n")
    await eventually(client, "aardwolf", ["AGENT.md"])
    before = _value(await _scrape(client), "memory_sidecar_reindex_seconds_count", tier="agent", kind="reconcile")
    for n in range(8):
        # An existing file: creating one also reports its directory, and that reconcile is wanted.
        resp = await client.post("/memory/write", json={"path": "daily/2026-05-14.md", "content": f"- note {n}\n"})
        assert resp.status == 201
        await asyncio.sleep(0.15)  # past the watcher's debounce, so each write's events arrive
    await eventually(client, "note", ["daily/2026-05-14.md"])
    await asyncio.sleep(0.5)  # room for a late reconcile the watcher may (wrongly) queue: what this counts
    after = _value(await _scrape(client), "memory_sidecar_reindex_seconds_count", tier="agent", kind="reconcile")
    # Before: one per write (9 for 8). The notify backend may still report the directory as added
    # once (seen here: 'daily', Change.added, on one of the eight), which is a reconcile we keep.
    assert after - before <= 1, f"{after - before} whole-tier reconciles for 8 writes"


_PARTS = st.sampled_from(["", ".", "..", "daily", "a.md", ".x.md.0a1b2c3d.tmp", "index.sqlite-wal", "ü.md", " b "])


@settings(max_examples=300, deadline=None)
@given(
    root=st.sampled_from(["/m/tier", "/m/tier/sub", "/"]),
    lead=st.sampled_from(["/m/tier", "/m/tier/", "/m/tier//", "/m/tierx", "/m", "/other", "/"]),
    parts=st.lists(_PARTS, max_size=4),
    trailing=st.sampled_from(["", "/", "/."]),
)
@example(root="/", lead="/", parts=["", ".."], trailing="")  # "//..": two slashes are a root of their own
def test_the_watchers_relative_path_is_what_pathlib_gives(
    root: str, lead: str, parts: list[str], trailing: str
) -> None:
    """The watcher cuts its paths relative to the tier dir as strings: the same answer as
    ``Path.relative_to`` (None where that raises), for paths with empty, ``.`` and ``..`` parts too."""
    from sidecar.index.queue import ReindexQueue
    from sidecar.index.watcher import TierWatcher

    watcher = TierWatcher("agent", Path(root), cast(ReindexQueue, None), step_ms=15, debounce_ms=200, reconcile_s=0.0)
    path = lead + "/".join(parts) + trailing
    try:
        expected: str | None = Path(path).relative_to(Path(root)).as_posix()
    except ValueError:
        expected = None
    assert watcher.relative(path) == expected
