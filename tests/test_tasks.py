"""Background tasks stop when told: a cancel is never lost in the sidecar's own waits, and
``stop_task`` ends a task even when a cancel is lost on the way (a sidecar that ignored SIGTERM
held a CI run until its limit)."""

from __future__ import annotations

import ast
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from sidecar.tasks import stop_task
from tests.support.waiting import HANG_GUARD_S

ROOT = Path(__file__).resolve().parent.parent


async def _ready() -> int:
    return 1


async def _stubborn(started: asyncio.Event) -> None:
    """A task that lets its first two cancels go (as a lost cancel would) and ends on its third."""
    started.set()
    for _ in range(2):
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            continue
    await asyncio.sleep(3600)


async def _one_cancel(rounds: Callable[[], Awaitable[None]], turns: int, wait: float = HANG_GUARD_S) -> bool:
    """Start ``rounds``, let it run ``turns`` turns of the loop, cancel it once and give it
    ``wait`` seconds: whether it ended (then clean up either way). A task that lost the cancel
    runs on for good, so the default is a hang guard: a busy host can delay one that ends."""
    task = asyncio.create_task(rounds())
    for _ in range(turns):
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=wait)
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.01)
    return bool(done)


async def test_a_wait_bounded_by_asyncio_timeout_keeps_every_cancel() -> None:
    """Why the sidecar has no ``asyncio.wait_for``: on Python 3.11 a round loop bounded by it
    loses a single cancel at some points of its round; bounded by ``asyncio.timeout``, never."""

    async def with_wait_for() -> None:
        while True:
            await asyncio.wait_for(_ready(), 10)
            await asyncio.sleep(0)

    async def with_timeout() -> None:
        while True:
            async with asyncio.timeout(10):
                await _ready()
            await asyncio.sleep(0)

    assert all([await _one_cancel(with_timeout, turns) for turns in range(8)])
    if sys.version_info < (3, 12):
        assert not all([await _one_cancel(with_wait_for, turns, wait=0.2) for turns in range(8)])


async def test_stop_task_ends_a_task_that_lost_its_cancels() -> None:
    """A task that lets its first two cancels go (as a library's lost cancel does) runs on after
    ``task.cancel()``; ``stop_task`` cancels it again until it ends."""
    started = asyncio.Event()
    task = asyncio.create_task(_stubborn(started))
    await started.wait()
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=0.2)
    assert not done  # one cancel is not enough for it
    async with asyncio.timeout(10):  # the test's own bound
        await stop_task(task)
    assert task.cancelled()


async def test_stop_task_raises_the_tasks_own_error_and_keeps_the_callers_cancel() -> None:
    async def fails() -> None:
        raise ValueError("boom")

    task = asyncio.create_task(fails())
    await asyncio.sleep(0)
    with pytest.raises(ValueError, match="boom"):
        await stop_task(task)

    async def sleeps() -> None:
        await asyncio.sleep(3600)

    inner = asyncio.create_task(sleeps())

    slow = asyncio.create_task(_stubborn(asyncio.Event()))
    stopper = asyncio.create_task(stop_task(slow))
    await asyncio.sleep(0.01)
    stopper.cancel()  # the caller of stop_task is cancelled: it is, and says so
    with pytest.raises(asyncio.CancelledError):
        await stopper
    await stop_task(slow)
    await stop_task(inner)
    assert slow.cancelled() and inner.cancelled()


def test_the_sidecar_bounds_its_waits_with_asyncio_timeout_not_wait_for() -> None:
    """``asyncio.wait_for`` on Python 3.11 loses a cancel when its awaitable finishes in the same
    turn: every wait of the sidecar's is an ``asyncio.timeout`` block instead."""
    found = []
    for path in sorted((ROOT / "sidecar").rglob("*.py")):
        text = path.read_text()
        if "wait_for" not in text:
            continue
        for node in ast.walk(ast.parse(text, str(path))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "wait_for"
                and isinstance(node.value, ast.Name)
                and node.value.id == "asyncio"
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
