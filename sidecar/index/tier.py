"""A memory tier as the server sees it: its index on the index database's threads.

Every write-side call (open, reconcile, rebuild, apply) runs on the index database's single writer
thread (:class:`sidecar.db.Database`), in the order it was submitted; searches run on its reader
threads with read-only connections, so a long rebuild never stalls a search.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import structlog

from sidecar.index.sync import HeldHook
from sidecar.index.tier_index import READER_THREADS, RankedChunk, ReconcileResult, TierIndex

__all__ = ["ON_LOOP_POSTINGS", "READER_THREADS", "Tier"]

# Postings a search may score on the event loop: about 0.1 us each in numpy (a small tier's, scored in
# Python, weigh twice as much: ``POSTING_COST``), so at most ~3 ms of loop time.
ON_LOOP_POSTINGS = 30_000
log = structlog.get_logger("sidecar.index.tier")
T = TypeVar("T")


class Tier:
    """One tier (``agent`` or ``crew``) served by this process."""

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.root = root
        self.index = TierIndex(root, name, threaded=True)
        # Set on shutdown: a running rebuild stops and rolls back.
        self.stopping = threading.Event()

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.index.db.on_writer(functools.partial(fn, *args))

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.index.db.on_reader(functools.partial(fn, *args))

    async def open(self, postings: bool = True, *, sync: bool = True) -> str:
        """Open the index. Its in-memory postings are built next on the writer thread (searches use
        FTS5 until then: the same ranking, only slower); ``postings=False`` leaves that to a later
        ``start_postings()`` (the server starts them once it answers, not while it starts).
        ``sync=False``: open it without reading the files into it (memory off)."""
        integrity = await self._write(lambda: self.index.open(sync=sync))
        if postings:
            self.start_postings()
        return integrity

    def tell_held(self, hook: HeldHook) -> None:
        """Have ``hook`` told, before each commit of the index, which bytes the files it changed
        hold (on the writer thread: ``sidecar.index.sync.HeldHook``)."""
        self.index.sync.on_held.append(hook)

    def start_postings(self) -> None:
        self.index.on_writer_thread(self.index.enable_postings)

    def hold_postings_in_numpy(self) -> None:
        """Hold this tier's in-memory postings in numpy's layout at any size: a process with an
        embedder has numpy loaded for the dense search anyway, and numpy scores a search's BM25
        leg in about half the CPU (:meth:`TierIndex.hold_postings_in_numpy`). Queued on the
        writer thread: asked before ``start_postings``, the first build is numpy's."""
        self.index.on_writer_thread(self.index.hold_postings_in_numpy)

    async def reconcile(self) -> ReconcileResult:
        def run() -> ReconcileResult:
            self.index.recover_if_lost()
            return self.index.reconcile(self.stopping.is_set)

        return await self._write(run)

    async def rebuild(self, cancel: Callable[[], bool] | None = None) -> ReconcileResult:
        def stop() -> bool:
            return self.stopping.is_set() or (cancel is not None and cancel())

        def run() -> ReconcileResult:
            self.index.recover_if_lost()
            return self.index.rebuild(stop)

        return await self._write(run)

    async def apply(self, rels: Iterable[str]) -> ReconcileResult:
        return await self.index.db.on_writer(functools.partial(self._apply_now, list(rels)))

    def submit_apply(self, rels: Iterable[str]) -> Future[ReconcileResult]:
        """``apply``, queued on the writer thread from any thread (the write thread hands it its
        write as soon as the file is in place, without the event loop between). RuntimeError once
        the index is closed."""
        return self.index.db.submit(functools.partial(self._apply_now, list(rels)))

    def _apply_now(self, paths: list[str]) -> ReconcileResult:
        self.index.recover_if_lost()  # never write into an index file someone deleted
        return self.index.apply_paths(paths)

    async def write_with(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(writer connection)`` on the writer thread, in order with the index's own writes,
        so companions of the index (chunk vectors) keep it at exactly one writer."""
        return await self._write(lambda: fn(self.index.writer))

    async def search(self, query: str, limit: int, raw_fts: bool = False) -> list[RankedChunk]:
        """BM25 hits. The in-memory postings answer on the event loop when they can (a few hundred
        microseconds, less than the hop to a reader thread and back costs); a reader thread answers
        when they cannot (building, behind the file, a word of several tokens, raw FTS5), and when
        the query's words have so many postings that scoring them would hold the loop for
        milliseconds (``ON_LOOP_POSTINGS``)."""
        if not raw_fts:
            try:
                hits = self.index.search_postings(query, limit, phrases=False, max_postings=ON_LOOP_POSTINGS)
            except sqlite3.DatabaseError:
                hits = None  # the reader thread meets it again, and heals
            if hits is not None:
                return hits
        return await self._healing_read(lambda: self.index.search(query, limit, raw_fts=raw_fts))

    async def status(self) -> dict[str, Any]:
        return await self._healing_read(self.index.status)

    async def _healing_read(self, fn: Callable[[], T]) -> T:
        """Read; if the index file was lost or damaged under us, heal it once and retry."""
        try:
            return await self._read(fn)
        except sqlite3.DatabaseError as exc:
            # Heal on the writer thread; if someone else (a reconcile) already healed it, the retry
            # simply reads the new index.
            if await self._write(self.index.heal, exc):
                log.warning("index.healed", tier=self.name, integrity=self.index.integrity)
            return await self._read(fn)

    async def close(self) -> None:
        self.stopping.set()
        await self._write(self.index.close)
        await self.index.db.aclose()
