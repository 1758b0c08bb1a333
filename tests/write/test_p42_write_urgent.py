"""A write is urgent work from its arrival until the index has it (an agent waits on it): ordinary
searches hold back meanwhile (``priority.hold``). A write that wrote nothing (a duplicate, a
refusal) holds nothing once answered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.contract import WriteRequest
from sidecar.errors import CapExceeded
from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from sidecar.retrieval.priority import urgent_pending
from sidecar.settings import Settings
from sidecar.write.service import WriteService
from tests.support.waiting import async_wait_until

WITHIN = 60.0


@pytest.fixture
async def tier(tmp_path: Path) -> AsyncIterator[Tier]:
    root = tmp_path / "memory"
    root.mkdir()
    opened = Tier("agent", root)
    await opened.open()
    yield opened
    await opened.close()


async def test_a_write_holds_until_the_index_has_it(tier: Tier) -> None:
    queue = ReindexQueue({"agent": tier})  # its worker starts later: the write waits to be indexed
    writes = WriteService(Settings(memory_dir=tier.root), queue)
    try:
        before = urgent_pending()
        answer = await writes.write(WriteRequest("agent", "topics/a.md", "- the deploy went out at noon", "append"))
        assert urgent_pending() == before + 1  # answered, not indexed: still urgent
        queue.start()
        assert await queue.wait_for(answer["seq"], WITHIN)
        await async_wait_until(lambda: urgent_pending() == before, WITHIN)  # released once indexed
    finally:
        await queue.drain_and_stop()
        writes.close()


async def test_a_write_that_wrote_nothing_holds_nothing(tier: Tier) -> None:
    queue = ReindexQueue({"agent": tier})
    writes = WriteService(Settings(memory_dir=tier.root, topic_cap_bytes=64), queue)
    try:
        before = urgent_pending()
        with pytest.raises(CapExceeded):
            await writes.write(WriteRequest("agent", "topics/a.md", "x" * 100, "append"))
        assert urgent_pending() == before
        line = "- the deploy of the billing service went out at noon"
        await writes.write(WriteRequest("agent", "topics/b.md", line, "append"))
        duplicate = await writes.write(WriteRequest("agent", "topics/b.md", line, "append"))
        assert "duplicate_of" in duplicate
        assert urgent_pending() == before + 1  # the first write of the line alone, not indexed yet
    finally:
        queue.start()
        await queue.drain_and_stop()
        writes.close()
