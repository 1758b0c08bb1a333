"""Workspace, agent and namespace isolation on every read, the memory block included, and topic keys
scoped the same way: what one agent, workspace or namespace keeps never shows up in another's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from tests.support.memory import ClientFactory


async def _post(client: TestClient[Any, Any], path: str, body: dict[str, Any], status: int = 200) -> Any:
    resp = await client.post(path, json=body)
    assert resp.status == status, (path, resp.status, await resp.text())
    return await resp.json()


async def _block(client: TestClient[Any, Any], **body: Any) -> str:
    text: str = (await _post(client, "/memory/block", {"budget": 15000, **body}))["text"]
    return text


async def test_the_block_shows_only_the_default_namespace(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await _post(client, "/memory/remember", {"content": "Using Go for the API", "namespace": "project-alpha"}, 201)
    await _post(client, "/memory/remember", {"content": "Using Rust for the API", "namespace": "project-beta"}, 201)
    await _post(client, "/memory/remember", {"content": "Deploys happen on Tuesdays", "priority": 9}, 201)
    text = await _block(client)
    assert "Deploys happen on Tuesdays" in text  # the default namespace's memory is there
    assert "Using Go" not in text and "Using Rust" not in text


async def test_the_blocks_current_facts_follow_the_requests_workspace(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    fact = {"subject": "billing service", "predicate": "uses", "object": "Stripe", "workspace_id": "default"}
    await _post(client, "/kg/add", fact, 201)
    assert "Stripe" in await _block(client, query="what does billing service use", workspace_id="default")
    assert "Stripe" not in await _block(client, query="what does billing service use", workspace_id="orca")
    resp = await client.post("/kg/query", json={"entity": "billing service", "workspace_id": "orca"})
    assert resp.status == 404  # every orca-scoped read agrees: orca has no such entity


async def test_one_agents_private_memories_stay_its_own(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    a = {"agent_id": "agent-a", "workspace_id": "ws"}
    b = {"agent_id": "agent-b", "workspace_id": "ws"}
    await _post(client, "/memory/remember", {**a, "content": "Indent with tabs", "topic_key": "indent"}, 201)
    assert "Indent with tabs" not in await _block(client, **b)
    assert "Indent with tabs" in await _block(client, **a)
    listed = await client.get("/memory/memories", params=b)
    assert [m["summary"] for m in (await listed.json())["memories"]] == []
    # The same key for agent B is B's own: A's memory stays live, and each forgets its own.
    await _post(client, "/memory/remember", {**b, "content": "Indent with four spaces", "topic_key": "indent"}, 201)
    mine = await client.get("/memory/memories", params=a)
    assert [m["summary"] for m in (await mine.json())["memories"]] == ["Indent with tabs"]
    history = await client.get("/memory/memories", params={**b, "topic_key": "indent"})
    assert [m["summary"] for m in (await history.json())["memories"]] == ["Indent with four spaces"]
    await _post(client, "/memory/forget", {**a, "topic_key": "indent"})
    await _post(client, "/memory/forget", {**b, "topic_key": "indent"})
