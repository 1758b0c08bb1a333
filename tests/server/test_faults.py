"""Fault matrix: each fault is caused for real against a running sidecar, then convergence is
checked (every file's marker words find exactly that file; the index counts the files).

Full and read-only filesystems are real tmpfs mounts (root only; skipped otherwise). The index
is deleted and corrupted on disk under the running server; the watcher is broken by deleting the
tier dir and restoring it from a backup. Embedder and crew-lead faults are covered elsewhere.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from sidecar.http.state import SIDECAR
from sidecar.index.sync import IndexSync
from sidecar.index.tier_index import INDEX_NAME, REBUILDING_SUFFIX, TierIndex
from sidecar.retrieval.flags import CLEAN_FILES
from tests.support.memory import ClientFactory, write
from tests.support.waiting import HANG_GUARD_S, async_wait_until, wait_until

MARKER = re.compile(r"\bzq[a-z0-9]+\b")
SEED = {
    "AGENT.md": "# Identity\nI am zqagent, a review agent.\n\n## Facts\nUse postgres zqfacts.\n",
    "daily/2026-05-14.md": "# 2026-05-14\n\n## Incident\nThe worker ran out of memory zqdaily.\n",
}


def seed(root: Path, files: dict[str, str] = SEED) -> None:
    for rel, text in files.items():
        write(root, rel, text)


async def found(client: Any, query: str) -> set[str]:
    resp = await client.post("/memory/search", json={"query": query, "limit": 50})
    assert resp.status == 200, await resp.text()
    return {r["path"] for r in (await resp.json())["results"]}


async def assert_converged(client: Any, root: Path, gone: tuple[str, ...] = (), within: float = 60.0) -> None:
    """The index equals the files: every marker word finds exactly the files holding it, markers
    of removed content find nothing, and the index counts as many files as the dir holds.
    ``within`` is a hang guard: the convergence is waited for, and on a loaded host it takes longer."""
    files = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*.md") if p.is_file()}
    want = {
        m: {rel for rel, text in files.items() if m in MARKER.findall(text)}
        for t in files.values()
        for m in MARKER.findall(t)
    }
    want.update({m: set() for m in gone})
    assert all(MARKER.search(t) for t in files.values()), "every test file carries a marker"
    seen: dict[str, Any] = {}

    async def converged() -> bool:
        seen["got"] = {m: await found(client, m) for m in want}
        seen["status"] = await (await client.get("/memory/status")).json()
        return bool(seen["got"] == want and seen["status"]["files"] == len(files))

    await async_wait_until(
        converged,
        timeout=within,
        interval=0.05,
        message=lambda: (
            f"the index to equal the files: got {seen.get('got')}, want {want}, status {seen.get('status')}"
        ),
    )


async def post_write(client: Any, path: str, content: str, mode: str = "append") -> tuple[int, dict[str, Any]]:
    resp = await client.post("/memory/write", json={"path": path, "content": content, "mode": mode})
    return resp.status, await resp.json()


def temp_files(root: Path) -> list[str]:
    return [p.name for p in root.rglob(".*.tmp")]


# -- real mounts --------------------------------------------------------------------------------


def _mount_problem() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs"
    probe = Path("/tmp") / f"sidecar-mount-probe-{os.getpid()}"
    probe.mkdir(exist_ok=True)
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True)
        if done.returncode != 0:
            return f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}"
        subprocess.run(["umount", str(probe)], check=True)
        return None
    finally:
        probe.rmdir()


MOUNT_PROBLEM = _mount_problem()
needs_mount = pytest.mark.skipif(MOUNT_PROBLEM is not None, reason=MOUNT_PROBLEM or "")


@pytest.fixture
def tmpfs() -> Iterator[Callable[..., Path]]:
    """Mount a tmpfs of a given size on a directory; unmounted (lazily) at the end of the test."""
    mounted: list[Path] = []

    def mount(where: Path, size: str) -> Path:
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


def fill(root: Path, leave_pages: int = 0) -> Path:
    """Fill the filesystem under ``root`` with a hidden (never indexed) file; leave some pages."""
    filler = root / ".filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert exc.errno == 28, exc  # ENOSPC
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    if leave_pages:
        os.truncate(filler, os.path.getsize(filler) // 4096 * 4096 - leave_pages * 4096)
    return filler


async def write_on_the_last_page(client: Any, root: Path) -> tuple[Path, dict[str, Any]]:
    """Fill the filesystem but one page, then write ``fresh.md`` into it: room for the file, none
    for the index's WAL to grow. The start's own writes (the graph's first reading of the files,
    the journal's index) may take that page first: then fill again once they had room."""
    for _ in range(20):
        filler = fill(root, leave_pages=1)
        status, body = await post_write(client, "fresh.md", "# Fresh\nzqfresh", mode="replace")
        if status == 201:
            return filler, body
        filler.unlink()
        await asyncio.sleep(0.25)
    pytest.skip("could not reach the state: the file write itself never fitted")


# 256k is too small: the tier index and the episodic journal (each with its WAL) take ~300 KB.
TIER_FS = "1m"


@needs_mount
async def test_full_filesystem(tmpfs: Callable[..., Path], sidecar_client: ClientFactory, tmp_path: Path) -> None:
    root = tmpfs(tmp_path / "tier", TIER_FS)
    seed(root)
    client = await sidecar_client(memory_dir=root)
    filler = fill(root)
    before = (root / "AGENT.md").read_bytes()
    for path in ("AGENT.md", "daily/2026-05-15.md"):
        status, body = await post_write(client, path, "zqlost " * 200)
        assert status == 500 and body["error"]["code"] == "no_space", body
        assert "nothing was written" in body["error"]["message"]
    assert (root / "AGENT.md").read_bytes() == before and not (root / "daily/2026-05-15.md").exists()
    # A refused write leaves no temp file by the time it answers; the flag cache may be saving its
    # list of clean files beside it (a temp file of its own, removed when the full disk refuses it).
    assert [name for name in temp_files(root) if not name.startswith(CLEAN_FILES)] == []
    await async_wait_until(lambda: temp_files(root) == [], message=lambda: f"temp files left: {temp_files(root)}")
    assert await found(client, "zqagent") == {"AGENT.md"}  # searches still work
    assert (await client.get("/healthz")).status == 200
    filler.unlink()
    status, body = await post_write(client, "daily/2026-05-15.md", "- zqafter the disk was freed")
    assert status == 201, body
    await assert_converged(client, root, gone=("zqlost",))


@needs_mount
async def test_read_only_filesystem(tmpfs: Callable[..., Path], sidecar_client: ClientFactory, tmp_path: Path) -> None:
    """daily/ is its own tmpfs, remounted read-only while the server runs. (The whole tier cannot
    be: remount,ro fails with EBUSY while the index is open for writing, as it always is.)"""
    root = tmp_path / "tier"
    daily = tmpfs(root / "daily", "256k")
    seed(root)
    client = await sidecar_client(memory_dir=root)
    remount(daily, "ro")
    before = (daily / "2026-05-14.md").read_bytes()
    status, body = await post_write(client, "daily/2026-05-14.md", "- zqrefused")
    assert status == 500 and body["error"]["code"] == "not_writable", body
    assert (daily / "2026-05-14.md").read_bytes() == before
    assert await found(client, "zqdaily") == {"daily/2026-05-14.md"}
    status, body = await post_write(client, "AGENT.md", "- zqstillwritable")  # the rest of the tier is fine
    assert status == 201, body
    remount(daily, "rw")
    status, body = await post_write(client, "daily/2026-05-14.md", "- zqwritableagain")
    assert status == 201, body
    await assert_converged(client, root, gone=("zqrefused",))


@needs_mount
async def test_index_apply_on_a_full_disk_backs_off(
    tmpfs: Callable[..., Path], sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmpfs(tmp_path / "tier", TIER_FS)
    seed(root)
    client = await sidecar_client(memory_dir=root)
    filler, _ = await write_on_the_last_page(client, root)
    with capture_logs() as logs:
        await asyncio.sleep(0.5)  # a fixed window: the back-off is counted as failed applies in 0.5 s
    errors = (await (await client.get("/memory/status")).json())["queue"]["errors"]
    filler.unlink()
    await assert_converged(client, root)
    if errors == 0:
        pytest.skip("could not reach the state: the index found room for the write")
    assert errors < 20, f"{errors} failed index applies in 0.5 s"
    # Each failure is logged as what it was, not as the rollback SQLite had already done.
    failed = [e["error"] for e in logs if e["event"] == "queue.apply_failed"]
    assert failed and all("disk is full" in error for error in failed), failed


@needs_mount
async def test_the_graph_reads_the_files_once_the_disk_has_room(
    tmpfs: Callable[..., Path], sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmpfs(tmp_path / "tier", TIER_FS)
    seed(root, {**SEED, "topics/stack.md": "# Stack\nThe ledger service uses CockroachDB.\n"})
    with capture_logs() as logs:
        client = await sidecar_client(memory_dir=root)
        filler = fill(root)  # on the event loop: before the graph's first reading of the files can write
        # The graph's first reading ends one way or the other: failed on the full disk, or done.
        await async_wait_until(
            lambda: any(e["event"] in ("kg.backfill_failed", "kg.backfilled") for e in logs),
            message="the graph's first reading of the files to end",
        )
    filler.unlink()
    if not [e for e in logs if e["event"] == "kg.backfill_failed"]:
        pytest.skip("could not reach the state: the graph read the files before the disk was full")

    async def known() -> bool:
        resp = await client.post("/kg/query", json={"entity": "ledger service", "predicate": "uses"})
        return resp.status == 200 and [f["object"] for f in (await resp.json())["facts"]] == ["CockroachDB"]

    await async_wait_until(known, timeout=60, message="the graph to read topics/stack.md once the disk had room")


@needs_mount
async def test_after_seq_is_not_met_by_a_failed_apply(
    tmpfs: Callable[..., Path], sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmpfs(tmp_path / "tier", TIER_FS)
    seed(root)
    client = await sidecar_client(memory_dir=root, after_seq_timeout=1.0)  # the shipped wait: it is not met
    filler, body = await write_on_the_last_page(client, root)
    resp = await client.post("/memory/search", json={"query": "zqfresh", "after_seq": body["seq"]})
    out = await resp.json()
    filler.unlink()
    assert not out["index"]["after_seq_met"] or [r["path"] for r in out["results"]] == ["fresh.md"], out


# -- the index file under a running server -------------------------------------------------------


def index_files(root: Path) -> list[Path]:
    return [root / f"index.sqlite{suffix}" for suffix in ("", "-wal", "-shm")]


async def test_index_deleted_while_running(sidecar_client: ClientFactory, memory_dir: Path, tmp_path: Path) -> None:
    root = tmp_path / "tier"
    seed(root)
    client = await sidecar_client(memory_dir=root, reconcile_interval=0.3)
    for path in index_files(root):
        path.unlink()
    assert await found(client, "zqagent") == {"AGENT.md"}  # answered at once
    # Recreated by the next periodic reconcile.
    await async_wait_until((root / "index.sqlite").exists, timeout=60, message="index.sqlite to come back")
    status, _ = await post_write(client, "topics/new.md", "# New\nzqnew", mode="replace")
    assert status == 201
    await assert_converged(client, root)
    integrity = (await (await client.get("/memory/status")).json())["integrity"]
    assert integrity == "rebuilt: index file was deleted or replaced"


async def test_a_search_while_a_deleted_index_is_rebuilt_answers_from_the_old_one(
    sidecar_client: ClientFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tier"
    seed(root)
    client = await sidecar_client(memory_dir=root)  # no periodic reconcile: the test runs the one
    tier = client.app[SIDECAR].tiers["agent"]
    assert await found(client, "zqagent") == {"AGENT.md"}
    held, release = threading.Event(), threading.Event()
    index_file = IndexSync._index_file

    def holding(sync: IndexSync, *args: Any) -> str | None:
        held.set()  # the rebuild is under way, the new index half made
        release.wait(60)
        return index_file(sync, *args)

    monkeypatch.setattr(IndexSync, "_index_file", holding)
    for path in index_files(root):
        path.unlink()
    rebuild = asyncio.ensure_future(tier.reconcile())
    try:
        await async_wait_until(held.is_set, timeout=60, message="the rebuild to start")
        assert await found(client, "zqagent") == {"AGENT.md"}  # the old index answers
    finally:
        release.set()
        await rebuild
    assert await found(client, "zqagent") == {"AGENT.md"}
    assert (await (await client.get("/memory/status")).json())["integrity"] == (
        "rebuilt: index file was deleted or replaced"
    )
    await assert_converged(client, root)


@needs_mount
def test_a_lost_index_on_a_disk_without_room_for_two_is_rebuilt_in_its_place(
    tmpfs: Callable[..., Path], tmp_path: Path
) -> None:
    root = tmpfs(tmp_path / "tier", TIER_FS)
    words = " ".join(f"zqword{n}" for n in range(300))
    seed(root, {f"topics/t{i}.md": f"# Topic {i}\nzqtopic{i} {words}\n" for i in range(12)})
    index = TierIndex(root)
    index.open()
    try:
        expected = sorted(h.path for h in index.search("zqword7", 50))
        size = os.path.getsize(root / INDEX_NAME)
        # Room for a new index file and its WAL once the old one is gone, not beside it.
        fill(root, leave_pages=size * 3 // 2 // 4096)
        for path in index_files(root):
            path.unlink()  # the old file's pages stay taken while its connections are open
        assert index.recover_if_lost() is True
        assert sorted(h.path for h in index.search("zqword7", 50)) == expected
        assert index.integrity == "rebuilt: index file was deleted or replaced"
        assert not list(root.glob(f"{INDEX_NAME}{REBUILDING_SUFFIX}*"))
    finally:
        index.close()


async def test_index_deleted_comes_back_without_a_periodic_reconcile(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "tier"
    seed(root)
    client = await sidecar_client(memory_dir=root)  # reconcile_interval 0, watcher off
    # Open a connection on every reader thread first, as a server that has been serving has.
    await asyncio.gather(*(found(client, "zqagent") for _ in range(8)))
    for path in index_files(root):
        path.unlink()
    status, body = await post_write(client, "topics/new.md", "# New\nzqnew", mode="replace")
    assert status == 201
    await client.post("/memory/search", json={"query": "zqnew", "after_seq": body["seq"]})
    assert (root / "index.sqlite").exists()


def garble(path: Path, keep: int = 0) -> None:
    size = path.stat().st_size
    with path.open("r+b") as fh:
        fh.seek(keep)
        fh.write(os.urandom(max(0, size - keep)))
        fh.flush()
        os.fsync(fh.fileno())


async def test_index_corrupted_while_running(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    root = tmp_path / "tier"
    seed(root)
    client = await sidecar_client(memory_dir=root)
    # Move every page into the main file first (the server checkpoints on its own only past 1000
    # WAL pages), so the garbage is what gets read; this is the one outside connection we open.
    with sqlite3.connect(root / "index.sqlite") as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    garble(root / "index.sqlite")
    assert await found(client, "zqagent") == {"AGENT.md"}
    status, _ = await post_write(client, "topics/new.md", "# New\nzqnew", mode="replace")
    assert status == 201
    await assert_converged(client, root)
    assert (await (await client.get("/memory/status")).json())["integrity"].startswith("rebuilt: ")


async def test_index_and_wal_corrupted_while_running(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    root = tmp_path / "tier"
    seed(root)
    client = await sidecar_client(memory_dir=root)
    garble(root / "index.sqlite")
    garble(root / "index.sqlite-wal", keep=100)
    status, body = await post_write(client, "topics/new.md", "# New\nzqnew", mode="replace")
    assert status == 201
    queue = client.app[SIDECAR].queue  # the write's index apply has run into the damage (or through it)
    await async_wait_until(lambda: queue.indexed_seq >= body["seq"], timeout=60)  # a hang guard
    resp = await client.post("/memory/search", json={"query": "zqagent"})
    assert resp.status == 200, await resp.text()
    assert (await client.get("/memory/status")).status == 200
    await assert_converged(client, root)


# -- the watcher ------------------------------------------------------------------------------


def remove_tier_dir(root: Path) -> None:
    """`rm -rf ~/.memory`, run again until the dir is gone. The running server may reopen its journal
    or rebuild its index (files made in the dir) between rm's unlinks and its rmdir, which then
    fails ("Directory not empty") and leaves the dir in place: not replaced, so not a restart."""

    def removed() -> bool:
        shutil.rmtree(root, ignore_errors=True)
        return not root.exists()

    wait_until(removed, interval=0.0, message=f"{root} to be removed")


async def replace_tier_dir(root: Path, backup: Path) -> None:
    """What `rm -rf ~/.memory && cp -r backup ~/.memory` does under the running server."""
    remove_tier_dir(root)
    await asyncio.sleep(0.05)  # the gap between the two commands, in which the server sees no dir
    shutil.copytree(backup, root, dirs_exist_ok=True)


async def watcher_restarted(client: Any, within: float = HANG_GUARD_S) -> dict[str, Any]:
    """Wait until the watcher has restarted and runs again. A read during the restart can be a 500
    (pinned by test_searches_while_the_tier_dir_is_replaced_never_fail), so wait before reading."""

    async def restarted() -> dict[str, Any] | None:
        resp = await client.get("/memory/status")
        watcher: dict[str, Any] = (await resp.json()).get("watcher") or {} if resp.status == 200 else {}
        return watcher if watcher.get("restarts", 0) >= 1 and watcher.get("running") else None

    watcher: dict[str, Any] | None = await async_wait_until(
        restarted, timeout=within, interval=0.05, message="the watcher to restart and run"
    )
    assert watcher is not None
    return watcher


async def test_watcher_survives_the_tier_dir_being_deleted_and_restored(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "tier"
    seed(root)
    backup = tmp_path / "backup"
    seed(backup, {"AGENT.md": "# Identity\nzqrestored agent\n", "topics/t.md": "# T\nzqtopic\n"})
    client = await sidecar_client(memory_dir=root, watch=True)
    await assert_converged(client, root)
    await replace_tier_dir(root, backup)
    await watcher_restarted(client)
    await assert_converged(client, root, gone=("zqagent", "zqdaily"), within=60)
    write(root, "daily/2026-05-16.md", "# 2026-05-16\nzqshell\n")  # a shell write, seen by the new watch
    await assert_converged(client, root, within=60)


async def test_journal_comes_back_after_the_tier_dir_is_restored(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    root = tmp_path / "tier"
    seed(root)
    backup = tmp_path / "backup"
    seed(backup, {"AGENT.md": "# Identity\nzqrestored\n"})
    client = await sidecar_client(memory_dir=root, watch=True)
    await replace_tier_dir(root, backup)
    await watcher_restarted(client)
    await assert_converged(client, root, gone=("zqagent",), within=60)
    status, body = await post_write(client, "AGENT.md", "- zqjournaled")  # memory.updated goes to the journal
    assert status == 201
    await client.post("/memory/search", json={"query": "zqjournaled", "after_seq": body["seq"]})
    assert await client.app[SIDECAR].queue.wait_hooked(body["seq"], 60.0)  # the journal's entry follows the index
    assert (root / "journal.sqlite").exists()


@pytest.mark.slow
async def test_searches_while_the_tier_dir_is_replaced_never_fail(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "tier"
    seed(root)
    backup = tmp_path / "backup"
    seed(backup, {"AGENT.md": "# Identity\nzqrestored\n"})
    client = await sidecar_client(memory_dir=root, watch=True)
    failures: list[str] = []
    for _ in range(5):
        await replace_tier_dir(root, backup)
        until = time.monotonic() + 0.6
        while time.monotonic() < until:
            resp = await client.post("/memory/search", json={"query": "zqrestored"})
            if resp.status >= 500:
                failures.append(await resp.text())
            await asyncio.sleep(0.01)  # searches paced through the 0.6 s after each replacement
    await assert_converged(client, root, gone=("zqagent", "zqdaily"))
    assert failures == [], failures
