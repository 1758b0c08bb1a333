"""Ordinary searches with a query embedder run a few at once (``SearchService.admit``), over HTTP
with the real model: with every slot of the gate taken, a crowd of ordinary searches waits parked
at it while a write and its ``after_seq`` search complete; once the slots are free the crowd is
served in full, never more of it searching at once than the gate has slots, every answer with its
query's vector (the wait at the gate is not on the query's clock)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from tests.support.embedding import all_embedded, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0
CROWD = 12

NOTES = {
    "topics/work.md": "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n",
    "topics/household.md": "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n",
}


async def _embedded(client: TestClient[Any, Any]) -> bool:
    return all_embedded((await (await client.get("/memory/status")).json())["embedder"])


class _Counted:
    """``SearchService.search`` wrapped: how many run at once now, and the most seen."""

    def __init__(self, search: Callable[..., Any]) -> None:
        self.search, self.now, self.most = search, 0, 0

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await self.search(*args, **kwargs)
        finally:
            self.now -= 1


@needs_model
async def test_a_crowd_waits_at_the_gate_while_a_writes_after_seq_search_passes(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    client = await sidecar_client(embedder="onnx", after_seq_timeout=HANG_S)
    await async_wait_until(lambda: _embedded(client), timeout=HANG_S)
    service = client.server.app[SIDECAR].search
    gate = service.gate
    counted = _Counted(service.search)
    service.search = counted  # type: ignore[method-assign]
    done: list[str] = []

    async def search(label: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = await client.post("/memory/search", json=body)
        assert resp.status == 200, await resp.text()
        done.append(label)
        answer: dict[str, Any] = await resp.json()
        return answer

    async with AsyncExitStack() as slots:
        for _ in range(gate.slots):  # every slot taken, as running searches would
            await slots.enter_async_context(gate.admit())
        crowd = [
            asyncio.ensure_future(search(f"crowd {i}", {"query": f"deploy pipeline nightly {i}"})) for i in range(CROWD)
        ]
        await async_wait_until(lambda: gate.waiting == CROWD, timeout=HANG_S)
        async with asyncio.timeout(HANG_S):
            wrote = await client.post(
                "/memory/write", json={"path": "topics/garden.md", "content": "- the quince tree flowers in April"}
            )
            assert wrote.status == 201, await wrote.text()
            found = await search("own", {"query": "quince flowers", "after_seq": (await wrote.json())["seq"]})
        assert done == ["own"]  # the crowd still waits at the gate
        assert counted.most == 1
    async with asyncio.timeout(HANG_S):
        answers = await asyncio.gather(*crowd)
    assert found["index"]["after_seq_met"] is True
    assert found["results"] and found["results"][0]["path"] == "topics/garden.md"
    assert sorted(done) == sorted(["own", *(f"crowd {i}" for i in range(CROWD))])  # nothing starved
    assert 1 <= counted.most <= gate.slots
    assert all(a["results"] and a["results"][0]["path"] == "topics/work.md" for a in answers)
    assert not any(a.get("degraded") for a in [found, *answers])  # each with its query's vector
    assert gate.waiting == 0
