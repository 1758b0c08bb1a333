"""The loop's default executor with urgent calls first (``sidecar.retrieval.priority``): urgent calls
start before ordinary ones queued earlier, each class in order of arrival, nothing queued is lost
or left waiting, and the mark follows a task into ``asyncio.to_thread``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future

import pytest

from sidecar.retrieval import priority
from sidecar.retrieval.priority import PriorityExecutor, urgent
from tests.support.waiting import async_wait_until

#: A guard against a hang, never a measure: every wait below waits on state.
HANG_S = 60.0


@pytest.fixture
def pool() -> Iterator[PriorityExecutor]:
    executor = PriorityExecutor(1, thread_name_prefix="test-priority")
    yield executor
    executor.shutdown(wait=True, cancel_futures=True)


def _hold(pool: PriorityExecutor) -> tuple[threading.Event, Future[bool]]:
    """Keep the pool's one thread busy until the event is set."""
    gate, started = threading.Event(), threading.Event()

    def held() -> bool:
        started.set()
        return gate.wait(HANG_S)

    future = pool.submit(held)
    assert started.wait(HANG_S)
    return gate, future


def _recorder(order: list[str]) -> Callable[[str], str]:
    def record(name: str) -> str:
        order.append(name)
        return name

    return record


def test_urgent_calls_start_before_ordinary_ones_queued_earlier(pool: PriorityExecutor) -> None:
    gate, held = _hold(pool)
    order: list[str] = []
    record = _recorder(order)
    futures = [pool.submit(record, f"ordinary {i}") for i in range(3)]
    with urgent():
        futures += [pool.submit(record, f"urgent {i}") for i in range(2)]
    futures.append(pool.submit(record, "ordinary 3"))
    assert pool.waiting() == (2, 4)
    gate.set()
    assert held.result(HANG_S) is True
    assert [f.result(HANG_S) for f in futures] == [
        *(f"ordinary {i}" for i in range(3)),
        "urgent 0",
        "urgent 1",
        "ordinary 3",
    ]
    assert order == ["urgent 0", "urgent 1", "ordinary 0", "ordinary 1", "ordinary 2", "ordinary 3"]
    assert pool.waiting() == (0, 0)


def test_a_failing_call_and_a_cancelled_one_leave_the_rest_to_run(pool: PriorityExecutor) -> None:
    gate, held = _hold(pool)

    def fail() -> None:
        raise ValueError("boom")

    failing = pool.submit(fail)
    dropped = pool.submit(str, "never")
    after = pool.submit(str, "ran")
    assert dropped.cancel()
    gate.set()
    held.result(HANG_S)
    with pytest.raises(ValueError, match="boom"):
        failing.result(HANG_S)
    assert after.result(HANG_S) == "ran"
    assert dropped.cancelled()
    assert pool.waiting() == (0, 0)


def test_shutdown_cancelling_what_is_queued_cancels_both_lanes_and_refuses_new_calls() -> None:
    executor = PriorityExecutor(1)
    gate, held = _hold(executor)
    queued = [executor.submit(str, 1)]
    with urgent():
        queued.append(executor.submit(str, 2))
    closing = threading.Thread(target=executor.shutdown, kwargs={"wait": True, "cancel_futures": True})
    closing.start()
    for future in queued:
        with pytest.raises(CancelledError):
            future.result(HANG_S)
    gate.set()
    closing.join(HANG_S)
    assert not closing.is_alive() and held.result(HANG_S) is True
    assert executor.waiting() == (0, 0)
    with pytest.raises(RuntimeError):
        executor.submit(str, 3)
    assert executor.waiting() == (0, 0)


async def test_the_mark_follows_a_task_into_to_thread_and_the_loop_keeps_one_such_executor() -> None:
    loop = asyncio.get_running_loop()
    executor = priority.install(loop)
    assert priority.install(loop) is executor
    gates = [threading.Event() for _ in range(priority.default_workers())]
    held = [asyncio.ensure_future(asyncio.to_thread(g.wait, HANG_S)) for g in gates]
    order: list[str] = []
    record = _recorder(order)
    ordinary = [asyncio.ensure_future(asyncio.to_thread(record, f"ordinary {i}")) for i in range(3)]

    async def urgent_call() -> str:
        with urgent():
            return await asyncio.to_thread(record, "urgent")

    jumped = asyncio.ensure_future(urgent_call())
    await async_wait_until(lambda: sum(executor.waiting()) == 4)
    assert not priority.is_urgent()  # the mark stayed in its task
    gates[0].set()  # one thread free: the urgent call is the first it takes
    async with asyncio.timeout(HANG_S):
        assert await jumped == "urgent"
        for gate in gates[1:]:
            gate.set()
        await asyncio.gather(*held, *ordinary)
    assert order[0] == "urgent" and sorted(order[1:]) == [f"ordinary {i}" for i in range(3)]
