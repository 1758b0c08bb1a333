"""The memory block's ``top_score`` is one measure whether the best match is a ranked chunk of a
memory file or a recalled journal memory: the share of the query's content words it holds
(``palace.relevance``), never the recall's own score (a cosine, or a rank fusion score a few
hundredths wide), over HTTP on a real sidecar."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.palace.relevance import Relevance
from tests.support.memory import ClientFactory

MEMORY = "The zeppelin hangar opens at dawn."


async def _block(client: TestClient[Any, Any], query: str) -> dict[str, Any]:
    resp = await client.post("/memory/block", json={"query": query, "recall": True})
    answer: dict[str, Any] = await resp.json()
    assert resp.status == 200, answer
    return answer


async def test_a_recalled_memory_holding_every_query_word_scores_as_a_chunk_would(
    sidecar_client: ClientFactory,
) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/remember", json={"content": MEMORY})
    assert resp.status == 201, await resp.text()
    whole = await _block(client, "zeppelin hangar dawn")
    assert whole["recalled"] and whole["match_count"] == 1, whole
    assert whole["top_score"] == 1.0  # every content word of the query: as a chunk holding them all
    # Half the query's words: the share of them, weighted as the block weighs a chunk's.
    query = "zeppelin hangar marmalade quartz"
    half = await _block(client, query)
    assert half["recalled"] and half["match_count"] == 1, half
    assert half["top_score"] == Relevance(query, [MEMORY]).score(MEMORY) < 0.5
    # A memory file holding every word of the query scores the same as the recalled memory did.
    resp = await client.post(
        "/memory/write", json={"path": "topics/hangar.md", "content": "# Hangar\nThe zeppelin hangar opens at dawn.\n"}
    )
    assert resp.status == 201, await resp.text()
    seq = (await resp.json())["seq"]
    await client.post("/memory/search", json={"query": "zeppelin", "after_seq": seq})
    both = await _block(client, "zeppelin hangar dawn")
    assert both["top_score"] == 1.0 and both["match_count"] >= 2, both
