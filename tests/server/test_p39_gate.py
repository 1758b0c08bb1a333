"""``sidecar.retrieval.priority.Gate``: at most a few ordinary holders at once, the rest parked in
order of arrival; urgent work passes; a waiter that gives up takes no slot."""

from __future__ import annotations

import asyncio
from typing import Any

from sidecar.retrieval.priority import Gate, urgent
from tests.support.waiting import async_wait_until

HANG_S = 30.0  # a guard against a hang, never a measure


class _Holders:
    """Tasks that take a slot each and hold it until told; who is inside, and the most at once."""

    def __init__(self, enter: Any) -> None:
        self.enter = enter
        self.inside: list[str] = []
        self.admitted: list[str] = []
        self.most = 0
        self.leave: dict[str, asyncio.Event] = {}

    async def hold(self, name: str, *, is_urgent: bool = False) -> None:
        self.leave[name] = asyncio.Event()
        if is_urgent:
            with urgent():
                await self._hold(name)
        else:
            await self._hold(name)

    async def _hold(self, name: str) -> None:
        async with self.enter():
            self.admitted.append(name)
            self.inside.append(name)
            self.most = max(self.most, len(self.inside))
            try:
                await self.leave[name].wait()
            finally:
                self.inside.remove(name)


async def test_at_most_slots_ordinary_holders_at_once_admitted_in_order_of_arrival() -> None:
    gate = Gate(2)
    holders = _Holders(gate.admit)
    tasks = []
    for i in range(6):
        tasks.append(asyncio.ensure_future(holders.hold(f"s{i}")))
        await asyncio.sleep(0)  # each arrives after the one before
    await async_wait_until(lambda: gate.waiting == 4, timeout=HANG_S)
    assert holders.inside == ["s0", "s1"]
    for i in range(6):
        holders.leave[f"s{i}"].set()
        await async_wait_until(lambda i=i: f"s{i}" not in holders.inside, timeout=HANG_S)
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(*tasks)
    assert holders.most == 2
    assert holders.admitted == [f"s{i}" for i in range(6)]
    assert gate.waiting == 0


async def test_urgent_work_passes_a_full_gate() -> None:
    gate = Gate(1)
    holders = _Holders(gate.admit)
    first = asyncio.ensure_future(holders.hold("ordinary"))
    await async_wait_until(lambda: holders.inside == ["ordinary"], timeout=HANG_S)
    waiting = asyncio.ensure_future(holders.hold("next"))
    await async_wait_until(lambda: gate.waiting == 1, timeout=HANG_S)
    own = asyncio.ensure_future(holders.hold("urgent", is_urgent=True))
    await async_wait_until(lambda: "urgent" in holders.inside, timeout=HANG_S)
    assert "next" not in holders.inside  # the gate is still full for ordinary work
    for name in ("urgent", "ordinary", "next"):
        holders.leave[name].set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(first, waiting, own)
    assert holders.admitted == ["ordinary", "urgent", "next"]


async def test_a_waiter_that_gives_up_takes_no_slot() -> None:
    gate = Gate(1)
    holders = _Holders(gate.admit)
    first = asyncio.ensure_future(holders.hold("first"))
    await async_wait_until(lambda: holders.inside == ["first"], timeout=HANG_S)
    gone = asyncio.ensure_future(holders.hold("gone"))
    after = asyncio.ensure_future(holders.hold("after"))
    await async_wait_until(lambda: gate.waiting == 2, timeout=HANG_S)
    gone.cancel()  # its client went away while it waited
    await async_wait_until(lambda: gate.waiting == 1, timeout=HANG_S)
    holders.leave["first"].set()
    await async_wait_until(lambda: holders.inside == ["after"], timeout=HANG_S)
    holders.leave["after"].set()
    async with asyncio.timeout(HANG_S):
        await asyncio.gather(first, after)
    assert gone.cancelled()
    assert holders.admitted == ["first", "after"]
    # Its slot is free again: a new holder enters at once.
    again = asyncio.ensure_future(holders.hold("again"))
    await async_wait_until(lambda: holders.inside == ["again"], timeout=HANG_S)
    holders.leave["again"].set()
    async with asyncio.timeout(HANG_S):
        await again
