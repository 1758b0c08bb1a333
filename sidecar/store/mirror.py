"""The lead's copy of the crew tier into a server store.

The lead indexes the crew dir as always (its own SQLite index is the source); the mirror then
brings the store level with that index. When the reindex queue applies a crew change, the files it
changed are sent (replaced with exactly the index's chunks and the vectors the index holds for
them, or removed); at start and every ``interval`` seconds (the crew reindex tick) the whole store
is compared with the index by content hash, which repairs a store that lost or missed something.
That compare runs beside the rounds (reading two lists of every file takes a second or more over
tens of thousands of files), so the files a write changed are sent, and its seq published, while
it runs; the two take turns to write.
Vectors the embedder stores later are sent after their chunks. Every round records the queue's
indexed sequence in the store: every crew write up to it is in the store, which is how a member on
another host reads its writes (``after_seq``). A round runs whenever that sequence moves, not only
when a crew file changed: a write's own item may change nothing in the index (an earlier item, a
reconcile that read the file after the write landed, brought the change in, and its round sent
it), and its seq is published all the same. A store that is down is retried with backoff; nothing
is lost meanwhile, since the index holds it all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog

from sidecar.store.base import ChunkRow, FileRow, RowRefused, StoreUnavailable, VectorRow, unstorable
from sidecar.store.postgres import PostgresCrewStore
from sidecar.store.sqlite import SqliteCrewSource
from sidecar.tasks import stop_task

__all__ = ["BATCH_FILES", "CrewMirror", "each_alone", "run_rounds"]

log = structlog.get_logger("sidecar.store.mirror")
T = TypeVar("T", bound=Hashable)
#: Files sent in one transaction.
BATCH_FILES = 200
#: ... by the full compare: the rounds wait for its transaction to end before they write, so it
#: holds the turn a few hundred chunks at a time.
COMPARE_BATCH_FILES = 25
#: Vectors looked for per step while the store lacks some.
VECTOR_BATCH = 2000
#: Files changed in one full compare past which the store's planner statistics are refreshed.
ANALYZE_AFTER = 100
RETRY_FIRST_S = 0.5
RETRY_MAX_S = 30.0


async def run_rounds(
    step: Callable[[], Awaitable[None]], wake: asyncio.Event, tick: float, failed: Callable[[], None]
) -> None:
    """Run ``step`` whenever ``wake`` is set and at least every ``tick`` seconds, until cancelled;
    a round that fails is retried with backoff (``RETRY_FIRST_S`` doubling to ``RETRY_MAX_S``)."""
    delay = 0.0
    while True:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(delay, tick)):
                await wake.wait()
        wake.clear()
        try:
            await step()
            delay = 0.0
        except (StoreUnavailable, OSError) as exc:
            failed()
            delay = min(max(delay * 2, RETRY_FIRST_S), RETRY_MAX_S)
            log.warning("store.mirror_failed", error=str(exc), retry_in=delay)
        except Exception:
            failed()
            delay = min(max(delay * 2, RETRY_FIRST_S), RETRY_MAX_S)
            log.exception("store.mirror_failed", retry_in=delay)


async def each_alone(items: list[T], put: Callable[[list[T]], Awaitable[None]]) -> dict[T, str]:
    """``put`` the items in one go; if the store refuses a value in them (``RowRefused``), put
    each alone instead, so one bad row never stops the batch. The items refused, with why."""
    if not items:
        return {}
    try:
        await put(items)
    except RowRefused:
        pass
    else:
        return {}
    refused: dict[T, str] = {}
    for item in items:
        try:
            await put([item])
        except RowRefused as exc:
            refused[item] = str(exc)
    return refused


@dataclass(slots=True)
class _Batch:
    """Some files as the index holds them, read for the store (``CrewMirror._read``)."""

    model: str | None
    files: dict[str, FileRow]
    present: list[str] = field(default_factory=list)  # those the store is sent
    chunks: dict[str, list[ChunkRow]] = field(default_factory=dict)
    vectors: dict[str, VectorRow] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)
    flags: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)  # path -> why the store cannot hold it


class CrewMirror:
    def __init__(
        self,
        store: PostgresCrewStore,
        source: SqliteCrewSource,
        *,
        indexed_seq: Callable[[], int],
        model: Callable[[], str | None],
        interval: float,
        tick: float = 1.0,
        wait_indexed: Callable[[int, float], Awaitable[bool]] | None = None,
    ) -> None:
        """``indexed_seq`` reads the reindex queue's indexed sequence; ``wait_indexed(seq, limit_s)``
        (the queue's ``wait_for``) waits until it reaches ``seq``: a round then runs at once
        (without it, at the next ``tick``)."""
        self.store = store
        self.source = source
        self.indexed_seq = indexed_seq
        self.wait_indexed = wait_indexed
        self.model = model
        self.interval = interval
        self.tick = tick
        self.synced_seq: int | None = None
        self.failures = 0
        self._dirty = True  # the first round compares everything
        self._paths: set[str] = set()  # files the queue changed since the last round
        self._applied_seq = 0
        self._vectors_pending = True
        self._wake = asyncio.Event()
        self._wake.set()  # the first round runs at once
        self._task: asyncio.Task[None] | None = None
        self._follower: asyncio.Task[None] | None = None
        self._full: asyncio.Task[tuple[int, int]] | None = None  # the full compare under way
        self._writing = asyncio.Lock()  # one writer at a time: the rounds or the full compare
        self._last_full = 0.0
        #: Files the store could not hold (path -> why), left out of it until they change.
        self.skipped: dict[str, str] = {}
        self._published = False  # whether a full compare has published the count yet

    async def on_update(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's hook: a crew file changed in the index."""
        if tier == "crew":
            self._paths.add(path)
            # The queue calls its hooks before it moves indexed_seq: the batch up to ``seq`` is in
            # the index already, so this round may claim it.
            self._applied_seq = max(self._applied_seq, seq)
            self._wake.set()

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="crew-mirror")
        if self.wait_indexed is not None:
            self._follower = asyncio.create_task(self._follow(self.wait_indexed), name="crew-mirror-seq")

    async def stop(self) -> None:
        for task in (self._follower, self._task, self._full):
            if task is not None:
                with contextlib.suppress(Exception):
                    await stop_task(task)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()

        async def round_() -> None:
            if self.interval > 0 and loop.time() - self._last_full >= self.interval:
                self._dirty = True
            await self.step()

        await run_rounds(round_, self._wake, self.tick, self._failed)

    async def _follow(self, wait_indexed: Callable[[int, float], Awaitable[bool]]) -> None:
        """Wake a round whenever the queue's indexed sequence moves (its hook wakes one only for
        an item that changed a crew file)."""
        while True:
            seen = self.indexed_seq()
            await wait_indexed(seen + 1, self.tick)
            if self.indexed_seq() != seen:
                self._wake.set()

    def _failed(self) -> None:
        self.failures += 1

    async def step(self) -> None:
        """One round: files if anything changed, then the sequence; vectors if some are missing,
        and the full compare's result once it is done."""
        seq = max(self.indexed_seq(), self._applied_seq)  # first: everything up to it is in the index
        paths, self._paths = self._paths, set()
        if paths:
            # The files the queue changed first: every crew write came through the queue, so a
            # member waiting for its write does not wait for a full compare (seconds over a large
            # crew).
            try:
                await self.sync_paths(sorted(paths))
            except BaseException:
                self._paths |= paths
                raise
            self._vectors_pending = True
        # Every change of the index up to ``seq`` went through ``on_update`` before the queue
        # moved past it, so it was sent by this round or an earlier one: the seq is published now,
        # whether or not a full compare is under way, and whether or not this round sent anything
        # (a write whose change an earlier item brought into the index changed nothing itself).
        await self._publish(seq)
        if self._dirty and self._full is None:
            self._dirty = False
            self._full = asyncio.create_task(self.sync_files(), name="crew-mirror-compare")
            self._full.add_done_callback(lambda _: self._wake.set())  # the next round takes its result
        if self._full is not None:
            if not self._full.done():
                return  # the vectors after the compare
            full, self._full = self._full, None
            error = full.exception()
            if error is not None:
                self._dirty = True
                raise error
            self._last_full = asyncio.get_running_loop().time()
            self._vectors_pending = True
            self.synced_seq = None  # sent again: a store restored or replaced has lost it
        if self._vectors_pending:
            self._vectors_pending = await self.sync_vectors() > 0
        await self._publish(seq)

    async def _publish(self, seq: int) -> None:
        """Record in the store that every crew write up to ``seq`` is there, if it moved."""
        if seq != self.synced_seq:
            await self.store.set_seq(seq)
            self.synced_seq = seq

    async def sync_files(self) -> tuple[int, int]:
        """Replace the store's files that differ from the index (or from what the lead wrote of
        them) and drop those gone; how many were sent and removed."""
        files = await asyncio.to_thread(self.source.files)
        held = await self.store.files(verify=True)  # a file changed in the database is sent again
        changed = sorted(p for p, f in files.items() if held.get(p) != f.hash)
        gone = sorted(p for p in held if p not in files)
        # Files gone go the same way: removed if the index still lacks them at their turn (a round
        # may have sent one made again).
        await self._send(changed + gone, COMPARE_BATCH_FILES)
        if not self._published:  # the store may hold an earlier run's count (files fixed meanwhile)
            await self.store.set_skipped("files", len(self.skipped))
            self._published = True
        sent = [p for p in changed if p not in self.skipped]
        if changed or gone:
            log.info("store.mirrored", changed=len(sent), removed=len(gone), skipped=len(changed) - len(sent))
        if len(changed) + len(gone) >= ANALYZE_AFTER:
            await self.store.analyze()
        return len(sent), len(gone)

    async def sync_paths(self, paths: list[str]) -> None:
        """Bring just these files level with the index (the queue changed them): no full compare.
        One turn to write for all of them (a round's files are few), so a write waits for at most
        one of the full compare's transactions."""
        async with self._writing:
            for start in range(0, len(paths), BATCH_FILES):
                part = paths[start : start + BATCH_FILES]
                await self._put(part, await self._read(part))

    async def _send(self, paths: list[str], batch: int) -> None:
        """Send the files ``batch`` at a time, each batch its own turn to write. A batch is read
        (and scanned) before its turn, so a round waits for the store's transaction only; on its
        turn, files the index changed since are read again (a round may have sent a newer version
        meanwhile)."""
        for start in range(0, len(paths), batch):
            part = paths[start : start + batch]
            read = await self._read(part)
            async with self._writing:
                now = await asyncio.to_thread(self.source.files, part)
                if now != read.files:
                    read = await self._read(part)
                await self._put(part, read)

    async def _read(self, part: list[str]) -> _Batch:
        """What the store is to hold of these files: the index's rows of each (none for a file the
        index no longer has), their vectors, bytes and the scanner's flags. A file the store cannot
        hold (text with a NUL, say, put in the crew dir by a shell) is refused, with why."""
        model = self.model()
        files = await asyncio.to_thread(self.source.files, part)
        read = _Batch(model, files)
        present = [p for p in part if p in files]
        if not present:
            return read
        read.chunks = await asyncio.to_thread(self.source.chunks, present)
        for path in present:
            problem = unstorable(path, *(t for c in read.chunks[path] for t in (c.heading, c.body)))
            if problem is not None:
                read.refused[path] = problem
        read.present = [p for p in present if p not in read.refused]
        hashes = [c.hash for p in read.present for c in read.chunks[p]]
        read.vectors = await asyncio.to_thread(self.source.vectors, model, hashes)
        read.contents = await asyncio.to_thread(self.source.contents, read.present)
        read.flags = await asyncio.to_thread(self.source.flags, read.contents)
        return read

    async def _put(self, part: list[str], read: _Batch) -> None:
        """Put these files in the store as ``read`` holds them, and remove those the index no
        longer has. A file the store refuses never stops the others: it is left out, logged,
        counted in the store's status, and its old copy removed (members would otherwise read text
        the crew no longer has)."""

        async def put(paths: list[str]) -> None:
            files = [(read.files[p], read.chunks[p]) for p in paths]
            await self.store.replace_files(files, read.model, read.vectors, read.flags, read.contents)

        refused = read.refused | await each_alone(read.present, put)
        await self.store.remove_files([p for p in part if p not in read.files or p in refused])
        await self._skipped(part, refused)

    async def _skipped(self, part: list[str], refused: dict[str, str]) -> None:
        """Record which of ``part`` the store could not take, and publish the count if it moved."""
        for path, why in refused.items():
            log.warning("store.file_skipped", path=path, reason=why)
        before = len(self.skipped)
        for path in part:
            self.skipped.pop(path, None)
        self.skipped.update(refused)
        if len(self.skipped) != before or refused:
            await self.store.set_skipped("files", len(self.skipped))

    async def sync_vectors(self) -> int:
        """Send the vectors the index has and the store lacks; how many the store still lacks."""
        model = self.model()
        if model is None:
            return 0
        missing = await self.store.missing_vectors(model, VECTOR_BATCH)
        if not missing:
            return 0
        found = await asyncio.to_thread(self.source.vectors, model, missing)
        await self.store.put_vectors(model, found)
        return len(missing) - len(found) + (1 if len(missing) == VECTOR_BATCH else 0)
