"""The serve path's start-up pieces on real files: tiers opening before the app is built, the idle
memory release, and the glibc malloc calls (Linux/glibc only; elsewhere they report False)."""

from __future__ import annotations

import asyncio
import platform
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from sidecar.heap import release_free_memory, tune_malloc
from sidecar.http.state import SIDECAR
from sidecar.index.tier import Tier
from sidecar.server.app import IDLE_RELEASE, create_app
from sidecar.server.lifecycle import IdleRelease, OpeningTiers
from sidecar.server.serve import run
from sidecar.settings import Settings
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_malloc_calls_report_whether_they_apply() -> None:
    glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert tune_malloc() is glibc
    assert isinstance(release_free_memory(), bool)


async def test_opening_tiers_open_and_reconcile(memory_dir: Path, make_settings: Callable[..., Settings]) -> None:
    opening = OpeningTiers(make_settings())
    tiers = await opening.wait()
    try:
        assert list(tiers) == ["agent"]
        hits = await tiers["agent"].search("postgres", 5)
        assert hits, "the index is open and reconciled with the files before wait() returns"
    finally:
        await tiers["agent"].close()
        opening.release()


async def test_one_tier_failing_closes_the_others(
    memory_dir: Path, tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    crew = tmp_path / "crew"
    (crew / "index.sqlite").mkdir(parents=True)  # the crew index cannot be opened nor deleted
    settings = make_settings(role="lead", crew_dir=str(crew))
    opening = OpeningTiers(settings)
    with pytest.raises(OSError):
        await opening.wait()
    with pytest.raises(RuntimeError, match="not open"):
        _ = opening.tiers["agent"].index.writer  # the agent tier opened, then was closed again
    with pytest.raises(OSError):  # the dir locks were let go with them: the next try gets as far
        await OpeningTiers(settings).wait()


async def test_a_tier_dir_that_is_a_file_fails_before_anything_opens(
    memory_dir: Path, tmp_path: Path, make_settings: Callable[..., Settings]
) -> None:
    crew = tmp_path / "crew-is-a-file"
    crew.write_text("not a dir")
    with pytest.raises(OSError):
        OpeningTiers(make_settings(role="lead", crew_dir=str(crew)))
    opening = OpeningTiers(make_settings())  # the agent dir's lock was let go
    await (await opening.wait())["agent"].close()
    opening.release()


async def test_app_takes_tiers_that_started_opening_early(
    memory_dir: Path, make_settings: Callable[..., Settings], aiohttp_client: Any
) -> None:
    settings = make_settings()
    client = await aiohttp_client(create_app(settings, tiers=OpeningTiers(settings)))
    response = await client.post("/memory/search", json={"query": "postgres"})
    assert response.status == 200
    assert (await response.json())["results"]


async def test_idle_release_waits_for_quiet(memory_dir: Path) -> None:
    tier = Tier("agent", memory_dir)
    await tier.open()
    loop = asyncio.get_running_loop()
    started = loop.time()
    release = IdleRelease({"agent": tier}, after=0.5)
    try:
        await async_wait_until(lambda: release.releases == 1, message="the release armed at start")
        assert loop.time() - started >= 0.5
        # Activity every 0.05 s: never quiet for 0.5 s. A host kept busy by other work can hold
        # this loop for longer than that between two touches, and then it was quiet for 0.5 s: such
        # a round shows nothing and is done again. The claim is read on a round whose every gap,
        # from its first touch to the count, was under 0.5 s of the loop's clock.
        for _ in range(20):
            release.touch()
            touches = [loop.time()]
            await async_wait_until(lambda: release._task is None or release._task.done(), message="a release to end")
            before = release.releases
            for _ in range(10):
                await asyncio.sleep(0.05)
                release.touch()
                touches.append(loop.time())
            counted = release.releases
            if max(b - a for a, b in zip(touches, [*touches[1:], loop.time()], strict=True)) < 0.5:
                break
        else:
            pytest.fail("no round of touches without a gap of 0.5 s in 20: the loop was held each time")
        assert counted == before
        last_touch = touches[-1]
        await async_wait_until(lambda: release.releases == before + 1, message="a release 0.5 s after the last touch")
        assert loop.time() - last_touch >= 0.5
        assert release.releases == before + 1
        assert await tier.search("postgres", 5), "the writer's shrunk cache does not lose anything"
    finally:
        await release.aclose()
        await tier.close()


async def test_idle_release_fires_after_search_only_traffic(memory_dir: Path, sidecar_client: ClientFactory) -> None:
    """Only searches, through the real HTTP server (its on_response_prepare hook arms the release
    with every response): once they stop, the sidecar hands its memory back."""
    client = await sidecar_client()
    release = client.app[IDLE_RELEASE]
    await async_wait_until(lambda: release.releases >= 1, message="the release armed at start")
    for n in range(50):
        resp = await client.post("/memory/search", json={"query": "postgres" if n % 2 else "invoices"})
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["results"]
    after_traffic = release.releases
    await async_wait_until(
        lambda: release.releases > after_traffic,  # a hang guard: the release is due 0.25 s after the last answer
        message=f"an idle release after 50 searches (releases stayed at {after_traffic}; "
        "a failing release logs sidecar.release_failed)",
    )


async def test_the_idle_release_also_empties_the_journal_caches(
    memory_dir: Path, sidecar_client: ClientFactory
) -> None:
    client = await sidecar_client()
    release, journal = client.app[IDLE_RELEASE], client.app[SIDECAR].journal
    assert release.others == [
        journal.release_memory,
        client.app[SIDECAR].kg.graph.store.release_memory,
    ]  # and the graph's
    for n in range(20):
        resp = await client.post("/journal", json={"workspace_id": "w", "entry_type": "note", "summary": f"entry {n}"})
        assert resp.status == 201
    before = release.releases
    await async_wait_until(
        lambda: release.releases > before, timeout=60, message="an idle release after journal writes"
    )
    listed = await client.get("/journal", params={"workspace_id": "w", "limit": "50"})
    assert len((await listed.json())["entries"]) == 20, "the shrunk caches lose nothing"


async def test_run_answers_then_stops(memory_dir: Path, make_settings: Callable[..., Settings]) -> None:
    port = _free_port()
    settings = make_settings(port=port)
    stop = asyncio.Event()
    server = asyncio.create_task(run(settings, stop))
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:

        async def healthy() -> bool:
            return (await client.get("/healthz")).status_code == 200

        await async_wait_until(healthy, timeout=60, ignore=(httpx.TransportError,))
        response = await client.post("/memory/search", json={"query": "postgres"})
        assert response.status_code == 200 and response.json()["results"]
    stop.set()
    await asyncio.wait_for(server, 30)


async def test_run_on_a_taken_port_fails_and_closes_the_tiers(
    memory_dir: Path, make_settings: Callable[..., Settings]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = make_settings(port=taken.getsockname()[1])
        with pytest.raises(OSError):
            await asyncio.wait_for(run(settings, asyncio.Event()), 30)
    # The index was checkpointed and closed: no WAL left behind.
    assert not (memory_dir / "index.sqlite-wal").exists()
