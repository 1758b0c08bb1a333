"""Admission of hybrid searches (``sidecar.retrieval.admission``): with every slot of the search lane
held, writes and read-your-writes searches (``after_seq``) still complete while ordinary searches
wait their turn; a search that fails or whose client leaves gives its slot back."""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from sidecar.retrieval.admission import Admission, Lane
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.embedding import needs_model
from tests.support.memory import ClientFactory, write
from tests.support.procs import free_port
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0

NOTES = {
    "topics/work.md": "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n",
    "topics/household.md": "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n",
}


# -- the lane alone ------------------------------------------------------------------------------
async def test_a_lane_serves_waiters_in_order_of_arrival() -> None:
    lane = Lane(1)
    await lane.acquire()
    order: list[int] = []

    async def take(n: int) -> None:
        await lane.acquire()
        order.append(n)
        lane.release()

    waiters = [asyncio.create_task(take(n)) for n in range(4)]
    await async_wait_until(lambda: lane.waiting == 4)
    assert order == [] and lane.busy == 1
    lane.release()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*waiters)
    assert order == [0, 1, 2, 3]
    assert lane.busy == 0 and lane.waiting == 0 and lane.waited == 4


async def test_a_cancelled_waiter_leaves_the_queue_and_the_next_one_is_served() -> None:
    lane = Lane(1)
    await lane.acquire()
    first = asyncio.create_task(lane.acquire())
    second = asyncio.create_task(lane.acquire())
    await async_wait_until(lambda: lane.waiting == 2)
    first.cancel()
    await async_wait_until(first.done)
    assert lane.waiting == 1
    lane.release()
    async with asyncio.timeout(HANG_S):
        await second
    assert lane.busy == 1
    lane.release()
    assert lane.busy == 0


async def test_a_waiter_cancelled_as_its_slot_is_handed_over_passes_the_slot_on() -> None:
    lane = Lane(1)
    await lane.acquire()
    first = asyncio.create_task(lane.acquire())
    second = asyncio.create_task(lane.acquire())
    await async_wait_until(lambda: lane.waiting == 2)
    lane.release()  # hands the slot to ``first``, which has not run since
    first.cancel()  # ... and is cancelled before it takes it
    async with asyncio.timeout(HANG_S):
        await second
    assert first.cancelled()
    assert lane.busy == 1 and lane.waiting == 0
    lane.release()
    assert lane.busy == 0


async def test_a_holder_that_fails_or_is_cancelled_gives_its_slot_back() -> None:
    admission = Admission(1)

    async def fail() -> None:
        async with admission.admit():
            raise RuntimeError("the search failed")

    async def hold(entered: asyncio.Event) -> None:
        async with admission.admit():
            entered.set()
            await asyncio.Event().wait()

    with pytest.raises(RuntimeError):
        await fail()
    entered = asyncio.Event()
    holder = asyncio.create_task(hold(entered))
    async with asyncio.timeout(HANG_S):
        await entered.wait()
    waiter = asyncio.create_task(fail())
    await async_wait_until(lambda: admission.ordinary.waiting == 1)
    holder.cancel()  # a client disconnect cancelling the search that holds the slot
    async with asyncio.timeout(HANG_S):
        with pytest.raises(RuntimeError):
            await waiter
    assert admission.ordinary.busy == 0 and admission.ordinary.waiting == 0


async def test_the_two_lanes_do_not_wait_for_each_other() -> None:
    admission = Admission(1)
    await admission.ordinary.acquire()
    async with asyncio.timeout(HANG_S), admission.admit(priority=True) as wanted:
        assert wanted and admission.priority.busy == 1
    assert admission.priority.busy == 0 and admission.ordinary.busy == 1


async def test_a_search_whose_client_left_while_it_waited_is_told_so() -> None:
    admission = Admission(1)
    async with admission.admit(gone=lambda: True) as wanted:
        assert not wanted
    async with admission.admit(gone=lambda: False) as wanted:
        assert wanted
    assert admission.ordinary.busy == 0


def test_a_lane_has_at_least_one_slot() -> None:
    with pytest.raises(ValueError):
        Lane(0)
    assert Admission().ordinary.slots >= 1


# -- over HTTP, with the model -------------------------------------------------------------------
async def _hybrid(sidecar_client: ClientFactory, memory_dir: Path) -> tuple[TestClient[Any, Any], Admission]:
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    client = await sidecar_client(embedder="onnx")
    batcher = client.server.app[SIDECAR].batcher
    assert batcher is not None
    return client, batcher.admission


async def _fill(lane: Lane) -> int:
    """Hold every slot of ``lane`` (as searches in progress would); the number held."""
    for _ in range(lane.slots):
        await lane.acquire()
    return lane.slots


async def _search_count(client: TestClient[Any, Any] | aiohttp.ClientSession) -> float:
    text = await (await client.get("/metrics")).text()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("memory_sidecar_search_seconds_count")
    )


@needs_model
async def test_with_the_search_lane_full_a_write_and_its_after_seq_search_still_complete(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client, admission = await _hybrid(sidecar_client, memory_dir)
    held = await _fill(admission.ordinary)
    waiting = asyncio.create_task(client.post("/memory/search", json={"query": "deploy pipeline"}))
    await async_wait_until(lambda: admission.ordinary.waiting == 1)
    async with asyncio.timeout(HANG_S):
        wrote = await client.post(
            "/memory/write", json={"path": "topics/garden.md", "content": "- the quince tree flowers in April"}
        )
        assert wrote.status == 201, await wrote.text()
        seq = (await wrote.json())["seq"]
        found = await client.post("/memory/search", json={"query": "quince flowers", "after_seq": seq})
        assert found.status == 200, await found.text()
        body = await found.json()
    assert body["index"]["after_seq_met"] is True
    assert body["results"] and body["results"][0]["path"] == "topics/garden.md"
    assert not waiting.done() and admission.ordinary.waiting == 1  # the ordinary search still waits
    for _ in range(held):
        admission.ordinary.release()
    async with asyncio.timeout(HANG_S):
        resp = await waiting
    assert resp.status == 200
    assert (await resp.json())["results"][0]["path"] == "topics/work.md"
    assert admission.ordinary.busy == 0 and admission.priority.busy == 0


@needs_model
async def test_a_search_that_fails_holding_a_slot_gives_it_back(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client, admission = await _hybrid(sidecar_client, memory_dir)
    held = await _fill(admission.ordinary)
    # A solo sidecar has no crew tier: a search of both scopes fails (409) once it holds a slot.
    failing = asyncio.create_task(client.post("/memory/search", json={"query": "deploy", "scope": "both"}))
    await async_wait_until(lambda: admission.ordinary.waiting == 1)
    admission.ordinary.release()
    async with asyncio.timeout(HANG_S):
        resp = await failing
        assert resp.status == 409, await resp.text()
        assert admission.ordinary.busy == held - 1
        resp = await client.post("/memory/search", json={"query": "deploy pipeline"})
    assert resp.status == 200
    assert (await resp.json())["results"][0]["path"] == "topics/work.md"
    for _ in range(held - 1):
        admission.ordinary.release()
    assert admission.ordinary.busy == 0 and admission.ordinary.waiting == 0


@needs_model
async def test_a_waiting_search_whose_client_left_ends_without_searching(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    # Served as ``memory-sidecar serve`` serves it: a client that goes does not cancel its handler
    # (the test client's server would cancel it), so the search itself must see that it left.
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    port = free_port()
    runner = web.AppRunner(create_app(make_settings(embedder="onnx", port=port)), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        sc, server = runner.app[SIDECAR], runner.server
        assert sc.batcher is not None and server is not None
        lane = sc.batcher.admission.ordinary
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as client:
            ok = await client.post("/memory/search", json={"query": "deploy pipeline"})
            assert ok.status == 200
            searched = await _search_count(client)
            held = await _fill(lane)
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(_raw_search(port, b'{"query": "salmon"}'))
            await writer.drain()
            await async_wait_until(lambda: lane.waiting == 1)
            # Closed with a reset, as a client that gives up and goes: the server sees it at once.
            writer.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            writer.close()
            await async_wait_until(lambda: any(h.transport is None for h in server.connections))
            for _ in range(held):
                lane.release()
            await async_wait_until(lambda: lane.busy == 0 and lane.waiting == 0)
            assert await _search_count(client) == searched  # the search never ran
            resp = await client.post("/memory/search", json={"query": "salmon"})
            assert resp.status == 200 and await _search_count(client) == searched + 1
    finally:
        await runner.cleanup()


def _raw_search(port: int, body: bytes) -> bytes:
    head = (
        f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body
