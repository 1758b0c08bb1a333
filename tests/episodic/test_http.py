"""The episodic routes on a real aiohttp server over a real journal file, their 400s, the
``memory.updated`` hook and the health CLI hook."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient

from sidecar.episodic import health_main, record_memory_updated
from sidecar.http.state import SIDECAR
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.waiting import async_wait_until

Client = TestClient[Any, Any]
MakeClient = Callable[..., Any]


@pytest.fixture(scope="module")
def embedder(onnx_model: OnnxEmbedder) -> OnnxEmbedder:
    """The worker's model (``onnx_model``, skipped without the [embed] extra): these tests only embed with it."""
    return onnx_model


def make_app(memory_dir: Path, embedder: OnnxEmbedder | None) -> web.Application:
    # The whole sidecar (its journal with the in-process model, or none), so bodies have the one JSON error shape.
    return create_app(Settings(memory_dir=memory_dir, embedder="onnx" if embedder else "none", watch=False))


@pytest.fixture
def start(aiohttp_client: Any, tmp_path: Path) -> MakeClient:
    async def run(embedder: OnnxEmbedder | None = None) -> Client:
        client: Client = await aiohttp_client(make_app(tmp_path / "memory", embedder))
        indexer = client.app[SIDECAR].indexer  # let its start-up run (catch-up, daily jobs) finish first
        await async_wait_until(lambda: indexer.ticks, timeout=60, message="the indexer's start-up run")
        return client

    return run


async def post_entry(client: Client, **body: Any) -> dict[str, Any]:
    body = {"workspace_id": "w", "agent_id": "a", "entry_type": "peer.escalation", **body}
    resp = await client.post("/journal", json=body)
    assert resp.status == 201, await resp.text()
    result: dict[str, Any] = await resp.json()
    return result


async def wait_indexed(client: Client, count: int) -> None:
    indexer = client.app[SIDECAR].indexer
    await async_wait_until(
        lambda: indexer.indexed_total >= count,
        timeout=60,  # a hang guard: a busy host delays the indexer, never changes what it reaches
        message=lambda: f"the indexer to reach {count}: {indexer.indexed_total}",
    )


async def test_post_and_get_journal(start: MakeClient, tmp_path: Path) -> None:
    client = await start()
    first = await post_entry(client, summary="Checkout pod OOM killed", payload={"pod": "checkout-7f"})
    second = await post_entry(client, summary="build log line", entry_type="exec.output_chunk")
    await post_entry(client, summary="Checkout pod OOM killed", workspace_id="w2")
    assert first["id"].startswith("je_") and first["embeddable"] is True and second["embeddable"] is False
    assert (tmp_path / "memory" / "journal.sqlite").exists()

    resp = await client.get("/journal", params={"workspace_id": "w", "q": "oom checkout"})
    assert resp.status == 200
    entries = (await resp.json())["entries"]
    assert [(e["id"], e["workspace_id"], e["payload"]) for e in entries] == [(first["id"], "w", {"pod": "checkout-7f"})]
    recent = (await (await client.get("/journal", params={"workspace_id": "w", "limit": "1"})).json())["entries"]
    assert [e["id"] for e in recent] == [second["id"]]


async def test_recall_route_with_the_real_model(start: MakeClient, embedder: OnnxEmbedder) -> None:
    client = await start(embedder)
    hit = await post_entry(client, summary="Deploy to production denied by keeper")
    await post_entry(client, summary="Quarterly planning meeting notes")
    await post_entry(client, summary="Deploy to production denied by keeper", workspace_id="w2")
    await wait_indexed(client, 3)
    body = {"workspace_id": "w", "agent_id": "a", "query_text": "keeper denied the production deploy", "k": 1}
    resp = await client.post("/episodic/recall", json=body)
    assert resp.status == 200
    result = await resp.json()
    assert result["dense"] == "ok" and result["hybrid"] is False
    assert [h["entry_id"] for h in result["hits"]] == [hit["id"]]
    assert 0.5 < result["hits"][0]["score"] <= 1.0
    hybrid = await (await client.post("/episodic/recall", json={**body, "hybrid": True})).json()
    assert [h["entry_id"] for h in hybrid["hits"]] == [hit["id"]] and hybrid["hits"][0]["via"] == "hybrid"


async def test_recall_route_without_embedder_degrades(start: MakeClient) -> None:
    client = await start(None)
    hit = await post_entry(client, summary="OOM in checkout")
    body = {"workspace_id": "w", "agent_id": "a", "query_text": "checkout OOM"}
    dense = await (await client.post("/episodic/recall", json=body)).json()
    assert dense == {"hits": [], "hybrid": False, "dense": "no_embedder"}
    hybrid = await (await client.post("/episodic/recall", json={**body, "hybrid": True})).json()
    assert [(h["entry_id"], h["via"]) for h in hybrid["hits"]] == [(hit["id"], "bm25")]
    first = hybrid["hits"][0]
    assert [first["summary"][a:b] for a, b in first["highlights"]] == ["OOM", "checkout"]


async def test_health_routes(start: MakeClient) -> None:
    client = await start()
    resp = await client.get("/memory/health", params={"workspace_id": "w"})
    assert resp.status == 404 and (await resp.json())["error"]["code"] == "not_found"
    await post_entry(client, summary="escalated")
    resp = await client.post("/memory/health", params={"recompute": "1", "workspace_id": "w"})
    assert resp.status == 200
    computed = await resp.json()
    assert computed["band"] == "red" and computed["metrics"]["coverage"] == 0.0
    assert set(computed["metrics"]) == {"freshness", "coverage", "coherence", "efficiency", "reachability"}
    assert await (await client.get("/memory/health", params={"workspace_id": "w"})).json() == computed
    assert (await client.get("/memory/health", params={"workspace_id": "w", "crew_id": "c"})).status == 404


async def test_record_memory_updated_resets_the_nudge(start: MakeClient) -> None:
    client = await start()
    for n in range(30):
        await post_entry(client, summary=f"step {n}", entry_type="exec.output_chunk")
    nudger = client.app[SIDECAR].nudger
    assert len(await nudger.nudges("w", "a", "s1")) == 1
    journal = client.app[SIDECAR].journal
    entry_id = await record_memory_updated(journal, "AGENT.md", "agent", 7)
    stored = await journal.get("w", entry_id)
    assert stored is not None and stored.agent_id == "a" and stored.entry_type == "memory.updated"
    assert stored.payload == {"path": "AGENT.md", "tier": "agent", "seq": 7}
    assert await nudger.nudges("w", "a", "s2") == []


BAD: list[tuple[str, str, Any, str]] = [
    ("POST", "/journal", b"{not json", "invalid_json"),
    ("POST", "/journal", b"[1]", "invalid_json"),
    ("POST", "/journal", {"entry_type": "peer.escalation", "summary": "x"}, "missing_workspace_id"),
    ("POST", "/journal", {"workspace_id": "w", "entry_type": "peer.escalation", "summary": ""}, "invalid_summary"),
    ("POST", "/journal", {"workspace_id": "w", "entry_type": "t", "summary": "x", "severity": 3}, "invalid_severity"),
    ("POST", "/journal", {"workspace_id": "w", "entry_type": "t", "summary": "x", "payload": "p"}, "invalid_payload"),
    ("POST", "/journal", {"workspace_id": "w", "entry_type": "t", "summary": "x", "ts": "noon"}, "invalid_ts"),
    ("POST", "/journal", {"workspace_id": "w", "entry_type": "t", "summary": "x", "extra": 1}, "unknown_field"),
    ("GET", "/journal", None, "missing_workspace_id"),
    ("GET", "/journal?workspace_id=w&limit=abc", None, "invalid_limit"),
    ("GET", "/journal?workspace_id=w&limit=0", None, "invalid_limit"),
    ("GET", "/journal?workspace_id=w&limit=101", None, "invalid_limit"),
    ("GET", "/journal?workspace_id=bad%20id", None, "invalid_workspace_id"),
    ("POST", "/episodic/recall", b"", "invalid_json"),
    ("POST", "/episodic/recall", {"agent_id": "a", "query_text": "x"}, "missing_workspace_id"),
    ("POST", "/episodic/recall", {"workspace_id": "w", "query_text": "x"}, "invalid_agent_id"),
    ("POST", "/episodic/recall", {"workspace_id": "w", "scope": "crew_shared", "query_text": "x"}, "invalid_crew_id"),
    (
        "POST",
        "/episodic/recall",
        {"workspace_id": "w", "agent_id": "a", "query_text": "x", "scope": "all"},
        "invalid_scope",
    ),
    ("POST", "/episodic/recall", {"workspace_id": "w", "agent_id": "a", "query_text": ""}, "invalid_query_text"),
    ("POST", "/episodic/recall", {"workspace_id": "w", "agent_id": "a", "query_text": "x", "k": 0}, "invalid_k"),
    ("POST", "/episodic/recall", {"workspace_id": "w", "agent_id": "a", "query_text": "x", "k": 51}, "invalid_k"),
    ("POST", "/episodic/recall", {"workspace_id": "w", "agent_id": "a", "query_text": "x", "k": "5"}, "invalid_k"),
    (
        "POST",
        "/episodic/recall",
        {"workspace_id": "w", "agent_id": "a", "query_text": "x", "walk_depth": 2},
        "invalid_walk_depth",
    ),
    (
        "POST",
        "/episodic/recall",
        {"workspace_id": "w", "agent_id": "a", "query_text": "x", "hybrid": "yes"},
        "invalid_hybrid",
    ),
    ("POST", "/episodic/recall", {"workspace_id": "w", "agent_id": "a", "query_text": "x", "n": 1}, "unknown_field"),
    ("GET", "/memory/health", None, "missing_workspace_id"),
    ("GET", "/memory/health?workspace_id=w&crew_id=a%20b", None, "invalid_crew_id"),
    ("POST", "/memory/health?recompute=1", None, "missing_workspace_id"),
    ("POST", "/memory/health?recompute=0&workspace_id=w", None, "invalid_recompute"),
]


@pytest.mark.parametrize(("method", "path", "body", "code"), BAD, ids=[f"{b[0]} {b[1]} {b[3]}" for b in BAD])
async def test_bad_input_is_a_400_with_the_error_shape(
    start: MakeClient, method: str, path: str, body: Any, code: str
) -> None:
    client = await start()
    kwargs: dict[str, Any] = {"json": body} if isinstance(body, dict) else {"data": body}
    resp = await client.request(method, path, **kwargs)
    assert resp.status == 400, await resp.text()
    payload = await resp.json()
    assert set(payload) == {"error"} and payload["error"]["code"] == code and payload["error"]["message"]


def test_health_main_prints_json_and_exit_codes(tmp_path: Path) -> None:
    settings = Settings(memory_dir=tmp_path / "memory")
    out = io.StringIO()
    assert health_main(settings, False, "w", stream=out) == 1
    assert json.loads(out.getvalue())["error"]["code"] == "not_found"
    out = io.StringIO()
    assert health_main(settings, True, "w", stream=out) == 0
    computed = json.loads(out.getvalue())
    assert computed["workspace_id"] == "w" and computed["band"] == "red"
    out = io.StringIO()
    assert health_main(settings, False, "w", stream=out) == 0
    assert json.loads(out.getvalue()) == computed
    out = io.StringIO()
    assert health_main(settings, False, "not a valid id", stream=out) == 2
    assert json.loads(out.getvalue())["error"]["code"] == "invalid_workspace_id"
