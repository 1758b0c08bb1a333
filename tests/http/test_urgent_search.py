"""A search waiting for a write (``after_seq``) runs its steps off the event loop before ordinary
searches' (``sidecar.retrieval.priority``), over HTTP with the real model: with every thread of the
loop's default executor busy and a crowd of ordinary searches queued for them, a write and its
``after_seq`` search still complete once one thread is free, each of the search's steps started
ahead of every step of the crowd still queued, and the crowd is then served in full.

What is asserted is the order in which the executor starts calls, read where it takes them from its
lanes: the order in which answers come back also depends on how the host shares its cores among the
threads running them, which a busy host decides."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from sidecar.retrieval import priority
from tests.support.embedding import all_embedded, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0
CROWD = 24  # ordinary searches queued before the write's own

NOTES = {
    "topics/work.md": "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n",
    "topics/household.md": "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n",
}


async def _embedded(client: TestClient[Any, Any]) -> bool:
    return all_embedded((await (await client.get("/memory/status")).json())["embedder"])


class _Lane(deque[Any]):
    """One of the executor's lanes, telling ``log`` (in the order the executor's lock gives) each
    call queued and each call taken to start."""

    def __init__(self, urgent: bool, log: list[tuple[str, bool]]) -> None:
        super().__init__()
        self.urgent, self.log = urgent, log

    def append(self, item: Any) -> None:
        self.log.append(("queued", self.urgent))
        super().append(item)

    def popleft(self) -> Any:
        item = super().popleft()
        self.log.append(("started", self.urgent))
        return item


def _passes(log: list[tuple[str, bool]]) -> tuple[int, int]:
    """From a lanes' log: (ordinary calls started while an urgent one was queued, urgent calls
    started while an ordinary one was queued)."""
    waiting = {True: 0, False: 0}
    wrong = ahead = 0
    for what, urgent in log:
        if what == "queued":
            waiting[urgent] += 1
            continue
        waiting[urgent] -= 1
        if not urgent and waiting[True]:
            wrong += 1
        if urgent and waiting[False]:
            ahead += 1
    return wrong, ahead


def _hold_threads(
    loop: asyncio.AbstractEventLoop, first: threading.Event, rest: threading.Event
) -> tuple[list[asyncio.Future[bool]], int]:
    """Occupy every thread of the loop's default executor, as running steps would: one until
    ``first`` is set, the others until ``rest`` is; the calls, and how many threads that is."""
    workers = priority.default_workers()
    started = threading.Semaphore(0)

    def held(gate: threading.Event) -> bool:
        started.release()
        return gate.wait(HANG_S)

    calls = [loop.run_in_executor(None, held, first if i == 0 else rest) for i in range(workers)]
    for _ in range(workers):
        assert started.acquire(timeout=HANG_S)
    return calls, workers


@needs_model
async def test_a_writes_after_seq_search_passes_a_crowd_queued_for_the_threads(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    client = await sidecar_client(embedder="onnx", after_seq_timeout=HANG_S)
    # A query's model run may wait for the held threads longer than a search waits for it (then
    # it answers with BM25 alone): here the order is the question, not that limit.
    client.server.app[SIDECAR].hybrid.query_timeout = HANG_S
    # The crowd is let through the search gate (``SearchService.slots``) so that it queues for the
    # threads: here the executor's order is the question, not how many search at once.
    client.server.app[SIDECAR].search.slots = CROWD
    await async_wait_until(lambda: _embedded(client), timeout=HANG_S)
    loop = asyncio.get_running_loop()
    executor = priority.install(loop)  # the one the sidecar installed
    log: list[tuple[str, bool]] = []
    with executor._lanes_lock:  # read where calls start from here on, with what is queued now carried over
        lanes = _Lane(True, log), _Lane(False, log)
        for lane, queued in zip(lanes, (executor._urgent, executor._ordinary), strict=True):
            for item in queued:
                lane.append(item)
        executor._urgent, executor._ordinary = lanes
    # One thread is let go while the search waits, the others once it has answered: the search's
    # steps and the crowd's then take turns on that one thread, so the crowd is still queued when
    # each of the search's steps is (on a host's whim, many threads would start the whole crowd
    # while the search's answer is on its way back to the loop between two of its steps).
    first, rest = threading.Event(), threading.Event()
    held, _ = _hold_threads(loop, first, rest)
    done: list[str] = []

    async def search(label: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = await client.post("/memory/search", json=body)
        assert resp.status == 200, await resp.text()
        done.append(label)
        answer: dict[str, Any] = await resp.json()
        return answer

    try:
        crowd = [
            asyncio.ensure_future(search(f"crowd {i}", {"query": f"deploy pipeline nightly {i}"})) for i in range(CROWD)
        ]
        await async_wait_until(lambda: executor.waiting()[1] >= CROWD, timeout=HANG_S)  # each its query's model run
        async with asyncio.timeout(HANG_S):
            wrote = await client.post(
                "/memory/write", json={"path": "topics/garden.md", "content": "- the quince tree flowers in April"}
            )
        assert wrote.status == 201, await wrote.text()
        seq = (await wrote.json())["seq"]
        own = asyncio.ensure_future(search("own", {"query": "quince flowers", "after_seq": seq}))
        await async_wait_until(lambda: sum(executor.waiting()) > CROWD, timeout=HANG_S)  # its model run too
        assert not done
        first.set()
        async with asyncio.timeout(HANG_S):
            found = await own
    finally:
        first.set()
        rest.set()
    async with asyncio.timeout(HANG_S):
        answers = await asyncio.gather(*crowd)
        await asyncio.gather(*held)
    assert found["index"]["after_seq_met"] is True
    assert found["results"] and found["results"][0]["path"] == "topics/garden.md"
    wrong, ahead = _passes(log)
    assert wrong == 0, log  # no step of the crowd started while one of the search's waited
    assert ahead >= 2, log  # its model run and what follows went ahead of crowd steps queued before them
    assert sorted(done) == sorted(["own", *(f"crowd {i}" for i in range(CROWD))])  # nothing starved
    assert all(a["results"] and a["results"][0]["path"] == "topics/work.md" for a in answers)
    assert not any(a.get("degraded") for a in [found, *answers])  # each with its query's vector
    await async_wait_until(lambda: executor.waiting() == (0, 0), timeout=HANG_S)  # nothing left queued
