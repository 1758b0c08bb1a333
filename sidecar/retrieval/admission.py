"""Admission of hybrid searches: at most a few ranked at once, the others waiting their turn.

A hybrid search costs several milliseconds of CPU (the query's model run, the dense scan, the
fusion), on the event loop and the thread pools the writes and the index share. Twelve clients
searching in a loop would otherwise keep a dozen of them in progress, and a write, its indexing
and the search that reads it back (``after_seq``) would queue behind all of them on a host of two
cores. So a search waits at the gate, before any of its work starts, until one of ``slots`` is
free: waiting holds no thread and no work on the loop, only a future in a queue. Waiters are served
first come, first served.

Read-your-writes searches (``after_seq``) have a lane of their own, with as many slots: they never
wait behind the crowd, and a client that sends every search with ``after_seq`` gets a second lane,
not an unbounded one. Writes never pass the gate.

A wait has no time limit of its own: the searches waiting are at most the connections the server
accepts (``max_connections``; past it a new connection is answered 503 with Retry-After), each
behind a bounded number of searches of bounded time. A search that waited is still wanted (the
client is there), and a 503 would only send it to the back of the queue again; a client that gives
up closes its connection, and its search then leaves without running (``gone``).
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

__all__ = ["Admission", "Lane", "default_slots"]


def default_slots() -> int:
    """One search ranked at a time per core this process may run on: a search keeps about one core
    busy (its model run, then its ranking), so more at once only share the cores and queue on them."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


class Lane:
    """``slots`` holders at a time, the others waiting in order of arrival. A waiter cancelled (its
    client gone, a shutdown) leaves the queue; one cancelled just as a slot was handed to it hands
    the slot on, so no slot is ever lost."""

    def __init__(self, slots: int) -> None:
        if slots < 1:
            raise ValueError("a lane needs at least one slot")
        self.slots = slots
        self.busy = 0  # slots held now
        self.waited = 0  # acquisitions that had to wait, since start
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for f in self._waiters if not f.done())

    async def acquire(self) -> None:
        if self.busy < self.slots and not self._waiters:
            self.busy += 1
            return
        self.waited += 1
        handed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(handed)
        try:
            await handed  # release() counts the slot as ours before it wakes us
        except asyncio.CancelledError:
            if handed.done() and not handed.cancelled():
                self.release()  # handed a slot, cancelled before taking it: pass it on
            else:
                self._waiters.remove(handed)
            raise

    def release(self) -> None:
        while self._waiters:
            handed = self._waiters.popleft()
            if not handed.done():
                handed.set_result(None)  # the slot goes to the first waiter; busy stays as it is
                return
        self.busy -= 1


class Admission:
    """The gate of hybrid searches: an ordinary lane and a lane for read-your-writes searches,
    ``slots`` each (default: one per core)."""

    def __init__(self, slots: int | None = None) -> None:
        count = default_slots() if slots is None else slots
        self.ordinary = Lane(count)
        self.priority = Lane(count)

    @asynccontextmanager
    async def admit(self, *, priority: bool = False, gone: Callable[[], bool] | None = None) -> AsyncIterator[bool]:
        """Hold a slot of the lane for the block's duration. Yields False when ``gone()`` says the
        client left while the search waited: the caller should then leave without searching."""
        lane = self.priority if priority else self.ordinary
        await lane.acquire()
        try:
            yield gone is None or not gone()
        finally:
            lane.release()
