"""Typed memories scored as their user expects, over HTTP: confidence and priority count in
both scorings, activation weighs similarity 0.6, priority 0.2, confidence 0.1 and recency 0.1,
the third ``-`` retires only a memory of low confidence and a restore brings it back, and a near
miss under the cosine floor is named instead of an empty answer without a word."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.support.embedding import needs_model
from tests.support.waiting import async_wait_until

Start = Callable[..., Awaitable[TestClient[Any, Any]]]


@pytest.fixture
def start(sidecar_client: Start, memory_dir: Path) -> Start:
    return sidecar_client


async def _post(client: TestClient[Any, Any], path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    resp = await client.post(path, json=body)
    answer: dict[str, Any] = await resp.json()
    assert resp.status == status, answer
    return answer


@needs_model
@pytest.mark.parametrize("scoring", ["importance", "activation"])
async def test_confidence_counts_in_both_scorings(start: Start, scoring: str) -> None:
    """Twins (the same words, so the same cosine): only confidence tells them apart. The sure one
    is written first, so the newer one would win a tie."""
    client = await start(embedder="onnx")
    text = "The payroll export runs on Fridays"
    sure = await _post(client, "/memory/remember", {"content": text, "confidence": 1.0}, 201)
    doubtful = await _post(client, "/memory/remember", {"content": text, "confidence": 0.05}, 201)
    hits = (await _post(client, "/memory/recall", {"query": "payroll export", "scoring": scoring}))["hits"]
    assert [h["id"] for h in hits] == [sure["id"], doubtful["id"]]
    assert hits[0]["score"] > hits[1]["score"]


@pytest.mark.parametrize("scoring", ["importance", "activation"])
async def test_confidence_tells_twins_apart_without_an_embedder(start: Start, scoring: str) -> None:
    """BM25 alone: twins get the same rank (their BM25 scores are equal), so confidence decides."""
    client = await start()
    text = "The payroll export runs on Fridays"
    sure = await _post(client, "/memory/remember", {"content": text, "confidence": 1.0}, 201)
    doubtful = await _post(client, "/memory/remember", {"content": text, "confidence": 0.05}, 201)
    hits = (await _post(client, "/memory/recall", {"query": "payroll export", "scoring": scoring}))["hits"]
    assert [h["id"] for h in hits] == [sure["id"], doubtful["id"]]


@needs_model
@pytest.mark.parametrize("scoring", ["importance", "activation"])
async def test_priority_counts_in_both_scorings(start: Start, scoring: str) -> None:
    client = await start(embedder="onnx")
    text = "The staging cluster is in Frankfurt"
    high = await _post(client, "/memory/remember", {"content": text, "priority": 9}, 201)
    low = await _post(client, "/memory/remember", {"content": text, "priority": 2}, 201)
    hits = (await _post(client, "/memory/recall", {"query": "staging cluster", "scoring": scoring}))["hits"]
    assert [h["id"] for h in hits] == [high["id"], low["id"]]


async def test_activation_weighs_similarity_priority_confidence_and_recency(start: Start) -> None:
    client = await start()
    await _post(
        client,
        "/memory/remember",
        {"content": "Search latency regressed after the index change", "priority": 7, "confidence": 0.6},
        201,
    )
    answer = await _post(
        client, "/memory/recall", {"query": "search latency", "scoring": "activation", "explain": True}
    )
    parts = answer["hits"][0]["explain"]
    expected = 0.6 * parts["similarity"] + 0.2 * 0.7 + 0.1 * 0.6 + 0.1 * parts["recency"]
    assert parts["priority"] == pytest.approx(0.7) and parts["confidence"] == pytest.approx(0.6)
    assert parts["score"] == pytest.approx(expected, abs=1e-5)
    assert parts["weights"] == "similarity 0.6, priority 0.2, confidence 0.1, recency 0.1"


async def test_retiring_needs_low_confidence_and_a_restore_brings_it_back(start: Start) -> None:
    client = await start()
    liked = await _post(client, "/memory/remember", {"content": "Deploys go through the blue pipeline"}, 201)
    await _post(client, "/memory/feedback", {"id": liked["id"], "signal": "+"})
    for _ in range(3):
        down = await _post(client, "/memory/feedback", {"id": liked["id"], "signal": "-"})
    assert down["feedback"]["negative"] == 3 and down["status"] == "live"  # confidence 1.0 - 0.6: not low
    doubtful = await _post(
        client, "/memory/remember", {"content": "Deploys go through the green pipeline", "confidence": 0.6}, 201
    )
    for _ in range(3):
        down = await _post(client, "/memory/feedback", {"id": doubtful["id"], "signal": "-"})
    assert down["status"] == "retired" and down["confidence"] == pytest.approx(0.0)
    recalled = (await _post(client, "/memory/recall", {"query": "deploys pipeline"}))["hits"]
    assert [h["id"] for h in recalled] == [liked["id"]]
    back = await _post(client, "/memory/restore", {"id": doubtful["id"]})
    assert back["status"] == "live" and back["confidence"] == pytest.approx(0.5)
    recalled = (await _post(client, "/memory/recall", {"query": "deploys pipeline"}))["hits"]
    assert doubtful["id"] in [h["id"] for h in recalled]
    again = await client.post("/memory/restore", json={"id": doubtful["id"]})  # live: nothing to restore
    assert again.status == 404
    assert (await client.post("/memory/restore", json={"id": liked["id"], "extra": 1})).status == 400


@needs_model
async def test_a_near_miss_under_the_floor_is_named(start: Start) -> None:
    client = await start(embedder="onnx")
    kept = await _post(client, "/memory/remember", {"content": "Using Go for the API"}, 201)
    # The indexer embeds the memory in the background: ask until it has (a hit or a near miss).

    async def embedded() -> dict[str, Any] | None:
        answer: dict[str, Any] = await _post(client, "/memory/recall", {"query": "programming language"})
        return answer if answer["hits"] or "near" in answer else None

    answer = await async_wait_until(embedded, interval=0.1, message="the memory embedded (a hit or a near miss)")
    if answer["hits"]:  # the model put it over the floor: then it is a hit, which is fine too
        assert answer["hits"][0]["id"] == kept["id"]
        return
    assert answer["near"]["id"] == kept["id"] and answer["near"]["cosine"] < answer["near"]["floor"]
    nothing = await _post(client, "/memory/recall", {"query": "qwxzyv blorptang"})
    assert nothing["hits"] == [] and "near" not in nothing
