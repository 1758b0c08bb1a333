"""Wait for a state instead of sleeping for a guess at how long it takes.

``wait_until(predicate)`` polls ``predicate`` every ``interval`` seconds until it returns something
truthy (which it returns) or ``timeout`` seconds pass, then fails the test saying what it waited for
and what the predicate last returned. ``await async_wait_until(predicate)`` is the same on an event
loop (the predicate may be a plain function or a coroutine function); it sleeps between polls, so
the loop keeps serving the server under test.
The timeout is a hang guard (``HANG_GUARD_S`` unless a test names another): a host kept busy by
other work delays the state many times over without anything being wrong, so a wait never bounds
how soon the state comes (a test that bounds a latency measures it: ``tests.support.lag``).
``wait_while_growing(read, target)`` waits for a count that moves towards ``target`` (files copied,
rows written) for as long as it keeps moving: a loaded host slows the work, it does not stop it.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

__all__ = ["HANG_GUARD_S", "async_wait_until", "describe", "wait_until", "wait_while_growing"]

T = TypeVar("T")
#: How long a wait for a state lasts before it fails the test, unless the test names another.
HANG_GUARD_S = 60.0


def describe(predicate: Callable[[], object], message: str | Callable[[], str] | None) -> str:
    """What a wait waits for: ``message`` (called if callable), else the predicate's name or the
    source line of a lambda."""
    if callable(message):
        return message()
    if message:
        return message
    name = getattr(predicate, "__qualname__", None) or repr(predicate)
    if name.endswith("<lambda>"):
        try:
            return inspect.getsource(predicate).strip()  # the line with the lambda says what it waits for
        except (OSError, TypeError):
            pass
    return name


def _timed_out(what: str, timeout: float, polls: int, last: object, error: BaseException | None) -> AssertionError:
    detail = f"; last raised {error!r}" if error is not None else f"; last returned {last!r}"
    return AssertionError(f"timed out after {timeout:g}s ({polls} polls) waiting for {what}{detail}")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = HANG_GUARD_S,
    interval: float = 0.01,
    *,
    message: str | Callable[[], str] | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``predicate`` until it is truthy and return its value; fail after ``timeout`` seconds.

    ``message``: what is awaited, for the failure (a callable is called then, so it can show the
    state at the time); by default the predicate's name, or the source line of a lambda.
    ``ignore``: exceptions that mean "not yet" (e.g. a connection refused while a process starts).
    """
    deadline = time.monotonic() + timeout
    polls = 0
    last: object = None
    error: BaseException | None = None
    while True:
        polls += 1
        try:
            value = predicate()
        except ignore as exc:
            error = exc
        else:
            if value:
                return value
            last, error = value, None
        if time.monotonic() >= deadline:
            raise _timed_out(describe(predicate, message), timeout, polls, last, error)
        time.sleep(interval)


@overload
async def async_wait_until(
    predicate: Callable[[], Awaitable[T]],
    timeout: float = ...,  # noqa: ASYNC109
    interval: float = ...,
    *,
    message: str | Callable[[], str] | None = ...,
    ignore: tuple[type[BaseException], ...] = ...,
) -> T: ...


@overload
async def async_wait_until(
    predicate: Callable[[], T],
    timeout: float = ...,  # noqa: ASYNC109
    interval: float = ...,
    *,
    message: str | Callable[[], str] | None = ...,
    ignore: tuple[type[BaseException], ...] = ...,
) -> T: ...


async def async_wait_until(
    predicate: Callable[[], Any],
    timeout: float = HANG_GUARD_S,  # noqa: ASYNC109 -- a polling deadline, the twin of wait_until's
    interval: float = 0.01,
    *,
    message: str | Callable[[], str] | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> Any:
    """``wait_until`` on the event loop: ``predicate`` may return an awaitable, which is awaited."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    polls = 0
    last: object = None
    error: BaseException | None = None
    while True:
        polls += 1
        try:
            value = predicate()
            result = await value if inspect.isawaitable(value) else value
        except ignore as exc:
            error = exc
        else:
            if result:
                return result
            last, error = result, None
        if loop.time() >= deadline:
            raise _timed_out(describe(predicate, message), timeout, polls, last, error)
        await asyncio.sleep(interval)


def wait_while_growing(
    read: Callable[[], int],
    target: int,
    stall: float = 30.0,
    interval: float = 0.1,
    *,
    message: str | Callable[[], str] | None = None,
) -> int:
    """Poll ``read()`` until it reaches ``target`` and return it; fail only when it has not grown
    for ``stall`` seconds (the work stopped), however long it takes while it grows."""
    best = read()
    since = time.monotonic()
    polls = 1
    while best < target:
        time.sleep(interval)
        polls += 1
        now = read()
        if now > best:
            best, since = now, time.monotonic()
        elif time.monotonic() - since >= stall:
            what = f"{describe(read, message)} to reach {target} (no growth for {stall:g}s)"
            raise _timed_out(what, stall, polls, now, None)
    return best
