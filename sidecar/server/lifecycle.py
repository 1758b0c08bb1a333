"""The tiers' lifecycle inside the server: opening them at start (``OpeningTiers``) and handing
back memory they do not need while the sidecar is idle (``IdleRelease``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping

import structlog

from sidecar.heap import release_free_memory
from sidecar.index.db import shrink_memory
from sidecar.index.tier import Tier
from sidecar.server.lock import lock_tiers
from sidecar.settings import Settings
from sidecar.write.durable import sweep_temp_files

__all__ = ["IdleRelease", "OpeningTiers"]

log = structlog.get_logger("sidecar.lifecycle")


class IdleRelease:
    """Once the sidecar has been idle for ``after`` seconds (no response since), hand back memory it
    holds but does not need while idle: each tier writer's SQLite page cache (``PRAGMA
    shrink_memory``, on the writer thread, in order with its writes; the integrity check at start
    fills it), the page caches of whatever else registered in ``others`` (the journal), and glibc's
    free heap pages (``malloc_trim``). Armed at start and by every response; a steady stream of
    requests never triggers it."""

    def __init__(self, tiers: Mapping[str, Tier], after: float = 0.25) -> None:
        self.tiers = tiers
        self.after = after
        self.others: list[Callable[[], Awaitable[None]]] = []
        self.releases = 0
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.touch()

    def touch(self) -> None:
        """Something happened: release only ``after`` seconds from now."""
        self._last = self._loop.time()
        if self._timer is None and not self._closed:
            self._timer = self._loop.call_at(self._last + self.after, self._due)

    def _due(self) -> None:
        self._timer = None
        if self._loop.time() < self._last + self.after:
            self._timer = self._loop.call_at(self._last + self.after, self._due)
        elif self._task is None or self._task.done():
            self._task = self._loop.create_task(self._release(), name="idle-release")

    async def _release(self) -> None:
        try:
            for tier in self.tiers.values():
                await tier.write_with(shrink_memory)
                await asyncio.to_thread(tier.index.release_reader_memory)
            for release in self.others:
                await release()
            await asyncio.to_thread(release_free_memory)
            self.releases += 1
        except Exception:  # a tier failing is reported by the requests that use it
            log.warning("sidecar.release_failed", exc_info=True)

    async def aclose(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            await self._task


class OpeningTiers:
    """The tiers this process indexes (``agent``; ``crew`` too on a lead), each opening on its own
    writer thread from the moment this is made (inside a running loop): each tier dir is locked
    first (``TierLocked`` if another sidecar serves it: then nothing was touched), temp files left
    by a crash are swept, then the index is opened, checked and reconciled with the files. The
    locks are held until ``release``, after the tiers close."""

    def __init__(self, settings: Settings) -> None:
        roots = settings.held_tiers
        self.locks = lock_tiers(roots.values())
        self.tiers = {name: Tier(name, root) for name, root in roots.items()}
        self._taken = False
        # Memory off: the tiers' files are not read into the index (nor are they searched).
        self.indexing = settings.memory_enabled
        self._opening = [asyncio.ensure_future(self._open(tier, self.indexing)) for tier in self.tiers.values()]

    @staticmethod
    async def _open(tier: Tier, indexing: bool) -> None:
        swept = sweep_temp_files(tier.root)
        if swept:
            log.warning("write.temp_swept", tier=tier.name, files=swept)
        integrity = await tier.open(postings=False, sync=indexing)  # postings once the server answers: see run()
        log.info("index.opened", tier=tier.name, dir=str(tier.root), integrity=integrity)

    async def wait(self) -> dict[str, Tier]:
        """Every tier, open: from now on the caller closes them. If one failed, the others are
        closed again and its error is raised."""
        self._taken = True
        outcomes = await asyncio.gather(*self._opening, return_exceptions=True)
        failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
        if failures:
            for tier, outcome in zip(self.tiers.values(), outcomes, strict=True):
                if not isinstance(outcome, BaseException):
                    await tier.close()
            self.release()
            raise failures[0]
        return self.tiers

    def release(self) -> None:
        """Let the tier dirs' locks go (once the tiers are closed)."""
        for lock in self.locks:
            lock.release()

    async def close_if_unused(self) -> None:
        """Close the tiers if no app took them (it failed before its first context ran)."""
        if self._taken:
            return
        with contextlib.suppress(Exception):  # the start-up error being raised matters more
            for tier in (await self.wait()).values():
                await tier.close()
        self.release()
