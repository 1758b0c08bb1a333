"""Files that are not regular files, and a write thread that does not come back.

A FIFO named like memory used to hang ``GET /memory/read`` (and, written to, the one write
thread) forever, while ``/memory/tools`` still said healthy. Real FIFOs in a real tier dir, over a
real aiohttp server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from tests.support.lag import PathStopwatch
from tests.support.memory import ClientFactory
from tests.support.waiting import HANG_GUARD_S, async_wait_until


@pytest.fixture
def fifo(memory_dir: Path) -> Iterator[Path]:
    """``x.md``, a FIFO in the tier; whoever still waits on it is let go at the end."""
    path = memory_dir / "x.md"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):  # no reader waiting: ENXIO
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


async def within(seconds: float, request: Any) -> tuple[int, dict[str, Any]]:
    """The request's answer, given within ``seconds`` of the path's own time (the wall clock less
    what the host kept this thread, the loop that serves the sidecar too, waiting for a CPU); the
    wait itself is a hang guard."""
    watch = PathStopwatch()
    resp = await asyncio.wait_for(request, HANG_GUARD_S)
    own = watch.own()
    assert own < seconds, (own, watch.wall())
    return resp.status, await resp.json()


async def test_a_fifo_is_403_unsafe_path_for_read_and_write_and_writes_go_on(
    sidecar_client: ClientFactory, memory_dir: Path, fifo: Path
) -> None:
    client = await sidecar_client()
    status, body = await within(3, client.get("/memory/read", params={"path": "x.md"}))
    assert status == 403 and body["error"]["code"] == "unsafe_path"
    status, body = await within(3, client.post("/memory/write", json={"path": "x.md", "content": "into the pipe"}))
    assert status == 403 and body["error"]["code"] == "unsafe_path"
    status, body = await within(3, client.post("/memory/write", json={"path": "AGENT.md", "content": "- after"}))
    assert status == 201, body
    assert fifo.is_fifo() and (memory_dir / "AGENT.md").read_text().endswith("- after")
    status, body = await within(3, client.get("/memory/tools"))
    assert body["healthy"] is True, body


async def test_a_link_to_a_fifo_and_a_socket_are_403_too(
    sidecar_client: ClientFactory, memory_dir: Path, fifo: Path, tmp_path: Path
) -> None:
    import socket

    (memory_dir / "to-fifo.md").symlink_to(fifo)
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(memory_dir / "sock.md"))
        client = await sidecar_client()
        for path in ("to-fifo.md", "sock.md"):
            status, body = await within(3, client.get("/memory/read", params={"path": path}))
            assert status == 403 and body["error"]["code"] == "unsafe_path", path


async def test_a_stuck_write_thread_turns_the_sink_unhealthy_and_refuses_writes_at_once(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that does not come back: its file work waits on an event before it runs (a disk
    that hangs an fsync cannot be made for real here, and a FIFO no longer hangs a write)."""
    client = await sidecar_client()
    writes = client.server.app[SIDECAR].writes
    writes.stall_after = 0.2
    client.server.app[SIDECAR].health.ttl = 0.05
    release = threading.Event()
    real_work = writes._write_now

    def stuck(*args: Any) -> Any:
        release.wait()  # set at the end, however the test goes
        return real_work(*args)

    monkeypatch.setattr(writes, "_write_now", stuck)
    first = asyncio.ensure_future(client.post("/memory/write", json={"path": "AGENT.md", "content": "- stuck"}))
    try:

        async def unhealthy() -> dict[str, Any] | None:
            body: dict[str, Any] = await (await client.get("/memory/tools")).json()
            return None if body["healthy"] else body

        body = await async_wait_until(unhealthy, message="/memory/tools to say unhealthy")  # a hang guard
        assert "memory_write" not in body["tools"] and any("stalled" in r for r in body["reasons"]), body
        status, error = await within(2, client.post("/memory/write", json={"path": "AGENT.md", "content": "- x"}))
        assert status == 503 and error["error"]["code"] == "writes_stalled"
    finally:
        release.set()
    assert (await first).status == 201  # the stuck write itself lands once it comes back
    monkeypatch.undo()
    status, _ = await within(3, client.post("/memory/write", json={"path": "AGENT.md", "content": "- back"}))
    assert status == 201
    assert (memory_dir / "AGENT.md").read_text().endswith("- stuck\n- back")

    async def healthy() -> bool:
        return bool((await (await client.get("/memory/tools")).json())["healthy"])

    await async_wait_until(healthy, timeout=60, message="/memory/tools to say healthy again")  # a hang guard
