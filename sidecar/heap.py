"""glibc malloc controls: fewer arenas, fixed thresholds, and freed heap pages handed back to the system.

Elsewhere (macOS, musl) both are no-ops that say so by returning False.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["MALLOC_ARENA_MAX", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "release_free_memory", "tune_malloc"]

#: glibc makes up to 8 malloc arenas per core, one per thread that allocates concurrently; the
#: sidecar's threads (event loop, tier writer and readers, journal, executor) are mostly idle.
MALLOC_ARENA_MAX = 2
#: Blocks of this size or more get a mapping of their own, returned to the system when freed.
#: glibc starts at 128 KB and raises it to the size of each mapped block freed (up to 32 MB): once
#: the postings build frees its batches, later arrays of megabytes would land in a heap, and the
#: small blocks allocated between them would keep megabytes of it resident for good. Set, it
#: stays; a search's arrays (8 bytes a chunk: 0.8 MB at 100k chunks) stay under it, in the heap.
MMAP_THRESHOLD = 1 << 20
#: Free memory at the top of a heap kept for reuse before free() gives it back. Setting the mmap
#: threshold fixes this one too, at glibc's 128 KB, which would give back and fetch again a
#: search's arrays on every search at 100k chunks. Kept small all the same: malloc_trim (the idle
#: release) shrinks only the main heap's top, a thread arena's top only free() does.
TRIM_THRESHOLD = 2 << 20
# mallopt parameter numbers, from glibc's malloc.h
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018  (glibc only: musl has neither)
    except (OSError, AttributeError):
        return None
    return libc


def tune_malloc(arena_max: int = MALLOC_ARENA_MAX) -> bool:
    """Cap glibc's malloc arenas and fix its mmap and trim thresholds; call before any thread
    starts. False where it does not apply."""
    libc = _libc()
    if libc is None:
        return False
    settings = ((_M_ARENA_MAX, arena_max), (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return all([libc.mallopt(param, value) == 1 for param, value in settings])


def release_free_memory() -> bool:
    """Give free heap pages back to the system (glibc ``malloc_trim``); True if any were."""
    libc = _libc()
    return libc is not None and libc.malloc_trim(0) == 1
