"""At most ``priority.default_slots()`` ordinary hybrid searches do their work at once
(``SearchService.search``, ``priority.admitted()``): one more waits before its first stage while
they are in, an urgent search (an ``after_seq`` search runs inside ``urgent()``) goes past it at
once, a BM25-only sidecar's searches never wait, and the one waiting goes in once a slot is free."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from sidecar.contract import SearchRequest
from sidecar.index.tier import Tier
from sidecar.retrieval import priority
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.priority import urgent
from sidecar.retrieval.search import SearchService
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0


class _Ranking:
    """A hybrid searcher's stand-in: a search whose query starts with ``held`` stays in its ranking
    until ``go`` is set; every search says it started (by query)."""

    def __init__(self, embeds: bool) -> None:
        self.embedder = object() if embeds else None
        self.go = asyncio.Event()
        self.started: list[str] = []

    async def search(self, tier: object, query: str, *_: object) -> tuple[list[dict[str, Any]], list[str]]:
        self.started.append(query)
        if query.startswith("held"):
            await self.go.wait()
        return [], []


def _service(ranking: _Ranking) -> SearchService:
    return SearchService(cast(Tier, object()), hybrid=cast(HybridSearcher, ranking))


async def _search(service: SearchService, query: str) -> dict[str, Any]:
    return await service.search(SearchRequest(query=query))


async def _urgent_search(service: SearchService, query: str) -> dict[str, Any]:
    with urgent():  # as ``ops.search`` runs a search with ``after_seq``
        return await service.search(SearchRequest(query=query))


async def test_one_more_ordinary_search_waits_while_an_urgent_one_goes_past() -> None:
    ranking = _Ranking(embeds=True)
    service = _service(ranking)
    slots = priority.default_slots()
    inside = [asyncio.ensure_future(_search(service, f"held {i}")) for i in range(slots)]
    await async_wait_until(lambda: len(ranking.started) == slots, timeout=HANG_S)
    one_more = asyncio.ensure_future(_search(service, "held one more"))
    await async_wait_until(lambda: priority.gated() == 1, timeout=HANG_S)
    async with asyncio.timeout(HANG_S):
        answer = await _urgent_search(service, "own write")
    assert answer["results"] == [] and "degraded" not in answer
    assert ranking.started[slots:] == ["own write"]  # in while the ordinary one still waits
    assert priority.gated() == 1 and not one_more.done()
    ranking.go.set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*inside, one_more)
    assert ranking.started[-1] == "held one more"
    assert priority.gated() == 0


async def test_a_bm25_only_search_never_waits() -> None:
    crowd = _Ranking(embeds=True)
    hybrid = _service(crowd)
    slots = priority.default_slots()
    inside = [asyncio.ensure_future(_search(hybrid, f"held {i}")) for i in range(slots)]
    await async_wait_until(lambda: len(crowd.started) == slots, timeout=HANG_S)
    bm25 = _Ranking(embeds=False)
    async with asyncio.timeout(HANG_S):
        await _search(_service(bm25), "plain words")
    assert bm25.started == ["plain words"] and priority.gated() == 0
    crowd.go.set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*inside)


async def test_a_cancelled_wait_leaves_no_count_and_no_slot_taken() -> None:
    ranking = _Ranking(embeds=True)
    service = _service(ranking)
    slots = priority.default_slots()
    inside = [asyncio.ensure_future(_search(service, f"held {i}")) for i in range(slots)]
    await async_wait_until(lambda: len(ranking.started) == slots, timeout=HANG_S)
    waiting = asyncio.ensure_future(_search(service, "held cancelled"))
    await async_wait_until(lambda: priority.gated() == 1, timeout=HANG_S)
    waiting.cancel()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(waiting, return_exceptions=True)
    assert priority.gated() == 0
    ranking.go.set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*inside)
    async with asyncio.timeout(HANG_S):  # every slot is free again: as many go in at once as before
        ranking.go.clear()
        again = [asyncio.ensure_future(_search(service, f"held again {i}")) for i in range(slots)]
        await async_wait_until(lambda: len(ranking.started) == 2 * slots, timeout=HANG_S)
        assert priority.gated() == 0
        ranking.go.set()
        await asyncio.gather(*again)
    assert "held cancelled" not in ranking.started
