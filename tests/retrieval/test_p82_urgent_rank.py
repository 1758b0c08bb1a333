"""A search an agent waits on (``after_seq``, urgent) whose query vector is at hand ranks on the
event loop's own thread, without a trip to a worker thread and back; its answer is the same.

The tier, its index, the reindex queue, the batcher and the in-process model are the real ones."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import Backoff, OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.priority import urgent
from sidecar.retrieval.vectors import VectorIndex
from tests.support.embedding import needs_model
from tests.support.memory import write
from tests.support.waiting import async_wait_until

pytestmark = needs_model

QUERIES = ["which pet food does the cat like", "salmon boiler", "boiler service monday", "train to the coast"]


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "topics/household.md", "# Household\n\nOur cat Miso refuses to eat anything except salmon.\n")
    write(root, "topics/home.md", "# Home\n\nThe boiler service is booked for the first Monday of every month.\n")
    write(root, "topics/travel.md", "# Travel\n\nBooked the train to Lisbon for the conference in March.\n")
    return root


async def test_an_urgent_search_with_its_vector_at_hand_ranks_on_the_loop_and_answers_the_same(
    memory: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    tier = Tier("agent", memory)
    queue = ReindexQueue({"agent": tier})
    health = EmbedderHealth(model, Backoff(base=0.05, max_delay=2.0, jitter=0.0), confirmed=True)
    vectors = VectorIndex(tier.index.path, model.model_id, 0)
    searcher = HybridSearcher(model, health, {"agent": vectors}, query_timeout=30.0)
    batcher = EmbedBatcher(model, health, {"agent": tier}, {"agent": vectors}, poll_s=0.2)
    await tier.open()
    queue.start()
    queue.hooks.append(batcher.on_update)
    batcher.start()
    try:

        async def settled() -> bool:
            await asyncio.to_thread(vectors.refresh)
            return vectors.size == 3 and vectors.backlog == 0

        await async_wait_until(settled, message="every chunk's vector")
        for query in QUERIES:  # as a search waiting for its write does, while the write is indexed
            searcher.prefetch(query)
        await async_wait_until(
            lambda: all(searcher._queries.find((model.model_id, q)) is not None for q in QUERIES),
            message="the queries' vectors",
        )
        ranked_on: list[threading.Thread] = []
        rank = searcher._rank

        def recorded(*args: Any) -> Any:
            ranked_on.append(threading.current_thread())
            return rank(*args)

        monkeypatch.setattr(searcher, "_rank", recorded)
        ordinary = [await searcher.search(tier, q, 5, True) for q in QUERIES]
        with urgent():
            waited = [await searcher.search(tier, q, 5, True) for q in QUERIES]
    finally:
        await batcher.stop()
        await queue.drain_and_stop()
        vectors.close()
        await tier.close()
    loop_thread = threading.current_thread()
    assert len(ranked_on) == 2 * len(QUERIES)
    assert all(thread is not loop_thread for thread in ranked_on[: len(QUERIES)]), "ordinary: on a worker thread"
    assert all(thread is loop_thread for thread in ranked_on[len(QUERIES) :]), "urgent: on the loop"
    assert waited == ordinary
    assert all(degraded == [] for _, degraded in waited)
    assert "Miso" in waited[0][0][0]["snippet"]
