"""Recalled memories in the prompt, over HTTP: on a tight budget the strongest hit is shortened
rather than dropped for a weaker short one; dense recall of the journal returns only what the
query earns instead of filling k."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.embedding import needs_model
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until

STRONG = "The refund service settles refunds through the ledger queue. " + " ".join(
    f"Step {i} of the refund settlement checks batch {i} against the bank file before posting it." for i in range(14)
)
WEAK = "Refund emails use the plain template."


async def test_a_tight_budget_keeps_the_strongest_hit_shortened(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    strong = await (await client.post("/memory/remember", json={"content": STRONG, "priority": 10})).json()
    weak = await (await client.post("/memory/remember", json={"content": WEAK, "priority": 2})).json()
    body = {"query": "refund settlement ledger queue", "recall": True, "layers": ["L3"], "budget": 3000}
    out: dict[str, Any] = await (await client.post("/memory/block", json=body)).json()
    fenced = out["text"].split("<recalled-memory>")[1].split("</recalled-memory>")[0]
    assert len(STRONG) > 3000 // 4  # it cannot go in whole
    assert "The refund service settles refunds through the ledger queue." in fenced and "…" in fenced
    assert strong["id"] in out["recalled"]
    assert weak["id"] not in out["recalled"] and "1 more recalled entry left out" in fenced


@needs_model
async def test_dense_episodic_recall_does_not_fill_k(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client(embedder="onnx")
    for summary in ("Checkout service OOM killed in production", "Quarterly planning meeting notes"):
        resp = await client.post(
            "/journal",
            json={"workspace_id": "w", "agent_id": "a1", "entry_type": "peer.escalation", "summary": summary},
        )
        assert resp.status == 201, await resp.text()
    query = {"workspace_id": "w", "agent_id": "a1", "query_text": "checkout pod ran out of memory", "k": 5}

    async def recalled() -> list[dict[str, Any]]:
        hits: list[dict[str, Any]] = (await (await client.post("/episodic/recall", json=query)).json())["hits"]
        return hits

    # The indexer embeds the entries in the background.
    hits = await async_wait_until(recalled, interval=0.1, message="the entries embedded and recalled")
    assert [h["summary"] for h in hits] == ["Checkout service OOM killed in production"]
