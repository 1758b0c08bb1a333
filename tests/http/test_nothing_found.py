"""A query nothing in memory answers gets an empty answer, on every path a search takes, with the
in-process embedding model on (the default configuration): HTTP for the agent and the crew tier,
MCP, and the memory block's ranking. Every hit an answer does hold has a positive score.
(The CLI, BM25 only, is covered in tests/test_cli.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.support.embedding import all_embedded, needs_model
from tests.support.memory import ClientFactory, write
from tests.support.waiting import async_wait_until

pytestmark = needs_model

NONSENSE = ["qwxzyv", "zzkqxv blorptang", "fhqwhgads vrrmpt", "asdfjkl qwpoeiru"]
NOTES = {
    "topics/household.md": "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n\n"
    "The boiler service is booked for the first Monday of every month.\n",
    "topics/work.md": "# Work\n\nThe deploy pipeline runs nightly once the smoke tests are green.\n\n"
    "Use PostgreSQL 16 for every new database.\n",
    "topics/travel.md": "# Travel\n\nBooked the train to Lisbon for the conference in March.\n",
    "daily/2026-05-15.md": "# 2026-05-15\n\n## Garden\n\nThe tomatoes need watering twice a day in July.\n",
}


async def embedded(client: TestClient[Any, Any], tier: str = "agent") -> None:
    """Wait until every chunk of the tier has its vector: dense scoring is then in every search."""

    async def done() -> bool:
        status = await (await client.get("/memory/status", params={"scope": tier})).json()
        embedder = status["embedder"]
        return all_embedded(embedder)

    await async_wait_until(done, timeout=60, message=f"the {tier} tier's vectors were never all stored")


async def search(client: TestClient[Any, Any], query: str, **extra: Any) -> dict[str, Any]:
    resp = await client.post("/memory/search", json={"query": query, **extra})
    assert resp.status == 200, await resp.text()
    body: dict[str, Any] = await resp.json()
    return body


@pytest.fixture
def notes(memory_dir: Path) -> Path:
    for rel, text in NOTES.items():
        write(memory_dir, rel, text)
    return memory_dir


async def test_nonsense_returns_nothing_over_http(sidecar_client: ClientFactory, notes: Path) -> None:
    client = await sidecar_client(embedder="onnx")
    await embedded(client)
    for query in NONSENSE:
        body = await search(client, query)
        assert body["results"] == [], (query, body["results"])
        assert "degraded" not in body  # dense did take part: it found nothing above its floor
    real = await search(client, "what does the cat eat")
    assert real["results"], "a question the notes answer must still find them"
    assert real["results"][0]["path"] == "topics/household.md"
    for query in ("salmon", "postgres database", "what does the cat eat", "when is the conference"):
        for hit in (await search(client, query, limit=50))["results"]:
            assert hit["score"] > 0, (query, hit)


async def test_nonsense_returns_nothing_for_the_crew_tier_of_a_lead(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    crew = tmp_path / "crew"
    write(crew, "CREW.md", "# Crew\n\nReleases ship on Thursdays after the review.\n")
    for rel, text in NOTES.items():
        write(crew, rel, text)
    client = await sidecar_client(embedder="onnx", role="lead")
    await embedded(client, "crew")
    for query in NONSENSE:
        assert (await search(client, query, scope="crew"))["results"] == []
        assert (await search(client, query, scope="both"))["results"] == []
    assert (await search(client, "when do releases ship", scope="crew"))["results"][0]["path"] == "CREW.md"


async def test_nonsense_returns_nothing_over_mcp(sidecar_client: ClientFactory, notes: Path) -> None:
    client = await sidecar_client(embedder="onnx")
    await embedded(client)
    url = str(client.server.make_url("/mcp"))
    async with streamable_http_client(url) as (read, write_), ClientSession(read, write_) as session:
        await session.initialize()
        for query in NONSENSE:
            result = await session.call_tool("memory_search", {"query": query})
            assert result.is_error is False and result.structured_content is not None
            assert result.structured_content["results"] == [], query
        found = await session.call_tool("memory_search", {"query": "tomatoes watering"})
        assert found.structured_content is not None
        assert found.structured_content["results"][0]["path"] == "daily/2026-05-15.md"


async def test_a_nonsense_block_query_ranks_nothing(sidecar_client: ClientFactory, notes: Path) -> None:
    """The block picks chunks in the order the search ranks them; a query that matches nothing
    ranks nothing, so the block is the one built without a query, and a real query's section
    makes it into a block too small for all of them."""
    client = await sidecar_client(embedder="onnx")
    await embedded(client)

    async def block(**body: Any) -> str:
        resp = await client.post("/memory/block", json=body)
        assert resp.status == 200, await resp.text()
        text: str = (await resp.json())["text"]
        return text

    assert await block(query="qwxzyv", budget=600) == await block(budget=600)
    assert "tomatoes" not in await block(budget=600)
    assert "tomatoes" in await block(query="watering the tomatoes", budget=600)
