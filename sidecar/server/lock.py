"""One sidecar per tier dir: an exclusive lock on ``.sidecar.lock`` inside the dir.

Two sidecars on one memory dir would both write its index and journal (one ran the other's daily
decay). The lock is taken when the server starts, before anything in the dir is touched (temp
files swept, index opened, journal opened); a second sidecar finds it held and stops there with
``TierLocked`` naming the holder's pid. It is an ``flock``: the kernel drops it when the process
dies, however it dies, so a crash never leaves a stale lock. The file stays (deleting it would
let two processes lock two different files of the same name).

A tier dir the server has to create (a first start) is made ``0700``, whatever the umask.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path

from sidecar.errors import TierLocked

__all__ = ["DIR_MODE", "LOCK_NAME", "TierLock", "lock_tiers"]

LOCK_NAME = ".sidecar.lock"
DIR_MODE = 0o700


class TierLock:
    """The held lock of one tier dir; ``release`` lets it go (closing the file does)."""

    def __init__(self, root: Path, fd: int) -> None:
        self.root = root
        self._fd = fd

    @classmethod
    def take(cls, root: Path) -> TierLock:
        """Lock ``root`` (created if missing), or raise ``TierLocked`` if another process holds it."""
        _make_dir(root)
        fd = os.open(root / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise TierLocked(
                f"another sidecar{holder} already serves {root} (it holds {root / LOCK_NAME}); "
                "this one exits without touching the dir"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(root, fd)

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def lock_tiers(roots: Iterable[Path]) -> list[TierLock]:
    """Lock every dir of ``roots``, or none: if one is held elsewhere, release the others and raise."""
    locks: list[TierLock] = []
    try:
        for root in roots:
            locks.append(TierLock.take(root))
    except BaseException:
        for lock in locks:
            lock.release()
        raise
    return locks


def _make_dir(root: Path) -> None:
    if root.is_dir():
        return
    root.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    os.chmod(root, DIR_MODE)  # mkdir's mode is cut by the umask


def _holder(fd: int) -> str:
    """`` (pid N)`` from the lock file, or nothing if it does not say."""
    text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    return f" (pid {text})" if text.isdigit() else ""
