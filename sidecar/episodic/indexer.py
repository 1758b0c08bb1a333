"""Embedding new qualifying journal entries: ``index_new`` and the background ``Indexer``.

An embedder error skips the rest of the run and leaves the entries unindexed; the next run (the
next append, a retry a minute later, or the 6-hour sweep) picks them up again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import structlog

from sidecar.clock import utcnow
from sidecar.episodic.entry import StoredEntry
from sidecar.episodic.relations import similar_edges
from sidecar.episodic.store import JournalStore, NewEmbedding
from sidecar.retrieval.embed.base import Embedder, EmbedderError, EmbedderUnavailable, embed_in_background
from sidecar.tasks import stop_task

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = ["DailyJob", "IndexRun", "Indexer", "embed_text", "index_new", "run_index"]

log = structlog.get_logger(__name__)
BATCH_SIZE = 32
_PAYLOAD_TEXT_CHARS = 1000
#: A job the Indexer runs once a day (decay, health snapshots), given the current time.
DailyJob = Callable[[datetime], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class IndexRun:
    indexed: int
    error: EmbedderError | None = None


def embed_text(entry: StoredEntry) -> str:
    """What gets embedded: the summary, then the payload's text values (keys and syntax are noise)."""
    parts: list[str] = []
    stack: list[object] = [entry.payload]
    while stack and sum(map(len, parts)) < _PAYLOAD_TEXT_CHARS:
        value = stack.pop(0)
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, list):
            stack += value
    payload_text = " ".join(parts)[:_PAYLOAD_TEXT_CHARS]
    return f"{entry.summary}\n{payload_text}" if payload_text else entry.summary


async def run_index(
    store: JournalStore, embedder: Embedder, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> IndexRun:
    """Embed every unindexed entry that passes the filter, in batches; link ``similar`` edges."""
    indexed = 0
    seen: set[str] = set()
    while True:
        batch = [e for e in await store.unindexed(embedder.model_id, batch_size) if e.id not in seen]
        if not batch:
            return IndexRun(indexed)
        seen.update(e.id for e in batch)
        try:
            vectors = await _embed(embedder, batch)
        except EmbedderError as exc:
            log.warning("episodic.index_skipped", error=str(exc), pending=len(batch), indexed=indexed)
            return IndexRun(indexed, exc)
        pairs = list(zip(batch, vectors, strict=True))
        edges = await similar_edges(store, embedder.model_id, pairs)
        rows = [NewEmbedding(e.id, v, embedder.model_id, e.base_importance) for e, v in pairs]
        await store.add_embeddings(rows, edges, now or utcnow())
        indexed += len(rows)
        log.info("episodic.indexed", entries=len(rows), similar_edges=len(edges))


async def index_new(
    store: JournalStore, embedder: Embedder, *, now: datetime | None = None, batch_size: int = BATCH_SIZE
) -> int:
    """Embed unindexed qualifying entries; returns how many were indexed (errors are logged, skipped)."""
    return (await run_index(store, embedder, now=now, batch_size=batch_size)).indexed


async def _embed(embedder: Embedder, batch: list[StoredEntry]) -> list[npt.NDArray[np.float32]]:
    import numpy as np

    vectors = await embed_in_background(embedder, [embed_text(e) for e in batch])
    if vectors.shape != (len(batch), embedder.dim) or not np.isfinite(vectors).all():
        raise EmbedderError(f"embedder returned shape {vectors.shape} for {len(batch)} texts")
    return list(vectors.astype(np.float32))


class Indexer:
    """Embeds new qualifying entries shortly after they are appended, plus a periodic sweep.

    ``notify()`` (called after each append) wakes it; it waits ``debounce`` seconds so a burst of
    appends is embedded in one batch. Every ``sweep`` seconds it runs anyway, and once a day it
    also runs ``daily`` (decay and health snapshots) if given.
    """

    def __init__(
        self,
        store: JournalStore,
        embedder: Embedder | None,
        *,
        sweep: float = 6 * 3600,
        debounce: float = 0.2,
        retry: float = 60.0,
        daily: DailyJob | None = None,
    ) -> None:
        self._store, self._embedder, self._daily = store, embedder, daily
        self._sweep, self._debounce, self._retry = sweep, debounce, retry
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._last_daily: datetime | None = None
        self.indexed_total = 0
        self.runs = 0
        self.ticks = 0  # completed wake-ups of the loop (start-up catch-up included)
        self.last_error: str | None = None

    def notify(self) -> None:
        self._wake.set()

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._loop(), name="episodic-indexer")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await stop_task(task)

    async def run_once(self) -> IndexRun:
        """One indexing run now (also what the loop does on each wake)."""
        if self._embedder is None:
            return IndexRun(0)
        result = await run_index(self._store, self._embedder)
        self.runs += 1
        self.indexed_total += result.indexed
        self.last_error = None if result.error is None else str(result.error)
        return result

    async def _loop(self) -> None:
        delay = 0.0  # catch up on whatever was appended while we were down
        while True:
            with contextlib.suppress(TimeoutError):
                # asyncio.timeout, not wait_for: on Python 3.11, wait_for returns the result when a
                # notify() and stop()'s cancel arrive together, the cancel is lost, and the loop
                # goes back to sleep for hours while stop() waits for it.
                async with asyncio.timeout(delay):
                    await self._wake.wait()
                await asyncio.sleep(self._debounce)
            self._wake.clear()
            delay = await self._tick()
            self.ticks += 1

    async def _tick(self) -> float:
        try:
            result = await self.run_once()
            await self._maybe_daily()
        except Exception as exc:  # a bad run must not kill the loop; it is retried
            log.exception("episodic.indexer_failed")
            self.last_error = repr(exc)
            return self._retry
        if result.error is None:
            return self._sweep
        if isinstance(result.error, EmbedderUnavailable) and result.error.retry_after:
            return max(self._retry, result.error.retry_after)
        return self._retry

    async def _maybe_daily(self) -> None:
        now = utcnow()
        if self._daily is None or (self._last_daily and now - self._last_daily < timedelta(days=1)):
            return
        self._last_daily = now
        await self._daily(now)
