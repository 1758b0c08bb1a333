"""Background embedding of chunks that lack a vector for the current model, in small batches.

Indexing and writes never wait for it: the reindex queue updates BM25 at once and wakes the
batcher (an ``UpdateHook``); the batcher embeds what is missing on the embedder's background path
(in process: one low-priority thread, so searches' query embeddings never queue behind it) and
stores the vectors through the tier's one writer thread. While a tier has a backlog, its progress
(done of total, the recent rate, an ETA) is in GET /memory/status. An embedder that is down, hung
or rate limited is retried with backoff that honours Retry-After; the backlog resumes when it
answers. A new model means every chunk is missing again, so the tier is re-embedded in the
background while BM25 keeps serving.
"""

from __future__ import annotations

import asyncio
import functools
import sqlite3
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.index.tier import Tier
from sidecar.retrieval import priority
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.embed.base import Embedder, EmbedderError, Vectors, embed_in_background
from sidecar.retrieval.embed.progress import Progress
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.settings import Settings
from sidecar.tasks import stop_task

if TYPE_CHECKING:
    # The vector index and the in-process model (numpy, both) are imported when there is an
    # embedder: a BM25-only sidecar never loads them.
    from sidecar.retrieval.vectors import VectorIndex

__all__ = [
    "IN_PROCESS_BATCH",
    "REMOTE_BATCH",
    "STATES",
    "EmbedBatcher",
    "embed_status",
    "open_embedding",
]

log = structlog.get_logger("sidecar.retrieval.batcher")

STATES = ("none", "loading", "ready", "degraded")
#: Chunks per background call in process: the store after each keeps vectors coming into search
#: steadily, and stopping never waits long (queries do not wait for a batch at all).
IN_PROCESS_BATCH = 8
REMOTE_BATCH = 64
#: How long after the queue applies a change the batcher looks for new chunks.
WAKE_DELAY_S = 0.25
#: Least time between two prunes of vectors no chunk uses any more. A prune scans the tier's
#: vectors on its one writer thread, where writes wait behind it; under a stream of writes every
#: backlog is a chunk or two, and pruning after each would hold up a write every few. Orphans
#: take only disk space meanwhile: searches never read them.
PRUNE_EVERY_S = 60.0
#: Safety net for changes the queue does not announce (a full reindex, a model switch): a cheap
#: ``PRAGMA data_version`` check per tier.
POLL_S = 5.0


class EmbedBatcher:
    """One background task per sidecar: embeds every tier's backlog, then sleeps until woken."""

    def __init__(
        self,
        embedder: Embedder,
        health: EmbedderHealth,
        tiers: Mapping[str, Tier],
        vectors: Mapping[str, VectorIndex],
        *,
        batch_size: int = IN_PROCESS_BATCH,
        poll_s: float = POLL_S,
        prune_every_s: float = PRUNE_EVERY_S,
    ) -> None:
        self.embedder = embedder
        self.health = health
        self.tiers = tiers
        self.vectors = vectors
        self.batch_size = batch_size
        self.poll_s = poll_s
        self.prune_every_s = prune_every_s
        self._pruned_at: float | None = None  # time.monotonic() of the last prune
        self.prunes = 0  # prunes done (each once a backlog is done, at most every prune_every_s)
        self.embedded = 0  # vectors stored since start
        self.progress: dict[str, Progress] = {}  # per tier, while it has a backlog
        self._size_before: dict[str, int] = {}  # per tier: its vectors when the backlog was found
        self._wake = asyncio.Event()
        self._wake_timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._stored_since_prune = False

    def start(self) -> None:
        self._wake.set()  # the first pass finds whatever was left unembedded at the last stop
        self._task = asyncio.create_task(self._run(), name="embed-batcher")

    async def stop(self) -> None:
        """Stop at once: vectors are a cache, whatever is not embedded yet is found next start."""
        if self._wake_timer is not None:
            self._wake_timer.cancel()
            self._wake_timer = None
        if self._task is None:
            return
        await stop_task(self._task)
        self._task = None

    def wake(self) -> None:
        self._wake.set()

    async def on_update(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's ``UpdateHook``: something was applied, look for new chunks in
        ``WAKE_DELAY_S`` (a write's own read, a search with ``after_seq``, then runs first instead of
        beside the embedding of the write's chunk; changes within the delay are taken together)."""
        if self._wake_timer is None:
            self._wake_timer = asyncio.get_running_loop().call_later(WAKE_DELAY_S, self._wake_up)

    def _wake_up(self) -> None:
        self._wake_timer = None
        self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                async with asyncio.timeout(self._wait_s()):
                    await self._wake.wait()
            except TimeoutError:
                pass
            self._wake.clear()
            if not self.health.usable():
                continue
            try:
                busy = True
                while busy:  # every step awaits threads, so searches and the queue run in between
                    busy = await self._step()
            except EmbedderError as exc:
                self.health.failed(exc)
            except Exception:
                log.exception("embed.batch_failed")
                self.health.failed(EmbedderError("storing vectors failed"))

    def _wait_s(self) -> float:
        return max(self.health.retry_in(), 0.01) if not self.health.usable() else self.poll_s

    async def _step(self) -> bool:
        """Embed and store one batch from the first tier that has a backlog; False when none has."""
        for name, tier in self.tiers.items():
            vectors = self.vectors[name]
            await asyncio.to_thread(vectors.refresh)
            pending = await asyncio.to_thread(vectors.missing, self.batch_size)
            if not pending:
                self.progress.pop(name, None)
                self._size_before.pop(name, None)
                continue
            if name not in self.progress:
                self.progress[name], self._size_before[name] = Progress(), vectors.size
            progress = self.progress[name]
            from sidecar.retrieval.embed.onnx import OnnxEmbedder

            sentences: dict[str, Vectors] = {}
            if isinstance(self.embedder, OnnxEmbedder):  # its token states give sentence vectors for free
                matrix, parts = await self.embedder.embed_background_sentences(
                    [p.text for p in pending], [p.sentences for p in pending]
                )
                sentences = {p.hash: rows for p, rows in zip(pending, parts, strict=True) if len(rows)}
            else:
                matrix = await embed_in_background(self.embedder, [p.text for p in pending])
            self.health.succeeded()
            model, dim = self.embedder.model_id, int(matrix.shape[1])
            if (vectors.model, vectors.dim) != (model, dim):
                vectors.set_model(model, dim)  # a remote embedder learns its width on the first call
            items = [(p.hash, matrix[i]) for i, p in enumerate(pending)]
            stored = await tier.write_with(
                functools.partial(_store, model=model, dim=dim, items=items, sentences=sentences)
            )
            if stored != len(items):
                raise EmbedderError(f"{len(items) - stored} of {len(items)} vectors had the wrong shape")
            self.embedded += stored
            progress.add(stored)
            self._stored_since_prune = True
            return True
        due = self._pruned_at is None or time.monotonic() - self._pruned_at >= self.prune_every_s
        if self._stored_since_prune and due:  # else a later pass (at the latest the poll) prunes
            self._stored_since_prune = False
            self._pruned_at = time.monotonic()
            await self._prune()
        return False

    async def _prune(self) -> None:
        """Once a backlog is done: drop vectors no chunk uses any more and other models' vectors."""
        from sidecar.retrieval.vectors import VectorIndex

        model = self.embedder.model_id
        for name, tier in self.tiers.items():
            removed = await tier.write_with(functools.partial(VectorIndex.prune, keep_model=model))
            if removed:
                log.info("embed.pruned", tier=name, vectors=removed)
        self.prunes += 1

    def progress_json(self, tiers: list[str]) -> dict[str, Any]:
        """The backlog's progress over ``tiers``: ``done`` (vectors added since it was found) of
        ``total`` (done + backlog, from one snapshot, so it holds still between batches), the rate in
        chunks/s over the last half minute (``chunks_per_s``) and ``eta_s`` at that rate."""
        done = remaining = 0
        rate: float | None = None
        for name in tiers:
            size, backlog = self.vectors[name].counts()
            remaining += backlog
            progress = self.progress.get(name)
            if progress is None:
                continue
            done += max(size - self._size_before[name], 0)
            if (tier_rate := progress.rate()) is not None:
                rate = (rate or 0.0) + tier_rate
        eta = remaining / rate if rate else None
        return {
            "done": done,
            "total": done + remaining,
            "chunks_per_s": round(rate, 2) if rate is not None else None,
            "eta_s": round(eta, 1) if eta is not None else None,
        }


def _store(
    conn: sqlite3.Connection,
    *,
    model: str,
    dim: int,
    items: list[tuple[str, Vectors]],
    sentences: dict[str, Vectors] | None = None,
) -> int:
    from sidecar.retrieval.vectors import VectorIndex

    return VectorIndex.store(conn, model, dim, items, sentences)


@asynccontextmanager
async def open_embedding(
    settings: Settings, tiers: Mapping[str, Tier], embedder: Embedder | None
) -> AsyncIterator[tuple[HybridSearcher, EmbedBatcher | None]]:
    """The hybrid searcher over ``tiers`` and, with an embedder, the background batcher that embeds
    what the queue applies (started; its ``on_update`` is the reindex queue's hook; None without an
    embedder), and the tiers' BM25 postings held in numpy's layout. With an embedder the loop's
    default executor starts urgent calls first (``priority``: a search waiting for a write). On exit the batcher stops and
    the vector indexes close; the embedder stays the caller's."""
    in_process = _in_process(embedder)
    if embedder is not None:  # a search's model run and ranking go to threads: urgent ones first
        priority.install(asyncio.get_running_loop())
    health = EmbedderHealth(embedder, confirmed=in_process)
    vectors: dict[str, VectorIndex] = {}
    if embedder is not None:
        from sidecar.retrieval.vectors import VectorIndex

        dim = embedder.dim
        vectors = {
            name: VectorIndex(t.index.path, embedder.model_id, dim, deltas=t.index.sync.deltas)
            for name, t in tiers.items()
        }
        for tier in tiers.values():
            # numpy is loaded for the dense leg anyway: it scores the BM25 leg in about half the CPU
            # of the postings held in arrays, which only save a process without numpy its import.
            tier.hold_postings_in_numpy()
    hybrid = HybridSearcher(embedder, health, vectors, fusion=settings.fusion)
    batcher = None
    if embedder is not None:
        batch = IN_PROCESS_BATCH if in_process else REMOTE_BATCH
        batcher = EmbedBatcher(embedder, health, tiers, vectors, batch_size=batch)
        batcher.start()
    log.info("embed.started", model=embedder.model_id if embedder else None, fusion=settings.fusion)
    try:
        yield hybrid, batcher
    finally:
        if batcher is not None:
            await batcher.stop()
        for index in vectors.values():
            index.close()


def _in_process(embedder: Embedder | None) -> bool:
    """Whether ``embedder`` is the in-process model (whose module is imported only to ask)."""
    if embedder is None:
        return False
    from sidecar.retrieval.embed.onnx import OnnxEmbedder

    return isinstance(embedder, OnnxEmbedder)


def embed_status(searcher: HybridSearcher, batcher: EmbedBatcher | None, tier: str | None = None) -> dict[str, Any]:
    """``{"embedder": {...}}`` for GET /memory/status: state, model, backlog (one tier or all), and
    while there is a backlog, ``progress``: chunks done of the total since it was found, the rate
    over the last half minute, and an ETA at that rate."""
    health = searcher.health
    embedder = searcher.embedder
    names = [name for name in searcher.vectors if tier is None or name == tier]
    indexes = [searcher.vectors[name] for name in names]
    body: dict[str, Any] = {
        "state": health.state if health is not None else "none",
        "model": embedder.model_id if embedder is not None else None,
        "dim": (embedder.dim or max((v.dim for v in indexes), default=0)) if embedder is not None else None,
        "search": "hybrid" if embedder is not None else "bm25",
        "fusion": searcher.fusion if embedder is not None else None,
        "vectors": sum(v.size for v in indexes),
        "backlog": sum(v.backlog for v in indexes),
    }
    if body["backlog"] and batcher is not None:
        body["progress"] = batcher.progress_json(names)
    if health is not None and health.state == "degraded":
        body["last_error"] = health.last_error
        body["retry_in_s"] = health.retry_in()
    return {"embedder": body}
