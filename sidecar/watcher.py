"""Watch a tier dir and feed the reindex queue, so shell writes, editor saves, deletes and renames
all reach the index. If the watcher dies it is restarted and a full reconcile is queued; a
periodic reconcile catches anything a watcher missed.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import structlog
import watchfiles

from sidecar.reindex_queue import ReindexQueue
from sidecar.tierfiles import is_tier_file

__all__ = ["TierWatcher"]

log = structlog.get_logger("sidecar.watcher")
RESTART_DELAY = 0.5


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
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.running = False

    def _filter(self, _change: watchfiles.Change, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        return is_tier_file(rel)

    async def _watch_forever(self) -> None:
        while not self._stop.is_set():
            try:
                await self._watch_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.running = False
                self.restarts += 1
                log.warning("watcher.restarted", tier=self.tier, error=f"{type(exc).__name__}: {exc}")
                await asyncio.sleep(RESTART_DELAY)
                self.root.mkdir(parents=True, exist_ok=True)
                self.queue.put(self.tier, None, "watcher-restart")

    async def _watch_once(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.running = True
        async for changes in watchfiles.awatch(
            self.root,
            watch_filter=self._filter,
            step=self.step_ms,
            debounce=self.debounce_ms,
            stop_event=self._stop,
            recursive=True,
            ignore_permission_denied=True,
        ):
            for rel in sorted({Path(p).relative_to(self.root).as_posix() for _, p in changes}):
                self.queue.put(self.tier, rel, "watcher")
        if not self._stop.is_set():
            raise RuntimeError("watch ended: the tier dir went away")

    async def _reconcile_forever(self) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(self.reconcile_s)
            self.queue.put(self.tier, None, "periodic")
