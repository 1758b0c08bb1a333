"""Ordinary work parks while urgent work is in flight (``sidecar.retrieval.priority``): ``calm()``
waits while a ``hold()`` is unreleased and resumes once none is, urgent work never parks, and a
hold released twice counts once."""

from __future__ import annotations

import asyncio

import pytest

from sidecar.retrieval import priority
from sidecar.retrieval.priority import calm, held, hold, urgent
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0


@pytest.fixture(autouse=True)
def _uncapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(priority, "MAX_PARK_S", HANG_S)  # parked until released, not until a cap


async def test_nothing_urgent_nothing_parks() -> None:
    async with asyncio.timeout(HANG_S):
        assert await calm() == 0.0
    assert priority.parked() == 0


async def test_a_parked_calm_resumes_once_every_hold_is_released() -> None:
    first, second = hold(), hold()
    parked = [asyncio.ensure_future(calm()) for _ in range(3)]
    await async_wait_until(lambda: priority.parked() == 3, timeout=HANG_S)
    first.release()
    first.release()  # released once: the second hold still counts
    assert priority.urgent_pending() == 1
    await asyncio.sleep(0)  # a turn of the loop for anything woken
    assert priority.parked() == 3 and not any(p.done() for p in parked)
    second.release()
    async with asyncio.timeout(HANG_S):
        waited = await asyncio.gather(*parked)
    assert all(w >= 0.0 for w in waited)
    assert priority.parked() == 0 and priority.urgent_pending() == 0


async def test_urgent_work_passes_parked_work() -> None:
    order: list[str] = []

    async def ordinary() -> None:
        await calm()
        order.append("ordinary")

    async def pressing() -> None:
        with urgent():
            await calm()
            order.append("urgent")

    with held():
        waiting = asyncio.ensure_future(ordinary())
        await async_wait_until(lambda: priority.parked() == 1, timeout=HANG_S)
        async with asyncio.timeout(HANG_S):
            await pressing()
        assert order == ["urgent"]
    async with asyncio.timeout(HANG_S):
        await waiting
    assert order == ["urgent", "ordinary"]


async def test_a_cancelled_parked_calm_leaves_no_count() -> None:
    with held():
        waiting = asyncio.ensure_future(calm())
        await async_wait_until(lambda: priority.parked() == 1, timeout=HANG_S)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert priority.parked() == 0


async def test_a_hold_released_after_what_it_waits_for() -> None:
    indexed = asyncio.Event()
    urgent_write = hold()
    urgent_write.release_after(indexed.wait())  # a write: urgent until the index has it
    waiting = asyncio.ensure_future(calm())
    await async_wait_until(lambda: priority.parked() == 1, timeout=HANG_S)
    assert priority.urgent_pending() == 1
    indexed.set()
    async with asyncio.timeout(HANG_S):
        await waiting
    assert priority.urgent_pending() == 0 and priority.parked() == 0
    urgent_write.release()  # released already: nothing changes
    assert priority.urgent_pending() == 0


async def test_a_hold_released_after_a_failing_wait() -> None:
    async def fails() -> None:
        raise RuntimeError("the index is gone")

    urgent_write = hold()
    urgent_write.release_after(fails())
    await async_wait_until(lambda: priority.urgent_pending() == 0, timeout=HANG_S)
