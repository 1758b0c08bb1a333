"""A finished session becomes one episodic summary, over HTTP: extractive by default,
a chat model's when one is configured and the extractive one when it fails, idempotent on
``source_id``; a ``summary.generated`` event posted twice is stored once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from tests.support.memory import ClientFactory

MESSAGES = [
    {"role": "user", "content": "We need to move the billing service off Heroku before the contract ends."},
    {"role": "assistant", "content": "Running the migration checks..."},
    {"role": "user", "content": "We decided to host the billing service on Fly.io in the Frankfurt region."},
    {"role": "assistant", "content": "The billing service now runs on Fly.io; Priya owns the cutover runbook."},
    {"role": "tool", "content": "exit code 0"},
]


async def _post(client: TestClient[Any, Any], path: str, body: dict[str, Any], status: int) -> dict[str, Any]:
    resp = await client.post(path, json=body)
    answer: dict[str, Any] = await resp.json()
    assert resp.status == status, answer
    return answer


async def _summaries(client: TestClient[Any, Any]) -> list[dict[str, Any]]:
    entries = (await (await client.get("/journal", params={"workspace_id": "default", "limit": "50"})).json())[
        "entries"
    ]
    return [e for e in entries if e["entry_type"] == "summary.generated"]


async def test_a_session_end_writes_one_extractive_summary(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    first = await _post(client, "/memory/session", {"session_id": "s-42", "messages": MESSAGES}, 201)
    assert first["engine"] == "extractive" and first["source_id"] == "s-42:0" and first["replayed"] is False
    assert "Fly.io" in first["l0_abstract"] or "billing service" in first["l0_abstract"]
    assert "Fly.io" in first["key_topics"] or "Frankfurt" in first["key_topics"]
    again = await _post(client, "/memory/session", {"session_id": "s-42", "messages": MESSAGES}, 200)
    assert again["id"] == first["id"] and again["replayed"] is True
    stored = await _summaries(client)
    assert [e["id"] for e in stored] == [first["id"]]
    assert "exit code" not in stored[0]["summary"] and "Frankfurt" in stored[0]["summary"]
    # A later compaction of the same session is another summary.
    later = await _post(
        client, "/memory/session", {"session_id": "s-42", "compaction_count": 1, "summary": "Cutover done."}, 201
    )
    assert later["id"] != first["id"] and later["engine"] == "given"
    # What the summary says reaches the graph (the journal feeds it).
    facts = await _post(client, "/kg/query", {"entity": "billing service"}, 200)
    assert any(f["object"] in ("Fly.io", "Frankfurt region") for f in facts["facts"])


async def test_a_failing_model_falls_back_to_the_extractive_summary(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    # A chat model at a port nothing listens on: every call fails at once.
    client = await sidecar_client(summariser="openai", summariser_model="m", openai_base_url="http://127.0.0.1:9/v1")
    answer = await _post(client, "/memory/session", {"session_id": "s-7", "messages": MESSAGES}, 201)
    assert answer["engine"] == "extractive"
    assert len(await _summaries(client)) == 1


async def test_summary_generated_is_idempotent_on_source_id(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    body = {
        "workspace_id": "default",
        "entry_type": "summary.generated",
        "summary": "Session s-9: the team chose Buildkite.",
        "payload": {"source_id": "s-9:0"},
    }
    first = await _post(client, "/journal", body, 201)
    second = await _post(client, "/journal", body, 200)
    assert second["id"] == first["id"] and second["replayed"] is True
    assert len(await _summaries(client)) == 1


async def test_bad_session_bodies_are_400(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    for body in (
        {"messages": MESSAGES},
        {"session_id": "s"},
        {"session_id": "s", "messages": "hi"},
        {"session_id": "s", "summary": "x", "extra": 1},
        {"session_id": "s", "summary": "x", "compaction_count": -1},
    ):
        resp = await client.post("/memory/session", json=body)
        assert resp.status == 400, (body, await resp.text())
