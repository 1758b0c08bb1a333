"""The watcher sees every write the sidecar makes (a rename into the tier dir), but a file still as
that write left it is not queued again: the write queued it already, and a second apply of the same
bytes would only take the index's writer (a commit) from the next write. A change made after the
write (a shell append to the same file) is still queued, and searchable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until

DAILY = "daily/2026-05-14.md"


async def searchable(client: Any, word: str, path: str) -> None:
    async def found() -> bool:
        resp = await client.post("/memory/search", json={"query": word, "limit": 20})
        return path in [r["path"] for r in (await resp.json())["results"]]

    await async_wait_until(found, timeout=10, interval=0.02, message=f"{word!r} searchable in {path}")


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
