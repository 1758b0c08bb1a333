"""Helpers for the knowledge graph's HTTP tests: write a file and wait until the graph read it,
call a /kg operation, the objects of an answer's facts."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR

__all__ = ["Client", "kg", "objects", "remember_file"]

Client = TestClient[Any, Any]


async def remember_file(client: Client, path: str, content: str) -> None:
    """Write a memory file and wait until the reindex queue applied it and ran its hooks (the graph
    has read it then)."""
    resp = await client.post("/memory/write", json={"path": path, "content": content})
    assert resp.status == 201, await resp.text()
    seq = (await resp.json())["seq"]
    found = await client.post("/memory/search", json={"query": "anything", "after_seq": seq})
    assert (await found.json())["index"]["after_seq_met"] is True
    assert await client.app[SIDECAR].queue.wait_hooked(seq, 30.0), "the queue's hooks never reached the write"


async def kg(client: Client, op: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    resp = await client.post(f"/kg/{op}", json=body)
    answer: dict[str, Any] = await resp.json()
    assert resp.status == status, answer
    return answer


def objects(answer: dict[str, Any]) -> list[str]:
    return [f["object"] for f in answer["facts"]]
