"""Urgent work first in the threads a search's steps queue for.

A search waiting for a write (``after_seq``) is what stands between an agent's write and its next
turn; under a crowd of ordinary searches, its steps off the event loop (the query's model run, the
ranking, the snippets) would each wait behind every step the crowd queued before it. ``urgent()``
marks the current task (and the tasks and thread calls it starts) as such a search; the event
loop's default executor, a ``PriorityExecutor``, then starts its queued calls urgent first, in the
order they came within each class. Nothing is gated or dropped: ordinary work keeps the threads
urgent work leaves, and a call already running is never interrupted.

The executor orders only what is queued for its threads; the event loop and the interpreter's lock
are shared with every step the crowd has started. So while urgent work is in flight (``hold()``: an
``after_seq`` search, or a write until the index has it), ordinary searches start no new CPU stage:
``calm()``, awaited at their stage boundaries, parks them on an ``asyncio.Event`` (off the loop's
ready queue and off the interpreter's lock) until no urgent work is pending, or ``MAX_PARK_S`` has
passed (a stream of urgent work never starves a search). A stage already running finishes.

And at most ``default_slots()`` ordinary searches do their work at once (``Admission``): the
others wait before their first stage, so the steps of those running, and urgent work's, queue
behind fewer. Urgent work never waits there.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = [
    "MAX_PARK_S",
    "Admission",
    "Hold",
    "PriorityExecutor",
    "calm",
    "default_slots",
    "default_workers",
    "gated",
    "held",
    "hold",
    "install",
    "is_urgent",
    "parked",
    "urgent",
    "urgent_pending",
]

T = TypeVar("T")
_URGENT: ContextVar[bool] = ContextVar("sidecar_urgent", default=False)
#: The longest one ``calm()`` parks ordinary work while urgent work keeps coming.
MAX_PARK_S = 1.0


def is_urgent() -> bool:
    """Whether the current task or thread call does urgent work (``urgent()``)."""
    return _URGENT.get()


@contextmanager
def urgent() -> Iterator[None]:
    """Mark what runs inside, and the tasks and thread calls started from it, as urgent."""
    token = _URGENT.set(True)
    try:
        yield
    finally:
        _URGENT.reset(token)


class _Calm:
    """One event loop's urgent work in flight, and the ordinary work parked until it is done."""

    def __init__(self) -> None:
        self.pending = 0
        self.parked = 0
        self.waiters: set[asyncio.Future[object]] = set()  # what held releases wait for (release_after)
        self.calm = asyncio.Event()
        self.calm.set()
        self.admissions: weakref.WeakSet[Admission] = weakref.WeakSet()  # those waited on here


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Calm] = weakref.WeakKeyDictionary()


def _here() -> _Calm:
    loop = asyncio.get_running_loop()
    state = _loops.get(loop)
    if state is None:
        state = _loops[loop] = _Calm()
    return state


class Hold:
    """Urgent work in flight on an event loop until ``release()`` (once; later calls do nothing).
    Made and released on the loop's thread."""

    __slots__ = ("_state",)

    def __init__(self, state: _Calm) -> None:
        self._state: _Calm | None = state
        state.pending += 1
        state.calm.clear()

    def release_after(self, waiting: Awaitable[object]) -> None:
        """Release once ``waiting`` is done (however it ends): for urgent work that goes on after
        its caller has its answer, as a write until the index has it. ``waiting`` should be bounded
        (a timeout of its own)."""
        state = self._state
        if state is None:  # released already
            if asyncio.iscoroutine(waiting):
                waiting.close()
            return
        waiter = asyncio.ensure_future(waiting)
        state.waiters.add(waiter)  # kept: a task nothing refers to may be collected before it ends
        waiter.add_done_callback(functools.partial(self._released, state))

    def _released(self, state: _Calm, waiter: asyncio.Future[object]) -> None:
        if not waiter.cancelled():
            waiter.exception()  # retrieved: its end is all that matters here
        state.waiters.discard(waiter)
        self.release()

    def release(self) -> None:
        state, self._state = self._state, None
        if state is None:
            return
        state.pending -= 1
        if state.pending == 0:
            state.calm.set()


def hold() -> Hold:
    """Count urgent work as in flight on the running loop until the ``Hold`` is released: ordinary
    searches park at their next stage boundary (``calm()``) meanwhile."""
    return Hold(_here())


@contextmanager
def held() -> Iterator[None]:
    """``hold()`` for what runs inside (on the running loop)."""
    token = hold()
    try:
        yield
    finally:
        token.release()


def urgent_pending() -> int:
    """How many holds (``hold()``) are in flight on the running loop."""
    state = _loops.get(asyncio.get_running_loop())
    return state.pending if state is not None else 0


def parked() -> int:
    """How many ``calm()`` calls are parked on the running loop now."""
    state = _loops.get(asyncio.get_running_loop())
    return state.parked if state is not None else 0


async def calm() -> float:
    """Between two stages of ordinary work: while urgent work is in flight on this loop (``hold()``),
    wait until none is, at most ``MAX_PARK_S``; the seconds parked. Urgent work (``is_urgent()``)
    and ordinary work with nothing urgent in flight go on at once, without a trip through the loop.
    A timeout the caller starts after this does not count the time parked."""
    if _URGENT.get():
        return 0.0
    loop = asyncio.get_running_loop()
    state = _loops.get(loop)
    if state is None or state.pending == 0:
        return 0.0
    started = loop.time()
    state.parked += 1
    try:
        async with asyncio.timeout(MAX_PARK_S):
            await state.calm.wait()
    except TimeoutError:
        pass
    finally:
        state.parked -= 1
    return loop.time() - started


def default_slots() -> int:
    """How many ordinary searches do their work at once (``admitted()``): two more than the cores,
    so the cores stay busy while one search waits on a read."""
    return (os.cpu_count() or 1) + 2


def gated() -> int:
    """How many ordinary calls wait to be admitted (``Admission.admitted()``) on the running loop now,
    over every ``Admission`` waited on there."""
    state = _loops.get(asyncio.get_running_loop())
    return sum(admission.waiting for admission in state.admissions) if state is not None else 0


class Admission:
    """At most ``slots`` ordinary calls inside at once (``admitted()``); the others wait, in order of
    arrival, before they start. Urgent work (``is_urgent()``) goes in at once and takes no slot. One
    object holds the slots and the count of those waiting for one, so two admissions never share
    either. Used on one event loop (its semaphore is bound to the first loop that waits on it)."""

    __slots__ = ("__weakref__", "_free", "slots", "waiting")

    def __init__(self, slots: int | None = None) -> None:
        self.slots = slots if slots is not None else default_slots()
        if self.slots < 1:
            raise ValueError("Admission: slots >= 1")
        self.waiting = 0  # ordinary calls waiting for a slot now
        self._free = asyncio.Semaphore(self.slots)

    @asynccontextmanager
    async def admitted(self) -> AsyncIterator[None]:
        """Run what is inside once a slot is free (at once for urgent work). A timeout the caller
        starts inside does not count the wait."""
        if _URGENT.get():
            yield
            return
        _here().admissions.add(self)
        self.waiting += 1
        try:
            await self._free.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._free.release()


def default_workers() -> int:
    """As many threads as asyncio's own default executor has."""
    return min(32, (os.cpu_count() or 1) + 4)


_Item = tuple["Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class PriorityExecutor(ThreadPoolExecutor):
    """A thread pool whose queued calls start urgent first (``is_urgent()`` when submitted), first
    come first served within each class. Each ``submit`` queues one slot with the pool; a slot, when
    a thread takes it, runs the most urgent call waiting, so the pool's own queue never decides."""

    def __init__(self, max_workers: int | None = None, thread_name_prefix: str = "") -> None:
        super().__init__(max_workers or default_workers(), thread_name_prefix=thread_name_prefix)
        self._lanes_lock = threading.Lock()
        self._urgent: deque[_Item] = deque()
        self._ordinary: deque[_Item] = deque()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        item: _Item = (future, fn, args, kwargs)
        lane = self._urgent if is_urgent() else self._ordinary
        with self._lanes_lock:
            lane.append(item)
        try:
            super().submit(self._run_next)
        except BaseException:  # shut down: the call never runs
            with self._lanes_lock:
                lane.remove(item)
            raise
        return future

    def waiting(self) -> tuple[int, int]:
        """Calls queued and not started: (urgent, ordinary)."""
        with self._lanes_lock:
            return len(self._urgent), len(self._ordinary)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            with self._lanes_lock:
                dropped = [*self._urgent, *self._ordinary]
                self._urgent.clear()
                self._ordinary.clear()
            for future, *_ in dropped:
                future.cancel()
        super().shutdown(wait=wait, cancel_futures=cancel_futures)

    def _run_next(self) -> None:
        with self._lanes_lock:
            if not self._urgent and not self._ordinary:
                return  # dropped by a shutdown that cancelled what was queued
            future, fn, args, kwargs = (self._urgent or self._ordinary).popleft()
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:
            future.set_exception(exc)
        else:
            future.set_result(result)


def install(loop: asyncio.AbstractEventLoop) -> PriorityExecutor:
    """Make a ``PriorityExecutor`` the default executor of ``loop`` (``asyncio.to_thread`` and
    ``run_in_executor(None, ...)``), unless it is one already; the loop shuts it down when it closes,
    as it would its own. A default executor the loop had made before is shut down once the calls it
    was given are done (new calls go to the new one)."""
    current = getattr(loop, "_default_executor", None)  # asyncio keeps it there; None until first used
    if isinstance(current, PriorityExecutor):
        return current
    executor = PriorityExecutor(thread_name_prefix="asyncio")
    loop.set_default_executor(executor)
    if isinstance(current, ThreadPoolExecutor):
        current.shutdown(wait=False)
    return executor
