"""glibc malloc controls: fewer arenas, and freed heap pages handed back to the system.

Elsewhere (macOS, musl) both are no-ops that say so by returning False.
"""

from __future__ import annotations

import ctypes
import sys

__all__ = ["MALLOC_ARENA_MAX", "release_free_memory", "tune_malloc"]

#: glibc makes up to 8 malloc arenas per core, one per thread that allocates concurrently; the
#: sidecar's threads (event loop, tier writer and readers, journal, executor) are mostly idle.
MALLOC_ARENA_MAX = 2
_M_ARENA_MAX = -8  # mallopt parameter number, from glibc's malloc.h


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
    """Cap glibc's malloc arenas; call before any thread starts. False where it does not apply."""
    libc = _libc()
    return libc is not None and libc.mallopt(_M_ARENA_MAX, arena_max) == 1


def release_free_memory() -> bool:
    """Give free heap pages back to the system (glibc ``malloc_trim``); True if any were."""
    libc = _libc()
    return libc is not None and libc.malloc_trim(0) == 1
