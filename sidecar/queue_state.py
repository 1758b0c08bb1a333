"""The reindex queue's state, shared with read workers through a small memory-mapped file.

Every search answer carries ``index: {indexed_seq, pending, lag_ms}``, which only the primary
process (the one with the queue) knows. It publishes the three numbers it has into a 32-byte file
after every change; a read worker reads them per search. The numbers are stored with a checksum
of them, and a reader retries until the checksum matches: a read that overlapped a write (a torn
read) is never used. A seqlock (a version before and after) was tried first and is not enough
from Python: ``struct`` copies with ``memcpy``, whose string-move stores and loads the CPU may
reorder, and the tests caught a torn read with equal versions. ``lag_ms`` is computed by the
reader from the oldest queued item's ``time.monotonic()``, a clock every process on the machine
shares.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from pathlib import Path
from typing import Any

__all__ = ["QueueStateFile"]

# latest seq, indexed seq, oldest queued item's monotonic time (0.0: none queued), checksum
_LAYOUT = struct.Struct("<QQdQ")
_MASK = (1 << 64) - 1


def _checksum(latest: int, indexed: int, oldest: float) -> int:
    (bits,) = struct.unpack("<Q", struct.pack("<d", oldest))
    mixed = (latest * 0x9E3779B97F4A7C15) ^ (indexed * 0xC2B2AE3D27D4EB4F) ^ (bits * 0x165667B19E3779F9)
    return int((mixed ^ 0x5BD1E9955BD1E995) & _MASK)


class QueueStateFile:
    """One side of the shared state: ``create=True`` for the primary (the writer), else a reader."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        flags = os.O_RDWR | (os.O_CREAT | os.O_TRUNC if create else 0)
        fd = os.open(path, flags, 0o600)
        try:
            if create:
                os.ftruncate(fd, _LAYOUT.size)
            self._map = mmap.mmap(fd, _LAYOUT.size)
        finally:
            os.close(fd)

    def publish(self, latest_seq: int, indexed_seq: int, oldest_enqueued: float | None) -> None:
        oldest = oldest_enqueued or 0.0
        _LAYOUT.pack_into(self._map, 0, latest_seq, indexed_seq, oldest, _checksum(latest_seq, indexed_seq, oldest))

    def read(self) -> tuple[int, int, float | None]:
        """(latest seq, indexed seq, oldest queued monotonic time or None)."""
        deadline = 0.0
        while True:
            latest, indexed, oldest, check = _LAYOUT.unpack_from(self._map, 0)
            if check == _checksum(latest, indexed, oldest):
                return latest, indexed, (oldest or None)
            # A write is under way (it takes a microsecond); never written, or garbage: give up.
            now = time.monotonic()
            deadline = deadline or now + 0.1
            if now > deadline:
                raise RuntimeError(f"{self.path}: no consistent queue state (never published?)")
            time.sleep(0)

    def state(self) -> dict[str, Any]:
        """The ``index`` object of a search answer, as ``ReindexQueue.state()`` makes it."""
        latest, indexed, oldest = self.read()
        lag = round((time.monotonic() - oldest) * 1000, 3) if oldest is not None else 0.0
        return {"indexed_seq": indexed, "pending": latest - indexed, "lag_ms": lag}

    def close(self) -> None:
        self._map.close()
