"""Urgent work first in the threads a search's steps queue for.

A search waiting for a write (``after_seq``) is what stands between an agent's write and its next
turn; under a crowd of ordinary searches, its steps off the event loop (the query's model run, the
ranking, the snippets) would each wait behind every step the crowd queued before it. ``urgent()``
marks the current task (and the tasks and thread calls it starts) as such a search; the event
loop's default executor, a ``PriorityExecutor``, then starts its queued calls urgent first, in the
order they came within each class. Nothing is gated or dropped: ordinary work keeps the threads
urgent work leaves, and a call already running is never interrupted.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

__all__ = ["PriorityExecutor", "default_workers", "install", "is_urgent", "urgent"]

T = TypeVar("T")
_URGENT: ContextVar[bool] = ContextVar("sidecar_urgent", default=False)


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
