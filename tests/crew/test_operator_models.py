"""Operator models (``operators/<slug>.md`` in the crew tier) are private to their operator: only
the memory block that injects them reads them. Crew search (the lead's own crew scope, and what
its crew listener answers members) and reading crew files leave them out; the block still injects
the model of the user it is asked for."""

from __future__ import annotations

from pathlib import Path

import httpx

from sidecar.prompt.block import user_slug
from tests.support.memory import ClientFactory, write
from tests.support.procs import free_port

TOKEN = "operator-models-token"
ALICE_SLUG = user_slug("alice", "default")
ALICE = "# Alice\nAlice prefers terse answers and hates emoji; her salary review is in March.\n"


def crew_dir(tmp_path: Path) -> Path:
    root = tmp_path / "crew"
    write(root, "CREW.md", "# Conventions\nAnswers stay terse in incident channels.\n")
    write(root, f"operators/{ALICE_SLUG}.md", ALICE)
    # More operator models holding the query's words than a small answer has places: the search
    # must still fill its answer with the crew's shared files.
    for n in range(12):
        write(root, f"operators/user-{n}.md", f"# User {n}\nUser {n} prefers terse terse answers.\n")
    return root


async def test_crew_search_and_read_leave_operator_models_out(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    crew_dir(tmp_path)
    port = free_port()
    client = await sidecar_client(role="lead", crew_listen=f"127.0.0.1:{port}", crew_token=TOKEN)
    for scope in ("crew", "both"):
        resp = await client.post("/memory/search", json={"query": "terse answers", "scope": scope, "limit": 3})
        assert resp.status == 200
        paths = [hit["path"] for hit in (await resp.json())["results"] if hit["source"] == "crew"]
        assert paths == ["CREW.md"], (scope, paths)
    resp = await client.post("/memory/search", json={"query": "salary review", "scope": "crew"})
    assert (await resp.json())["results"] == []

    # What a member asks the lead's crew listener.
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as member:
        answer = await member.post(f"http://127.0.0.1:{port}/crew/search", json={"query": "terse answers", "limit": 3})
        assert answer.status_code == 200, answer.text
        assert [hit["path"] for hit in answer.json()["results"]] == ["CREW.md"]
        answer = await member.post(f"http://127.0.0.1:{port}/crew/search", json={"query": "salary review"})
        assert answer.json()["results"] == []

    for path in (
        f"operators/{ALICE_SLUG}.md",
        "operators/nobody.md",
        "Operators/nobody.md",
    ):  # there or not: the same answer
        resp = await client.get("/memory/read", params={"tier": "crew", "path": path})
        assert resp.status == 403, await resp.text()
        assert (await resp.json())["error"]["code"] == "operator_model"
    assert (await client.get("/memory/read", params={"tier": "crew", "path": "CREW.md"})).status == 200


async def test_the_block_still_injects_the_operator_model_it_is_asked_for(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    crew_dir(tmp_path)
    client = await sidecar_client(role="lead")
    resp = await client.post("/memory/block", json={"user_id": "alice", "budget": 8000})
    assert resp.status == 200, await resp.text()
    block = (await resp.json())["text"]
    assert "[OPERATOR MODEL]" in block and "hates emoji" in block
    assert "User 3 prefers" not in block
