"""The FIFO reindex queue: one worker, strict order, fed by writes and by the watcher.

Each item carries a sequence number. The worker takes items in order, applies them to their
tier's index (reading the file as it is *now*, so a later write can never be overtaken by an
earlier one), runs the ``hooks`` (cheap ones: what a search must see with the new text, such as
a file's scanner verdict forgotten), and advances ``indexed_seq``. Searches with ``after_seq``
wait on it: once it has moved, the text is searchable.

The ``after_hooks`` (the journal's ``memory.updated`` entry, the knowledge graph's reading of the
file) run after that, in the same order, on a follower task of their own, which advances
``hooked_seq`` once every one of them has seen the changes up to it. They never hold a search
back; whoever needs what they did waits on ``wait_hooked`` (a graph question does). While the
follower lags, changes of one file waiting for it are taken together (its hooks read the file as
it is now, and see the latest seq). An after-hook may defer its work (the graph lets a changed
file linger before it reads it): its ``catch_up`` does it now, and ``wait_hooked`` awaits every
one of them, so whoever waits on it sees what the after-hooks would have done.

A write of this sidecar may hand its file to the tier's writer thread itself, from the write thread,
as soon as the file is in place (``apply_early``): the index then reads it while the event loop
answers the write, instead of after a trip through the loop. The write's ``put`` takes that apply
up when the file's stat key is the one it left (a later write to the file has its own), its item
carries it, and the
worker takes the apply's result for the file instead of applying it again, but only when every item
of that file in the batch was applied so (an earlier change the watcher saw may be newer than what
the early apply read); ``indexed_seq`` moves in order as before, once the apply is done. Every
apply reads the file as it is now, on the one writer thread in the order submitted, so the index
never goes back to an older text.

On shutdown both are drained before the process exits: nothing acknowledged is left unindexed, and
no applied change is left unannounced.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import structlog

from sidecar.index.checkpoint import Checkpointer
from sidecar.index.tier import Tier
from sidecar.index.tier_index import ReconcileResult

__all__ = ["MAX_BATCH", "Item", "ReindexQueue", "UpdateHook"]

log = structlog.get_logger("sidecar.queue")
MAX_BATCH = 256
BUSY_GIVE_UP_S = 30.0  # a database locked by someone else this long is an error, not a wait
RETRY_FIRST_S = 0.5  # first delay before a failed tier is reconciled again; doubles up to the max
RETRY_MAX_S = 30.0
MAX_WRITTEN = 4096  # own writes remembered for the watcher (forgotten all at once past this)
# Called once per applied change: (tier, path, seq, kind) where kind is added/updated/removed.
UpdateHook = Callable[[str, str, int, str], Awaitable[None]]
Change = tuple[str, str, int, str]  # (tier, path, seq, kind)


@dataclass(frozen=True, slots=True)
class Item:
    seq: int
    tier: str
    path: str | None  # None: reconcile the whole tier
    enqueued: float
    origin: str  # write, watcher, reconcile
    applied: Future[ReconcileResult] | None = None  # the file's apply, handed to the writer thread early


class ReindexQueue:
    def __init__(
        self,
        tiers: dict[str, Tier],
        *,
        hooks: Sequence[UpdateHook] = (),
        after_hooks: Sequence[UpdateHook] = (),
        on_applied: Callable[[str, str, float], None] | None = None,
        catch_up: Sequence[Callable[[], Awaitable[None]]] = (),
    ) -> None:
        self.tiers = tiers
        # Run on the worker before ``indexed_seq`` moves: keep them cheap (no I/O), a write waits.
        self.hooks: list[UpdateHook] = list(hooks)
        # Run by the follower after ``indexed_seq`` moved; ``hooked_seq`` follows them.
        self.after_hooks: list[UpdateHook] = list(after_hooks)
        # Awaited by ``wait_hooked`` once ``hooked_seq`` has moved: the work after-hooks deferred, done now.
        self.catch_up: list[Callable[[], Awaitable[None]]] = list(catch_up)
        # Called with (tier, "apply" | "reconcile", seconds) after each successful index update.
        self.on_applied = on_applied
        # Called with the tier when a change comes from anywhere but this sidecar's own writes (the
        # file watcher, a reconcile): what the write service counts against the caps may be behind.
        self.on_outside: list[Callable[[str], None]] = []
        self._items: deque[Item] = deque()
        self._wakeup = asyncio.Event()
        self._applied = asyncio.Condition()
        self._seq = 0
        self.indexed_seq = 0
        self.hooked_seq = 0
        self.errors = 0
        self._task: asyncio.Task[None] | None = None
        # Applied batches the follower has not announced yet: (the batch's last seq, its changes).
        self._announced: deque[tuple[int, list[Change]]] = deque()
        self._follow = asyncio.Event()
        self._hooked = asyncio.Condition()
        self._follower: asyncio.Task[None] | None = None
        self._closing = False
        # Seq ranges whose apply failed, per tier, until a reconcile of that tier succeeds.
        self._unrepaired: dict[str, list[tuple[int, int]]] = {}
        self._retry: dict[str, asyncio.TimerHandle] = {}
        self._retry_delay: dict[str, float] = {}
        # Files this sidecar wrote itself, as each write left them: (tier, path) -> stat key. The
        # watcher's event for such a write adds nothing (the write's own item reads the file).
        self._written: dict[tuple[str, str], tuple[int, ...]] = {}
        # Files a write thread is putting in place now (``note_writing``), until ``note_written``.
        self._writing: set[tuple[str, str]] = set()
        # Applies the write thread handed to a tier's writer thread (``apply_early``), until the
        # write's ``put``: (tier, path) -> (the file's stat key as the write left it, the apply).
        self._early: dict[tuple[str, str], tuple[tuple[int, ...], Future[ReconcileResult]]] = {}
        self._early_lock = threading.Lock()
        # Each tier's WAL checkpoints, off the applies (``checkpoint.Checkpointer``).
        self._checkpoints: dict[str, Checkpointer] = {}

    # -- producers ---------------------------------------------------------------------------
    def put(self, tier: str, path: str | None, origin: str, written: tuple[int, ...] | None = None) -> int:
        """Queue a file (or, with ``path=None``, a whole-tier reconcile); return its seq. ``written``:
        the file's stat key as this sidecar's own write left it (see ``own_write``); the write's
        apply, when its write thread handed it to the index already (``apply_early``), goes with it."""
        applied = None
        if path is not None and written is not None:
            self.note_written(tier, path, written)
            if origin == "write":
                applied = self._take_early(tier, path, written)
        if origin != "write":
            for told in self.on_outside:
                told(tier)
        self._seq += 1
        self._items.append(Item(self._seq, tier, path, time.monotonic(), origin, applied))
        self._wakeup.set()
        return self._seq

    def apply_early(self, tier: str, path: str, written: tuple[int, ...]) -> Future[ReconcileResult] | None:
        """Hand the file, as this sidecar's write left it (its stat key ``written``), to its tier's
        writer thread now, from any thread (the write thread, once the file is in place), in order
        with every other write to the index; the write's ``put`` with the same key carries it. None
        when there is no such tier, or it is closed or closing (the worker applies it as usual)."""
        found = self.tiers.get(tier)
        if found is None or self._closing:
            return None
        try:
            future = found.submit_apply([path])
        except RuntimeError:  # the index is closed
            return None
        with self._early_lock:
            if len(self._early) >= MAX_WRITTEN:
                self._early.clear()  # forgotten ones are applied by the worker, as without them
            self._early[(tier, path)] = (written, future)
        return future

    def _take_early(self, tier: str, path: str, written: tuple[int, ...]) -> Future[ReconcileResult] | None:
        """The apply ``apply_early`` handed over for the write that left the file as ``written``."""
        with self._early_lock:
            early = self._early.get((tier, path))
            if early is None or early[0] != written:
                return None
            del self._early[(tier, path)]
            return early[1]

    def note_writing(self, tier: str, path: str) -> None:
        """A write thread is about to put the file in place (a rename), that write to be queued
        after: until its ``note_written``, a watcher's event for the file is that write's (the
        write's own apply reads the file as it is then, an edit made meanwhile included). Without
        it, a write thread kept from the CPU between its rename and ``note_written`` (a busy host)
        had the watcher take the rename for an edit and queue it again."""
        self._writing.add((tier, path))

    def note_written(self, tier: str, path: str, key: tuple[int, ...] | None) -> None:
        """The file is as this sidecar's own write left it (its stat ``key``; None: not read back,
        or the write failed), that write about to be queued: called by the write thread as soon as
        the file is in place, so a watcher's event handled before the write's ``put`` is not taken
        for an edit (a dict's item set is atomic). Ends ``note_writing``."""
        if key is not None:
            if len(self._written) >= MAX_WRITTEN:
                self._written.clear()
            self._written[(tier, path)] = key
        self._writing.discard((tier, path))

    def own_write(self, tier: str, path: str, key: tuple[int, ...]) -> bool:
        """True when the file is still as a write of this sidecar left it (its stat ``key``), that
        write being queued already: a watcher's event for it need not be queued again."""
        return (tier, path) in self._writing or self._written.get((tier, path)) == key

    @property
    def latest_seq(self) -> int:
        return self._seq

    @property
    def pending(self) -> int:
        return self._seq - self.indexed_seq

    def oldest_enqueued(self) -> float | None:
        """``time.monotonic()`` when the oldest item still queued was queued; None when empty."""
        return self._items[0].enqueued if self._items else None

    def lag_ms(self) -> float:
        oldest = self.oldest_enqueued()
        return round((time.monotonic() - oldest) * 1000, 3) if oldest is not None else 0.0

    def state(self) -> dict[str, Any]:
        return {"indexed_seq": self.indexed_seq, "pending": self.pending, "lag_ms": self.lag_ms()}

    def is_indexed(self, seq: int) -> bool:
        """True once item ``seq`` is in the index: applied, and not part of a failed, unrepaired batch."""
        if self.indexed_seq < seq:
            return False
        return not any(lo <= seq <= hi for ranges in self._unrepaired.values() for lo, hi in ranges)

    async def wait_for(self, seq: int, limit_s: float) -> bool:
        """Wait until write ``seq`` is searchable; False if ``limit_s`` seconds passed first."""
        if self.is_indexed(seq):
            return True
        try:
            async with asyncio.timeout(limit_s), self._applied:
                await self._applied.wait_for(lambda: self.is_indexed(seq))
        except TimeoutError:
            return False
        return True

    async def wait_hooked(self, seq: int, limit_s: float) -> bool:
        """Wait until every after-hook has seen the changes up to ``seq`` (the journal has its entry,
        the graph has read the file: its ``catch_up`` too); False if ``limit_s`` seconds passed first."""
        try:
            async with asyncio.timeout(limit_s):
                if self.hooked_seq < seq:
                    async with self._hooked:
                        await self._hooked.wait_for(lambda: self.hooked_seq >= seq)
                for catch_up in self.catch_up:
                    await catch_up()
        except TimeoutError:
            return False
        return True

    # -- worker ------------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="reindex-worker")
        self._follower = asyncio.create_task(self._follow_hooks(), name="reindex-hooks")

    async def drain_and_stop(self) -> None:
        """Apply everything queued and run its hooks, then stop the worker and the follower."""
        self._closing = True
        for handle in self._retry.values():
            handle.cancel()
        self._wakeup.set()
        if self._task is not None:
            await self._task
        self._follow.set()
        if self._follower is not None:
            await self._follower
        for checkpoints in self._checkpoints.values():
            await checkpoints.stop()
        log.info("queue.drained", indexed_seq=self.indexed_seq, hooked_seq=self.hooked_seq)

    async def _run(self) -> None:
        while True:
            if not self._items:
                if self._closing:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch = [self._items[0]]
            while len(batch) < MAX_BATCH and len(batch) < len(self._items):
                batch.append(self._items[len(batch)])
            changes = await self._apply(batch)
            for _ in batch:
                self._items.popleft()
            for tier, path, seq, kind in changes:
                log.info("memory.updated", tier=tier, path=path, change=kind, seq=seq)
                await self._run_hooks(self.hooks, (tier, path, seq, kind))
            async with self._applied:
                self.indexed_seq = batch[-1].seq
                self._applied.notify_all()
            self._announced.append((batch[-1].seq, changes))
            self._follow.set()

    async def _follow_hooks(self) -> None:
        """Run the after-hooks on what the worker applied, in order, and advance ``hooked_seq``."""
        while True:
            if not self._announced:
                if self._closing and (self._task is None or self._task.done()):
                    return
                self._follow.clear()
                await self._follow.wait()
                continue
            seq, changes = self._take_announced()
            for change in changes:
                await self._run_hooks(self.after_hooks, change)
            async with self._hooked:
                self.hooked_seq = seq
                self._hooked.notify_all()

    def _take_announced(self) -> tuple[int, list[Change]]:
        """Every batch waiting for the follower, as (the last seq, one change per file): a file
        changed several times is announced once, at its last seq (its hooks read it as it is now),
        in the order of those last changes; a file added and then updated is still added."""
        latest: dict[tuple[str, str], Change] = {}
        seq = 0
        while self._announced:
            seq, changes = self._announced.popleft()
            for tier, path, at, kind in changes:
                before = latest.pop((tier, path), None)
                added = before is not None and before[3] == "added" and kind == "updated"
                latest[(tier, path)] = (tier, path, at, "added" if added else kind)
        return seq, sorted(latest.values(), key=lambda c: c[2])

    async def _run_hooks(self, hooks: list[UpdateHook], change: Change) -> None:
        tier, path, seq, kind = change
        for hook in list(hooks):
            try:
                await hook(tier, path, seq, kind)
            except Exception:
                log.exception("queue.hook_failed", tier=tier, path=path)

    async def _apply(self, batch: list[Item]) -> list[Change]:
        """Apply a batch in order: consecutive file items of one tier go in one transaction. The
        changes it made, in order."""
        changes: list[Change] = []
        group: list[Item] = []
        for item in [*batch, None]:
            if item is not None and item.path is not None and (not group or group[0].tier == item.tier):
                group.append(item)
                continue
            if group:
                changes += await self._apply_files(group)
                group = []
            if item is None:
                break
            if item.path is None:
                changes += await self._reconcile(item)
            else:
                group.append(item)
        return changes

    async def _apply_files(self, group: list[Item]) -> list[Change]:
        tier = self.tiers[group[0].tier]
        paths = list(dict.fromkeys(i.path for i in group if i.path is not None))
        results, failed_early = await self._applied_early(group)
        # A file is applied again unless every change of it in the group was applied early, and well.
        early = {i.path for i in group if i.applied is not None} - {i.path for i in group if i.applied is None}
        rest = [path for path in paths if path not in early or path in failed_early]
        if rest:
            result = await self._retrying(tier, lambda: tier.apply(rest))
            if result is None:  # what was applied early is in the index: its hooks still run
                self._unrepaired.setdefault(tier.name, []).append((group[0].seq, group[-1].seq))
            else:
                results.append(result)
        for result in results:
            self._observe(tier.name, "apply", result)
        if results:
            await self._committed(tier)
        return _merged(tier.name, results, group[-1].seq)

    async def _applied_early(self, group: list[Item]) -> tuple[list[ReconcileResult], set[str | None]]:
        """The results of the group's applies handed to the writer thread early, in the order they
        were handed (each waited for, a done one without a trip through the loop), and the files
        whose early apply failed (the worker applies them again)."""
        results = []
        failed: set[str | None] = set()
        for item in group:
            future = item.applied
            if future is None:
                continue
            try:
                result = future.result() if future.done() else await asyncio.wrap_future(future)
            except Exception as exc:
                log.warning("queue.early_apply_failed", tier=item.tier, path=item.path, error=type(exc).__name__)
                failed.add(item.path)
                continue
            results.append(result)
        return results, failed

    async def _committed(self, tier: Tier) -> None:
        checkpoints = self._checkpoints.get(tier.name)
        if checkpoints is None:
            checkpoints = self._checkpoints[tier.name] = Checkpointer(tier)
            try:
                await checkpoints.start()
            except Exception as exc:  # SQLite's own checkpoints stay on
                log.warning("queue.checkpoints_not_moved", tier=tier.name, error=f"{type(exc).__name__}: {exc}")
        checkpoints.committed()

    async def _retrying(self, tier: Tier, work: Callable[[], Awaitable[ReconcileResult]]) -> ReconcileResult | None:
        """Run ``work``, waiting out a busy database; on any other failure queue a reconcile of the
        tier (so the index still converges to the files) and report None."""
        started = time.monotonic()
        delay = 0.05
        while True:
            try:
                return await work()
            except sqlite3.OperationalError as exc:
                busy = "locked" in str(exc) or "busy" in str(exc)
                if not busy or time.monotonic() - started > BUSY_GIVE_UP_S:
                    self._failed(tier, exc)
                    return None
                log.warning("queue.index_busy", tier=tier.name, retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
            except Exception as exc:
                self._failed(tier, exc)
                return None

    def _observe(self, tier: str, kind: str, result: ReconcileResult) -> None:
        if self.on_applied is not None:
            self.on_applied(tier, kind, result.duration_ms / 1000)

    def _failed(self, tier: Tier, exc: BaseException) -> None:
        """Count and log a failure; retry with a reconcile of the tier later (backing off, so a full
        disk is not hammered), which is what brings the index back to the files."""
        self.errors += 1
        delay = self._retry_delay.get(tier.name, RETRY_FIRST_S)
        self._retry_delay[tier.name] = min(delay * 2, RETRY_MAX_S)
        log.error("queue.apply_failed", tier=tier.name, error=f"{type(exc).__name__}: {exc}", retry_in=delay)
        if self._closing or tier.name in self._retry:
            return

        def retry() -> None:
            del self._retry[tier.name]
            self.put(tier.name, None, "retry")

        self._retry[tier.name] = asyncio.get_running_loop().call_later(delay, retry)

    async def _reconcile(self, item: Item) -> list[Change]:
        tier = self.tiers[item.tier]
        result = await self._retrying(tier, tier.reconcile)
        if result is None:
            return []
        self._unrepaired.pop(tier.name, None)  # the index now equals the files again
        self._retry_delay.pop(tier.name, None)
        self._observe(tier.name, "reconcile", result)
        await self._committed(tier)
        if result.changed:
            log.info("index.reconciled", tier=tier.name, origin=item.origin, changed=len(result.changed))
        return _changes(tier.name, result, item.seq)


def _merged(tier: str, results: list[ReconcileResult], seq: int) -> list[Change]:
    """One change per file the ``results`` changed, in order: a file added and then updated is
    still added."""
    kinds: dict[str, str] = {}
    for result in results:
        for _, path, _, kind in _changes(tier, result, seq):
            kinds[path] = "added" if kinds.get(path) == "added" and kind == "updated" else kind
    return [(tier, path, seq, kind) for path, kind in kinds.items()]


def _changes(tier: str, result: ReconcileResult, seq: int) -> list[Change]:
    return [
        (tier, path, seq, kind)
        for kind, paths in (("added", result.added), ("updated", result.updated), ("removed", result.removed))
        for path in paths
    ]
