"""WAL checkpoints of a tier index off the write path.

SQLite copies its write-ahead log back into the database file (a checkpoint: the pages written,
then two fsyncs) inside the commit that takes the log past 1,000 pages. On the reindex queue that
commit is a write's own apply, so about one write in sixty waited for it before its ``indexed_seq``
moved (traced: the index file's sync alone up to 23 ms on a busy host), always in the tail of
write -> searchable. While the queue runs, a ``Checkpointer`` runs a PASSIVE checkpoint every
``EVERY_COMMITS`` applied batches, on a thread and a connection of its own: SQLite lets it copy
the log while the writer goes on committing (and never waits for a reader), and the writer's next
transaction after a checkpoint that copied everything starts the log over. The writer's own checkpoint stays as a
backstop at ``WRITER_PAGES`` for a stream of writes with no pause at all. A writer connection
opened again later (a healed or rebuilt index) checkpoints at SQLite's 1,000 pages again, as
before, until the queue starts anew.
"""

from __future__ import annotations

import asyncio
import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import structlog

from sidecar.index.tier import Tier

__all__ = ["EVERY_COMMITS", "WRITER_PAGES", "Checkpointer"]

log = structlog.get_logger("sidecar.index.checkpoint")
#: Applied batches between two checkpoints. An append to a daily note writes about 15 pages to the
#: log, so the log stays near the few hundred pages of SQLite's own threshold.
EVERY_COMMITS = 32
#: The writer's own checkpoint, kept as a backstop: a steady stream of writes leaves no moment with
#: the whole log copied, which SQLite needs to start the log over; past this many pages the writer
#: checkpoints in its commit as before, copying only what the last background checkpoint had not.
WRITER_PAGES = 4_000


class Checkpointer:
    """One tier's WAL checkpoints on a thread of their own; ``start``, ``committed``, ``stop``."""

    def __init__(self, tier: Tier, every: int = EVERY_COMMITS) -> None:
        self.tier = tier
        self.every = every
        self.done = 0  # checkpoints run
        self._since = 0
        self._running: Future[None] | None = None
        self._thread: ThreadPoolExecutor | None = None

    async def start(self) -> None:
        """Turn the writer's own checkpoints off (on the writer thread, in order with its writes)."""
        await self.tier.write_with(lambda conn: conn.execute(f"PRAGMA wal_autocheckpoint = {WRITER_PAGES}"))
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{self.tier.name}-checkpoint")

    def committed(self) -> None:
        """A batch was applied: every ``every`` of them, start a checkpoint unless one is running."""
        self._since += 1
        if self._since < self.every or self._thread is None:
            return
        if self._running is not None and not self._running.done():
            return
        self._since = 0
        self._running = self._thread.submit(self._checkpoint, self.tier.index.path)

    async def settled(self) -> None:
        """Once no checkpoint is under way."""
        running = self._running
        if running is not None:
            await asyncio.wrap_future(running)

    async def stop(self) -> None:
        """Wait for a checkpoint under way and stop the thread (the index's close checkpoints last)."""
        thread, self._thread = self._thread, None
        await self.settled()
        if thread is not None:
            thread.shutdown(wait=True)

    def _checkpoint(self, path: Path) -> None:
        try:
            # mode=rw: an index file deleted under us is not created empty here (the queue heals it).
            conn = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True, isolation_level=None, timeout=0)
        except sqlite3.Error:
            return
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            self.done += 1
        except sqlite3.Error as exc:  # busy, or a file being replaced: the next one catches up
            log.info("index.checkpoint_skipped", tier=self.tier.name, error=str(exc))
        finally:
            conn.close()
