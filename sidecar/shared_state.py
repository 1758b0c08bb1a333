"""State a read worker and the primary share through small memory-mapped files.

Every search answer carries ``index: {indexed_seq, pending, lag_ms}``, which only the primary
process (the one with the queue) knows: it publishes the queue's numbers after every change
(``QueueStateFile``) and a read worker reads them per search. The other way, each worker publishes
what it answered (``WorkerStats``: searches, their latency histogram, forwards, handoffs), which the
primary's ``/metrics`` exports, so searches a worker answered are not missing from the metrics.

Each file is one record with one writer. The values are stored with a checksum of their bytes and
a reader retries until the checksum matches, so a read that overlapped a write (a torn read) is
never used. A seqlock (a version before and after) was tried first and is not enough from Python:
``struct`` copies with ``memcpy``, whose string-move stores and loads the CPU may reorder, and the
tests caught a torn read with equal versions. ``lag_ms`` is computed by the reader from the
oldest queued item's ``time.monotonic()``, a clock every process on the machine shares.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["LATENCY_BUCKETS", "QueueStateFile", "SharedRecord", "WorkerStats"]

# The bucket bounds (seconds) of the search and request histograms, here rather than in
# sidecar.metrics so a read worker need not import prometheus_client to fill its own.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

_CHECK = struct.Struct("<8s")


class SharedRecord:
    """One fixed-layout record in a file: ``create=True`` for its one writer, else a reader."""

    def __init__(self, path: Path, layout: struct.Struct, *, create: bool = False) -> None:
        self.path = path
        self.layout = layout
        size = layout.size + _CHECK.size
        if create:
            # A new file, never the old one truncated: a reader still mapping the old one would
            # get SIGBUS past its new end.
            path.unlink(missing_ok=True)
        fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
        try:
            if create:
                os.ftruncate(fd, size)
            self._map = mmap.mmap(fd, size)
        finally:
            os.close(fd)

    def write(self, *values: Any) -> None:
        data = self.layout.pack(*values)
        self._map[: len(data) + _CHECK.size] = data + hashlib.blake2b(data, digest_size=8).digest()

    def read(self) -> tuple[Any, ...]:
        """The last record written; RuntimeError if there is none (never written, or garbage)."""
        size = self.layout.size
        deadline = 0.0
        while True:
            raw = self._map[: size + _CHECK.size]
            if hashlib.blake2b(raw[:size], digest_size=8).digest() == raw[size:]:
                return self.layout.unpack(raw[:size])
            now = time.monotonic()  # a write is under way: it takes a microsecond
            deadline = deadline or now + 0.1
            if now > deadline:
                raise RuntimeError(f"{self.path}: no consistent record (never written?)")
            time.sleep(0)

    def close(self) -> None:
        self._map.close()


class QueueStateFile(SharedRecord):
    """The reindex queue's state: latest seq, indexed seq, the oldest queued item's monotonic
    time (0.0: none queued)."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        super().__init__(path, struct.Struct("<QQd"), create=create)

    def publish(self, latest_seq: int, indexed_seq: int, oldest_enqueued: float | None) -> None:
        self.write(latest_seq, indexed_seq, oldest_enqueued or 0.0)

    def queue(self) -> tuple[int, int, float | None]:
        """(latest seq, indexed seq, oldest queued monotonic time or None)."""
        latest, indexed, oldest = self.read()
        return latest, indexed, (oldest or None)

    def state(self) -> dict[str, Any]:
        """The ``index`` object of a search answer, as ``ReindexQueue.state()`` makes it."""
        latest, indexed, oldest = self.queue()
        lag = round((time.monotonic() - oldest) * 1000, 3) if oldest is not None else 0.0
        return {"indexed_seq": indexed, "pending": latest - indexed, "lag_ms": lag}


class WorkerStats(SharedRecord):
    """What one read worker answered: searches (count, seconds, a count per latency bucket),
    requests it forwarded to the primary and connections it handed to it. Counts start at zero
    with each worker process."""

    def __init__(self, path: Path, buckets: Sequence[float], *, create: bool = False) -> None:
        self.buckets = tuple(buckets)
        super().__init__(path, struct.Struct(f"<QQQd{len(self.buckets)}Q"), create=create)
        self.searches = 0
        self.forwarded = 0
        self.handed_off = 0
        self.seconds = 0.0
        self.per_bucket = [0] * len(self.buckets)  # not cumulative; +Inf is searches - sum
        if create:
            self.flush()

    def observe(self, seconds: float) -> None:
        self.searches += 1
        self.seconds += seconds
        for i, bound in enumerate(self.buckets):
            if seconds <= bound:
                self.per_bucket[i] += 1
                break
        self.flush()

    def forward(self) -> None:
        self.forwarded += 1
        self.flush()

    def hand_off(self) -> None:
        self.handed_off += 1
        self.flush()

    def flush(self) -> None:
        self.write(self.searches, self.forwarded, self.handed_off, self.seconds, *self.per_bucket)

    def snapshot(self) -> tuple[int, int, int, float, list[int]]:
        """(searches, forwarded, handed off, seconds, per-bucket counts) as last published."""
        searches, forwarded, handed_off, seconds, *per_bucket = self.read()
        return searches, forwarded, handed_off, seconds, per_bucket
