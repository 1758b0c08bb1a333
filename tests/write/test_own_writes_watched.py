"""The watcher sees every write the sidecar makes (a rename into the tier dir), but a file still as
that write left it is not queued again: the write queued it already, and a second apply of the same
bytes would only take the index's writer (a commit) from the next write. A change made after the
write (a shell append to the same file) is still queued, and searchable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from sidecar.write.durable import stat_key
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until

DAILY = "daily/2026-05-14.md"


async def searchable(client: Any, word: str, path: str) -> None:
    async def found() -> bool:
        resp = await client.post("/memory/search", json={"query": word, "limit": 20})
        return path in [r["path"] for r in (await resp.json())["results"]]

    await async_wait_until(found, timeout=60, interval=0.02, message=f"{word!r} searchable in {path}")  # a hang guard


def shell_append(memory_dir: Path, rel: str, line: str) -> None:
    with (memory_dir / rel).open("a") as fh:  # in place, no fsync, as `echo >>` does
        fh.write(line + "\n")


async def test_the_watcher_does_not_queue_the_sidecars_own_writes_again(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await sidecar_client(watch=True)
    queue = client.app[SIDECAR].queue
    queued: list[tuple[str | None, str]] = []
    real_put = queue.put

    def put(tier: str, path: str | None, origin: str, written: tuple[int, ...] | None = None) -> int:
        queued.append((path, origin))  # a record of what was queued; the real queue takes it
        return real_put(tier, path, origin, written)

    monkeypatch.setattr(queue, "put", put)
    shell_append(memory_dir, "AGENT.md", "- the watcher is up: aardwolf")
    await searchable(client, "aardwolf", "AGENT.md")
    for n in range(4):
        resp = await client.post("/memory/write", json={"path": DAILY, "content": f"- note numbat{n}x"})
        assert resp.status == 201
        # The watcher has handled the write's rename once it has handled a later change elsewhere.
        shell_append(memory_dir, "AGENT.md", f"- marker okapi{n}x")
        await searchable(client, f"okapi{n}x", "AGENT.md")
    shell_append(memory_dir, DAILY, "- a shell line quokka")
    await searchable(client, "quokka", DAILY)
    assert [origin for path, origin in queued if path == DAILY] == ["write"] * 4 + ["watcher"]
    assert [origin for path, origin in queued if path == "AGENT.md"] == ["watcher"] * 5


async def test_a_write_is_known_as_the_sidecars_own_before_the_loop_queues_it(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher may handle a write's rename before the event loop takes the write's answer and
    queues it (a loaded host): the write thread tells the queue the file is its own as soon as it is
    in place, so the watcher does not queue it again. Checked on the write thread, as it hands the
    write back: before the loop has queued it."""
    client = await sidecar_client()
    writes = client.app[SIDECAR].writes
    queue = writes.queue
    seen: list[bool] = []
    real = writes._write_durably

    def checked(root: Path, req: Any, queued: float, candidates: Any = None) -> dict[str, Any]:
        out = real(root, req, queued, candidates)
        st = os.stat(root / req.path, follow_symlinks=False)
        seen.append(queue.own_write(req.tier, req.path, stat_key(st)))  # the loop has not queued it yet
        return out

    monkeypatch.setattr(writes, "_write_durably", checked)
    for n in range(3):
        resp = await client.post("/memory/write", json={"path": DAILY, "content": f"- note numbat{n}x"})
        assert resp.status == 201
    assert seen == [True, True, True]
