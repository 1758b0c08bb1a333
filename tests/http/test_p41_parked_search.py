"""Ordinary searches park while urgent work is in flight (``sidecar.retrieval.priority.calm``), over
HTTP with the real model: they wait off the loop's ready queue without starting a stage, a write and
its ``after_seq`` search pass them, and once no urgent work is pending every parked search answers
in full, with its query's vector, however long it was parked (the hybrid's query timeout starts
after the park)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from sidecar.retrieval import priority
from tests.support.embedding import all_embedded, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0
CROWD = 4  # ordinary searches parked
#: The query timeout here: the crowd stays parked past it (a timer on the loop says when).
TIMEOUT_S = 3.0

NOTES = {
    "topics/work.md": "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n",
    "topics/household.md": "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n",
}


@needs_model
async def test_parked_searches_let_a_write_pass_then_answer_in_full(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    monkeypatch.setattr(priority, "MAX_PARK_S", HANG_S)  # parked until released, not until a cap
    client = await sidecar_client(embedder="onnx", after_seq_timeout=HANG_S)
    hybrid = client.server.app[SIDECAR].hybrid
    hybrid.query_timeout = TIMEOUT_S
    await async_wait_until(lambda: _embedded(client), timeout=HANG_S)  # the chunks' vectors: the crowd has a dense leg
    loop = asyncio.get_running_loop()
    done: list[str] = []

    async def search(label: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = await client.post("/memory/search", json=body)
        assert resp.status == 200, await resp.text()
        done.append(label)
        answer: dict[str, Any] = await resp.json()
        return answer

    urgent = priority.hold()  # urgent work in flight, as an agent's write waiting to be searchable
    try:
        crowd = [
            asyncio.ensure_future(search(f"crowd {i}", {"query": f"deploy pipeline nightly {i}"})) for i in range(CROWD)
        ]
        await async_wait_until(lambda: priority.parked() == CROWD, timeout=HANG_S)
        past_timeout = asyncio.Event()
        loop.call_later(TIMEOUT_S * 1.5, past_timeout.set)  # parked longer than a query may take
        async with asyncio.timeout(HANG_S):
            wrote = await client.post(
                "/memory/write", json={"path": "topics/garden.md", "content": "- the quince tree flowers in April"}
            )
            assert wrote.status == 201, await wrote.text()
            found = await search("own", {"query": "quince flowers", "after_seq": (await wrote.json())["seq"]})
        assert done == ["own"]  # the write's search answered while every ordinary search stayed parked
        assert priority.parked() == CROWD
        async with asyncio.timeout(HANG_S):
            await past_timeout.wait()
        assert priority.parked() == CROWD and len(done) == 1
    finally:
        urgent.release()
    async with asyncio.timeout(HANG_S):
        answers = await asyncio.gather(*crowd)
    assert found["index"]["after_seq_met"] is True
    assert found["results"] and found["results"][0]["path"] == "topics/garden.md"
    assert sorted(done) == sorted(["own", *(f"crowd {i}" for i in range(CROWD))])
    assert all(a["results"] and a["results"][0]["path"] == "topics/work.md" for a in answers)
    assert not any(a.get("degraded") for a in [found, *answers])  # each with its query's vector
    assert priority.parked() == 0 and priority.urgent_pending() == 0


async def _embedded(client: Any) -> bool:
    return all_embedded((await (await client.get("/memory/status")).json())["embedder"])
