"""Watch a tier dir and feed the reindex queue, so shell writes, editor saves, deletes and renames
all reach the index. If the watcher dies it is restarted and a full reconcile is queued; a
periodic reconcile catches anything a watcher missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.index.files import is_tier_file
from sidecar.index.queue import ReindexQueue
from sidecar.tasks import stop_task

if TYPE_CHECKING:
    import watchfiles

__all__ = ["TierWatcher"]

_DATABASE_SUFFIXES = (".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal")
log = structlog.get_logger("sidecar.index.watcher")
RESTART_DELAY = 0.5
ROOT_CHECK_MS = 1000  # how often a watch checks that its tier dir is still the dir it watches


class _HeldDir:
    """The tier dir a watch follows, held open. While it is held its inode cannot be freed, so a
    dir made at the same path later (a restore from a backup) never has its inode number, even on
    a filesystem that hands a freed number to the next new file at once (ext4 does)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        st = os.fstat(self._fd)
        self._id = (st.st_dev, st.st_ino)

    def replaced(self) -> bool:
        """Whether the path no longer names this dir: deleted, moved away, or another in its place."""
        try:
            st = os.stat(self.root)
        except OSError:
            return True
        return (st.st_dev, st.st_ino) != self._id or not stat.S_ISDIR(st.st_mode)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class _WatchEnd(asyncio.Event):
    """The stop event a watch hands to watchfiles, which calls ``is_set`` every step from its own
    thread: set by the watcher's stop, and, checked every ROOT_CHECK_MS, once the tier dir is not
    the dir being watched. The check does not wait for the watch to deliver anything: a replaced
    dir's old inode stays watched while this process holds files in it, and the commits the
    sidecar still makes into those (all filtered out) would keep the watch from ever yielding."""

    def __init__(self, stop: asyncio.Event, held: _HeldDir) -> None:
        super().__init__()
        self._stop = stop
        self._held = held
        self._due = time.monotonic() + ROOT_CHECK_MS / 1000

    def is_set(self) -> bool:
        if super().is_set() or self._stop.is_set():
            return True
        now = time.monotonic()
        if now < self._due:
            return False
        self._due = now + ROOT_CHECK_MS / 1000
        return self._held.replaced()


class TierWatcher:
    """Owns one tier's watch task and its periodic reconcile task; ``start()``/``stop()``."""

    def __init__(
        self, tier: str, root: Path, queue: ReindexQueue, *, step_ms: int, debounce_ms: int, reconcile_s: float
    ) -> None:
        self.tier = tier
        self.root = root
        self.queue = queue
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        self.reconcile_s = reconcile_s
        self.restarts = 0
        self.running = False
        self._prefix = f"{str(root).rstrip('/')}/"  # "/" for the root dir, not "//" (a POSIX root of its own)
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def status(self) -> dict[str, Any]:
        return {"running": self.running, "restarts": self.restarts}

    def start(self, watch: bool = True) -> None:
        if watch:
            self._tasks.append(asyncio.create_task(self._watch_forever(), name=f"watch-{self.tier}"))
        if self.reconcile_s > 0:
            self._tasks.append(asyncio.create_task(self._reconcile_forever(), name=f"reconcile-{self.tier}"))

    async def stop(self) -> None:
        self._stop.set()
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(Exception):
                await stop_task(task)
        self.running = False

    def _filter(self, change: watchfiles.Change, path: str) -> bool:
        """Tier files, and anything else not hidden that appeared or went (a new or removed
        directory), but no SQLite files (the index, the journal) and no mere modification of a
        directory: every commit touches a WAL and every durable write a directory, and taking
        those for a new tree would reconcile the whole tier after each write."""
        if path.endswith(_DATABASE_SUFFIXES):  # every commit of the index, the journal, the graph
            return False
        rel = self.relative(path)
        if rel is None:
            return False
        if is_tier_file(rel):
            return True
        from watchfiles import Change  # loaded by _watch_once already

        if rel.endswith(_DATABASE_SUFFIXES) or change == Change.modified:
            return False  # a directory's own mtime (a temp file came and went) adds nothing
        return rel == "." or not any(p.startswith(".") for p in rel.split("/"))

    def relative(self, path: str) -> str | None:
        """``path`` relative to the tier dir, as ``Path.relative_to`` gives it (None: not under it).
        The watcher's paths are the dir's own joined with names: cut as a string, unless a part is
        empty or ``.``, which ``Path`` drops."""
        if path.startswith(self._prefix):
            rest = path[len(self._prefix) :]
            framed = f"/{rest}/"
            if "//" not in framed and "/./" not in framed:
                return rest
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None

    async def _watch_forever(self) -> None:
        needs_reconcile = False
        while not self._stop.is_set():
            if not self.root.is_dir():  # not recreated: it may be a volume that is not mounted yet
                self.running = False
                await asyncio.sleep(RESTART_DELAY)
                continue
            if needs_reconcile:
                self.queue.put(self.tier, None, "watcher-restart")
                needs_reconcile = False
            try:
                await self._watch_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.running = False
                self.restarts += 1
                needs_reconcile = True
                log.warning("watcher.restarted", tier=self.tier, error=f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(RESTART_DELAY)

    async def _watch_once(self) -> None:
        """Watch the tier dir until it is not the dir this watch began on (then raise), or the stop."""
        import watchfiles  # here: a sidecar started with --watch false never loads it (1 MB)

        held = _HeldDir(self.root)
        try:
            self.running = True
            async for changes in watchfiles.awatch(
                self.root,
                watch_filter=self._filter,
                step=self.step_ms,
                debounce=self.debounce_ms,
                stop_event=_WatchEnd(self._stop, held),
                recursive=True,
                ignore_permission_denied=True,
            ):
                if held.replaced():
                    raise RuntimeError("the tier dir was moved, deleted or replaced")
                self._enqueue({rel for _, p in changes if (rel := self.relative(p)) is not None})
        finally:
            held.close()
        if not self._stop.is_set():
            raise RuntimeError("the tier dir was moved, deleted or replaced")

    def _enqueue(self, rels: set[str]) -> None:
        """Files go on the queue one by one; a directory change (files created inside a new
        directory before it was watched, a removed tree) needs a reconcile of the tier. A file
        still as this sidecar's own write left it is not queued again: that write queued it, and
        an apply of the same bytes would only take the index's writer (a commit) from the next
        write."""
        files = sorted(r for r in rels if is_tier_file(r))
        for rel in files:
            if not self._own_write(rel):
                self.queue.put(self.tier, rel, "watcher")
        if len(files) < len(rels):
            self.queue.put(self.tier, None, "watcher-dir")

    def _own_write(self, rel: str) -> bool:
        try:
            st = os.stat(self.root / rel, follow_symlinks=False)
        except OSError:
            return False  # gone (or unreadable): the queue finds out what that means
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)  # as sidecar.write.durable.stat_key
        return self.queue.own_write(self.tier, rel, key)

    async def _reconcile_forever(self) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(self.reconcile_s)
            self.queue.put(self.tier, None, "periodic")
