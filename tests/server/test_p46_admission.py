"""One ``priority.Admission`` holds a search service's slots and the count of the searches waiting
for one: two services on one event loop each admit their own ``slots`` and count their own
waiters, and ``priority.gated()`` is the sum over the loop."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from sidecar.contract import SearchRequest
from sidecar.index.tier import Tier
from sidecar.retrieval import priority
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.search import SearchService
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0


class _Ranking:
    """A hybrid searcher's stand-in: a search whose query starts with ``held`` stays in its ranking
    until ``go`` is set; every search says it started (by query)."""

    def __init__(self) -> None:
        self.embedder = object()
        self.go = asyncio.Event()
        self.started: list[str] = []

    async def search(self, tier: object, query: str, *_: object) -> tuple[list[dict[str, Any]], list[str]]:
        self.started.append(query)
        if query.startswith("held"):
            await self.go.wait()
        return [], []


def _service(ranking: _Ranking, slots: int) -> SearchService:
    service = SearchService(cast(Tier, object()), hybrid=cast(HybridSearcher, ranking))
    service.slots = slots
    return service


async def _search(service: SearchService, query: str) -> dict[str, Any]:
    return await service.search(SearchRequest(query=query))


async def test_two_services_on_one_loop_admit_and_count_their_own() -> None:
    first, second = _Ranking(), _Ranking()
    one, other = _service(first, 2), _service(second, 1)
    inside = [asyncio.ensure_future(_search(one, f"held {i}")) for i in range(2)]
    await async_wait_until(lambda: len(first.started) == 2, timeout=HANG_S)
    waiting = asyncio.ensure_future(_search(one, "held waiting"))
    await async_wait_until(lambda: priority.gated() == 1, timeout=HANG_S)
    async with asyncio.timeout(HANG_S):  # the other service's slot is free: it answers at once
        await _search(other, "plain words")
    assert second.started == ["plain words"]
    assert one._admission is not None and other._admission is not None
    assert (one._admission.waiting, other._admission.waiting) == (1, 0)
    # The other service's one slot taken too: each counts its own waiter, the loop both.
    other_inside = asyncio.ensure_future(_search(other, "held other"))
    await async_wait_until(lambda: second.started[-1:] == ["held other"], timeout=HANG_S)
    other_waiting = asyncio.ensure_future(_search(other, "held other waiting"))
    await async_wait_until(lambda: priority.gated() == 2, timeout=HANG_S)
    assert (one._admission.waiting, other._admission.waiting) == (1, 1)
    first.go.set()
    second.go.set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*inside, waiting, other_inside, other_waiting)
    assert priority.gated() == 0 and (one._admission.waiting, other._admission.waiting) == (0, 0)


async def test_an_admission_takes_at_least_one_slot() -> None:
    with pytest.raises(ValueError, match="slots"):
        priority.Admission(0)
    admission = priority.Admission(1)
    async with asyncio.timeout(HANG_S), admission.admitted():
        assert admission.waiting == 0
