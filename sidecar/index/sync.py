"""Keeping one tier's index equal to its markdown files: the write side of
:class:`~sidecar.index.tier_index.TierIndex`, for the thread that writes the index.

- ``reconcile()`` brings the index in line with the files, touching only files whose content
  hash changed; deleted files leave the index.
- ``rebuild()`` re-chunks every file inside one transaction: readers (WAL) keep seeing the
  previous index until it commits, and a cancelled rebuild rolls back, leaving it in service.
- ``apply_paths()`` brings the named files up to date: the reindex queue's unit of work.

A file that only grew since it was last chunked here (its bytes then start its bytes now: an
append) is chunked again from near its end: from one of its last section's last chunks where the
greedy packing starts afresh, else from that section's start; the chunks before are the same and
stay as they are (``chunker.chunk_lines``).

A file new to the index with the bytes of a file gone in the same pass (a reconcile, or one apply
of both paths) is that file moved: consolidation moves its old notes to ``archive/`` as they are.
Its chunks are the gone file's rows, inserted again under the new path without reading the file
into chunks (the ids are those chunking it would give, so every search answers as it would; the
hashes, the vectors' keys, are the same, so nothing is embedded again).

Every commit that changes a chunk bumps the index's generation and keeps the in-memory postings
(:class:`~sidecar.index.bm25.LivePostings`) equal to it.

Whoever must describe a file as the index holds it (the search's flag cache: a hit is marked with
the scanner's verdicts on the bytes it came from) is told, by an ``on_held`` hook, which bytes
(their digest; None: the file left the index) each file a transaction changed holds, before the
commit, on the thread that writes the index: no search meets the new text before the hook ran.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.db import Database
from sidecar.heap import release_free_memory
from sidecar.index.bm25 import LivePostings
from sidecar.index.chunker import Resume, chunk_lines
from sidecar.index.db import chunks_gen
from sidecar.index.files import (
    FileStat,
    Skipped,
    TierScan,
    read_tier_file,
    read_tier_file_stat,
    scan_tier,
    stat_tier_file,
)
from sidecar.index.snippet import is_plain

if TYPE_CHECKING:
    from sidecar.index.postings import Snapshot

__all__ = ["Cancelled", "ChunkDelta", "ChunkDeltas", "HeldHook", "IndexSync", "ReconcileResult"]

RACY_NS = 2_000_000_000  # see _racy: wider than any filesystem's timestamp tick we expect
SKIPPED_SHOWN = 20  # skipped paths named in the status and the log (all are counted)
CHUNKED_KEPT = 512  # files whose last chunking is remembered (the newest), for the next append
log = structlog.get_logger("sidecar.index.sync")
#: Told before a commit, on the writer thread: (the tier, {path: the digest of the bytes the index
#: holds for it from the commit on, ``hashlib.blake2b(data, digest_size=16)``; None: none}).
HeldHook = Callable[[str, dict[str, bytes | None]], None]


@dataclass(frozen=True, slots=True)
class ChunkDelta:
    """What one commit of this process did to the chunks: it moved the index to generation ``gen``
    (``chunks_gen``), deleted the chunks ``deleted`` and added ``added`` (id -> hash)."""

    gen: int
    deleted: frozenset[int]
    added: dict[int, str]


class ChunkDeltas:
    """The chunk deltas of the last commits this process made, generation after generation, for a
    reader that holds the chunks of an earlier generation (the dense vectors' matrix) to bring them
    up to date without reading every chunk again. A commit whose delta is not known (the postings
    off, a rebuild, another process's write) breaks the run: ``since`` then answers None and the
    reader reads the chunks whole. Any thread."""

    def __init__(self, kept: int = 256) -> None:
        self._lock = threading.Lock()
        self._log: deque[ChunkDelta] = deque(maxlen=kept)

    def record(self, delta: ChunkDelta) -> None:
        with self._lock:
            if self._log and self._log[-1].gen != delta.gen - 1:
                self._log.clear()
            self._log.append(delta)

    def broken(self) -> None:
        """A commit changed the chunks in a way no delta tells."""
        with self._lock:
            self._log.clear()

    def since(self, after: int, upto: int) -> list[ChunkDelta] | None:
        """The deltas from generation ``after`` to ``upto``, in order; None unless every one is known."""
        with self._lock:
            found = [d for d in self._log if after < d.gen <= upto]
        if len(found) != upto - after or not found or found[0].gen != after + 1:
            return None
        return found


class Cancelled(Exception):
    """A reindex was stopped (client gone, SIGTERM); the previous index stays in service."""


@dataclass(slots=True)
class _Changes:
    """What one write transaction did to the chunks, for the in-memory postings."""

    track: bool  # record ids (postings are on and current); otherwise only note that it changed
    full: bool = False  # rebuild the postings from the index instead of applying a delta
    dirty: bool = False
    deleted: set[int] = field(default_factory=set)
    added: dict[int, tuple[str, str, str]] = field(default_factory=dict)  # id -> (heading, body, hash)

    @property
    def wants_ids(self) -> bool:
        """Record which chunks came and went (for a delta); not when the postings are rebuilt."""
        return self.track and not self.full

    def delete(self, ids: Iterable[int]) -> None:
        for cid in ids:
            # A chunk inserted earlier in this same transaction never reached the postings.
            if self.added.pop(cid, None) is None:
                self.deleted.add(cid)


@dataclass(slots=True)
class ReconcileResult:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    duration_ms: float = 0.0

    @property
    def changed(self) -> list[str]:
        return self.added + self.updated + self.removed


class IndexSync:
    """The files of tier ``name`` under ``root`` into its index database, and the postings kept
    with it. ``threaded``: the index has a writer thread that a search may queue a refresh of the
    postings on (the server's); otherwise the one thread that uses it does that itself."""

    def __init__(self, root: Path, name: str, db: Database, postings: LivePostings, *, threaded: bool) -> None:
        self.root = root
        self.name = name
        self.db = db
        self.postings = postings
        self.threaded = threaded
        self.last_reindex: dict[str, Any] | None = None
        self.skipped: list[Skipped] = []  # what the last scan of the files left out, and why
        self._changes: _Changes | None = None
        self._refresh_pending = False
        # Where each file's last chunking here left off (the newest ``CHUNKED_KEPT``): (its size, its
        # digest, where its last section starts). An append is chunked again from there.
        self._chunked: OrderedDict[str, tuple[int, str, Resume]] = OrderedDict()
        self.lines_chunked = 0  # lines of files chunked, in all
        # Told which bytes the files a transaction changed hold, before its commit (``HeldHook``).
        self.on_held: list[HeldHook] = []
        self._held: dict[str, bytes | None] = {}  # the open transaction's, for ``on_held``
        # What each commit did to the chunks, for the dense vectors' matrix (``ChunkDeltas``).
        self.deltas = ChunkDeltas()

    def beside(self, db: Database) -> IndexSync:
        """A sync of the same files into another index database (a new index file built beside
        this one, :meth:`TierIndex._rebuild_from_files
        <sidecar.index.tier_index.TierIndex._rebuild_from_files>`), without postings."""
        other = IndexSync(self.root, self.name, db, LivePostings(), threaded=False)
        other.skipped = self.skipped  # logged again only when they change
        other.on_held = self.on_held  # told before the file is in place: early, never late
        return other

    def adopt(self, built: IndexSync) -> None:
        """``built``'s file has replaced this one's: its reindex, skipped files and chunkings are this one's."""
        self.last_reindex = built.last_reindex
        self.skipped = built.skipped
        self._chunked = built._chunked
        self.lines_chunked += built.lines_chunked

    # -- the files into the index ------------------------------------------------------------
    def reconcile(self, cancel: Callable[[], bool] | None = None, kind: str = "reconcile") -> ReconcileResult:
        """Make the index equal to the files, reading only files whose size or mtime moved."""
        started = time.perf_counter()
        on_disk = self._scan()
        sql = "SELECT path, size, mtime_ns, hash, indexed_at FROM files"
        known = {row[0]: row[1:] for row in self.db.writer.execute(sql)}
        result = ReconcileResult()
        self._begin()
        try:
            went = {rel: known[rel][2] for rel in set(known) - set(on_disk)}
            arrived = any(rel not in known for rel in on_disk)
            gone = self._gone(went) if went and arrived else _Gone({}, {})
            for rel in sorted(went):
                self._remove(rel)
                result.removed.append(rel)
            for rel, st in sorted(on_disk.items()):
                _check(cancel)
                old = known.get(rel)
                if old is not None and (old[0], old[1]) == (st.size, st.mtime_ns) and not _racy(old[1], old[3]):
                    result.unchanged += 1
                    continue
                if old is None and gone:
                    self._arrive(st.rel, gone, result)
                    continue
                outcome = self._index_file(st, old[2] if old else None)
                if outcome is not None:
                    (result.added if old is None else result.updated).append(rel)
                else:
                    result.unchanged += 1
            self._commit()
        except BaseException:
            self._rollback()
            raise
        result.duration_ms = (time.perf_counter() - started) * 1000
        if kind != "reconcile" or result.changed:
            self._stamp(kind, result.duration_ms)
        return result

    def rebuild(self, cancel: Callable[[], bool] | None = None) -> ReconcileResult:
        """Re-chunk every file in one transaction; on cancel, roll back to the previous index."""
        started = time.perf_counter()
        on_disk = self._scan()
        result = ReconcileResult()
        self._begin()
        try:
            self._clear()
            for _rel, st in sorted(on_disk.items()):
                _check(cancel)
                if self._index_file(st, None) is not None:
                    result.added.append(st.rel)
            self._commit()
        except BaseException:
            self._rollback()
            raise
        result.duration_ms = (time.perf_counter() - started) * 1000
        self._stamp("rebuild", result.duration_ms)
        return result

    def _scan(self) -> TierScan:
        """The tier's files; what the scan skipped is kept for the status, and logged when it changes."""
        on_disk = scan_tier(self.root)
        if on_disk.skipped != self.skipped:
            if on_disk.skipped:
                first = [f"{s.rel}: {s.reason}" for s in on_disk.skipped[:SKIPPED_SHOWN]]
                log.warning("index.paths_skipped", tier=self.name, count=len(on_disk.skipped), first=first)
            else:
                log.info("index.paths_skipped", tier=self.name, count=0)
        self.skipped = on_disk.skipped
        return on_disk

    def _clear(self) -> None:
        """Empty the index inside the caller's transaction. The FTS index is cleared in one step
        ('delete-all') rather than row by row through the delete trigger, which would re-tokenize
        every old chunk only to remove it; the trigger is dropped and recreated in the same
        transaction, so no reader ever sees the schema without it."""
        (trigger,) = self.db.writer.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_ad'").fetchone()
        self.db.writer.execute("DROP TRIGGER chunks_ad")
        self.db.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
        self.db.writer.execute("DELETE FROM chunks")
        self.db.writer.execute("DELETE FROM files")
        self.db.writer.execute(trigger)
        if self._changes is not None:
            self._changes.full = self._changes.dirty = True
        self._chunked.clear()

    def apply_paths(self, rels: Iterable[str]) -> ReconcileResult:
        """Bring the named files up to date (changed, new or deleted): the queue's unit of work."""
        started = time.perf_counter()
        result = ReconcileResult()
        rels = list(rels)
        self._begin()
        try:
            gone = self._gone(self._went(rels)) if len(rels) > 1 else _Gone({}, {})
            for rel in rels:
                self._apply_one(rel, result, gone)
            self._commit()
        except BaseException:
            self._rollback()
            raise
        result.duration_ms = (time.perf_counter() - started) * 1000
        return result

    def _went(self, rels: list[str]) -> dict[str, str]:
        """Of the named files, those the index holds and that are no longer there, with their hashes."""
        went: dict[str, str] = {}
        for rel in rels:
            row = self.db.writer.execute("SELECT hash FROM files WHERE path = ?", (rel,)).fetchone()
            if row is not None and stat_tier_file(self.root, rel) is None:
                went[rel] = row[0]
        return went

    def _gone(self, went: dict[str, str]) -> _Gone:
        """The files ``went`` (path -> content hash) with their chunk rows, read before they leave."""
        sql = "SELECT heading, body, line_start, line_end, hash, plain FROM chunks WHERE path = ? ORDER BY ord"
        rows = {rel: self.db.writer.execute(sql, (rel,)).fetchall() for rel in went}
        return _Gone(went, rows, {rel: self._chunked[rel] for rel in went if rel in self._chunked})

    def _apply_one(self, rel: str, result: ReconcileResult, gone: _Gone) -> None:
        row = self.db.writer.execute("SELECT hash FROM files WHERE path = ?", (rel,)).fetchone()
        if row is None and gone:
            self._arrive(rel, gone, result)
            return
        found = read_tier_file_stat(self.root, rel)
        if found is None:
            if row is not None:
                self._remove(rel)
                result.removed.append(rel)
            return
        data, st = found
        if self._index_file(st, row[0] if row else None, data) is None:
            result.unchanged += 1
        else:
            (result.added if row is None else result.updated).append(rel)

    def _begin(self) -> None:
        self.db.writer.execute("BEGIN IMMEDIATE")
        self._held = {}
        changes = _Changes(track=self.postings.on)
        if self.postings.on and (self.postings.snapshot is None or self.postings.snapshot.gen != self._gen()):
            changes.full = True  # another process wrote the index, or the postings are not built yet
        self._changes = changes

    def _commit(self) -> None:
        """Commit the writer's transaction. The next postings snapshot is derived before the commit
        (inside the transaction, at the new generation) and offered as ``_pending`` across it, then
        swapped in: a search that meets the new generation first (the commit gives up the GIL)
        answers from it instead of falling back to FTS5."""
        changes, self._changes = self._changes, None
        self._tell_held()  # before a search can meet the new text, in the file or the postings
        ready: Snapshot | None = None
        if changes is not None and changes.dirty:
            bumped = self.db.writer.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_gen' RETURNING value"
            ).fetchone()
            gen = int(bumped[0]) if bumped else 0  # as _gen() reads it: 0 where the index has none
            if self.postings.on and not changes.full:
                ready = self.postings.pending = self._next_postings(gen, changes)
        self.db.writer.execute("COMMIT")  # on failure the caller's _rollback() drops _pending
        if changes is not None and changes.dirty:  # after the commit: a reader seeing the gen first reads whole
            if changes.wants_ids:
                added = {cid: digest for cid, (_, _, digest) in changes.added.items()}
                self.deltas.record(ChunkDelta(gen, frozenset(changes.deleted), added))
            else:
                self.deltas.broken()
        if changes is None or not self.postings.on or not (changes.dirty or changes.full):
            return
        if ready is not None:
            self.postings.snapshot = ready
            self.postings.pending = None
        else:
            self._build_postings("rebuild" if changes.full else "delta unavailable")

    def _tell_held(self) -> None:
        """Tell ``on_held`` what the files this transaction changed hold (before its commit: a
        commit that then fails leaves them told of bytes the index lacks, which only costs a
        reading of the file)."""
        held, self._held = self._held, {}
        if not held:
            return
        for hook in self.on_held:
            try:
                hook(self.name, held)
            except Exception:
                log.exception("index.held_hook_failed", tier=self.name)

    def _rollback(self) -> None:
        self._changes = None
        self._held = {}
        self.postings.pending = None
        # SQLite has already rolled back after some errors (a full disk, an I/O error): a second
        # ROLLBACK would raise "no transaction is active" in place of the error that happened.
        if self.db.writer.in_transaction:
            self.db.writer.execute("ROLLBACK")

    def _arrive(self, rel: str, gone: _Gone, result: ReconcileResult) -> None:
        """A file the index does not hold yet. When a file that went in the same pass had the same
        bytes, it moved here (consolidation moves a note to ``archive/`` as it is): its chunks are
        that file's, copied without chunking the file again. Otherwise it is indexed."""
        found = read_tier_file_stat(self.root, rel)
        if found is None:
            return
        data, st = found
        digest = _digest(data)
        source = gone.take(digest)
        if source is None:
            if self._index_file(st, None, data, digest) is None:
                result.unchanged += 1
            else:
                result.added.append(rel)
            return
        self.db.writer.execute(
            "INSERT INTO files (path, hash, size, mtime_ns, indexed_at) VALUES (?, ?, ?, ?, ?)",
            (rel, digest, len(data), st.mtime_ns, time.time()),
        )
        # New rows, inserted where chunking the file would insert them: chunk ids (the order a
        # tie in BM25 keeps) are as they would be, and so is every search's answer. Their hashes
        # are the vectors' keys: nothing is embedded again.
        self._insert([(rel, i, *row) for i, row in enumerate(gone.rows[source])])
        self._held[rel] = bytes.fromhex(digest)
        known = gone.chunked.get(source)
        if known is not None:
            self._chunked[rel] = known
        result.added.append(rel)

    def _remove(self, rel: str) -> None:
        changes = self._changes
        if changes is not None:
            if changes.wants_ids:
                changes.delete(r[0] for r in self.db.writer.execute("SELECT id FROM chunks WHERE path = ?", (rel,)))
            changes.dirty = True
        self.db.writer.execute("DELETE FROM chunks WHERE path = ?", (rel,))
        self.db.writer.execute("DELETE FROM files WHERE path = ?", (rel,))
        self._chunked.pop(rel, None)
        self._held[rel] = None

    def _index_file(
        self, st: FileStat, old_hash: str | None, data: bytes | None = None, digest: str | None = None
    ) -> str | None:
        """(Re)index one file if its content hash changed (``data``: its bytes, when read already,
        ``digest`` their hash); return the new hash, or None if not."""
        if data is None:
            data = read_tier_file(self.root, st.rel)
        if data is None:
            return None
        digest = digest or _digest(data)
        now = time.time()
        if digest == old_hash:
            self.db.writer.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, indexed_at = ? WHERE path = ?",
                (len(data), st.mtime_ns, now, st.rel),
            )
            return None
        self.db.writer.execute(
            "INSERT INTO files (path, hash, size, mtime_ns, indexed_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, "
            "mtime_ns = excluded.mtime_ns, indexed_at = excluded.indexed_at",
            (st.rel, digest, len(data), st.mtime_ns, now),
        )
        self._held[st.rel] = bytes.fromhex(digest)
        lines = _text(data, self.name, st.rel).splitlines()
        resume = self._grown_from(st.rel, data, old_hash)
        chunks, last = chunk_lines(lines, resume=resume)
        first = resume.chunks if resume is not None else 0  # chunks before ``chunks``, unchanged
        self.lines_chunked += len(lines) - (resume.line if resume is not None else 0)
        self._chunked[st.rel] = (len(data), digest, last)
        self._chunked.move_to_end(st.rel)
        while len(self._chunked) > CHUNKED_KEPT:
            self._chunked.popitem(last=False)
        # Chunks that are the same at the same place keep their row (and id): an append to a daily
        # file rewrites its last chunk or two, not every chunk of the file.
        old: dict[int, tuple[int, str, str, int, int]] = {}
        if old_hash is not None:
            sql = "SELECT ord, id, heading, body, line_start, line_end FROM chunks WHERE path = ? AND ord >= ?"
            old = {r[0]: r[1:] for r in self.db.writer.execute(sql, (st.rel, first))}
        same = {
            i
            for i, c in enumerate(chunks, first)
            if (row := old.get(i)) is not None and row[1:] == (c.heading, c.body, c.line_start, c.line_end)
        }
        dead = [row[0] for i, row in old.items() if i not in same]
        fresh = [(i, c) for i, c in enumerate(chunks, first) if i not in same]
        changes = self._changes
        tracked = changes if changes is not None and changes.wants_ids else None
        if dead:
            if tracked is not None:
                tracked.delete(dead)
            self.db.writer.executemany("DELETE FROM chunks WHERE id = ?", [(cid,) for cid in dead])
        self._insert(
            [
                (st.rel, i, c.heading, c.body, c.line_start, c.line_end, c.hash, is_plain(c.body or c.heading))
                for i, c in fresh
            ]
        )
        if changes is not None and dead:
            changes.dirty = True
        return digest

    def _insert(self, rows: list[tuple[str, int, str, str, int, int, str, bool]]) -> None:
        """Insert chunk rows (path, ord, heading, body, line_start, line_end, hash, plain), in order."""
        if not rows:
            return
        insert = (
            "INSERT INTO chunks (path, ord, heading, body, line_start, line_end, hash, plain) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        changes = self._changes
        if changes is not None and changes.wants_ids:
            for values in rows:
                cur = self.db.writer.execute(insert, values)
                assert cur.lastrowid is not None
                changes.added[cur.lastrowid] = (values[2], values[3], values[6])
        else:
            self.db.writer.executemany(insert, rows)
        if changes is not None:
            changes.dirty = True

    def _grown_from(self, rel: str, data: bytes, old_hash: str | None) -> Resume | None:
        """Where the file's last chunking here left its last section, when the index holds that
        chunking (its hash) and the file only grew since (those bytes start ``data``); else None."""
        known = self._chunked.get(rel)
        if known is None or old_hash != known[1] or len(data) <= known[0]:
            return None
        return known[2] if _digest(data[: known[0]]) == known[1] else None

    # -- in-memory postings (sidecar.index.postings) ---------------------------------------------------
    def _gen(self) -> int:
        return chunks_gen(self.db.writer) or 0

    def enable_postings(self) -> None:
        """Build the in-memory postings and keep them up to date from now on (writer thread)."""
        self.postings.on = True
        self._build_postings("enabled")

    def _build_postings(self, reason: str) -> None:
        from sidecar.index.postings import build_snapshot

        started = time.perf_counter()
        self.postings.snapshot = None
        try:
            self.db.writer.execute("BEGIN")
            try:
                snap = build_snapshot(self.db.writer, self._gen(), numpy=self.postings.numpy)
            finally:
                self.db.writer.execute("COMMIT")
        except Exception as exc:
            # Search stays correct through FTS5; say so rather than fail the write that got here.
            log.error("postings.failed", tier=self.name, reason=reason, error=f"{type(exc).__name__}: {exc}")
            return
        self.postings.snapshot = snap
        # The scan's transient arrays were freed into the heap; hand those pages back now, as a
        # server under steady load never goes idle long enough for the idle release to do it.
        release_free_memory()
        log.info(
            "postings.built",
            tier=self.name,
            reason=reason,
            chunks=snap.live,
            terms=len(snap.vocab),
            postings=snap.postings,
            ms=round((time.perf_counter() - started) * 1000, 1),
        )

    def _next_postings(self, gen: int, changes: _Changes) -> Snapshot | None:
        """The current postings with ``changes`` applied (generation ``gen``, the transaction's), or None
        when a rebuild is the way: no postings yet, the delta failed, or it has grown too big."""
        from sidecar.index.postings import apply_changes, count_terms

        snap = self.postings.snapshot
        if snap is None:
            return None
        try:
            added = count_terms([(cid, h, b) for cid, (h, b, _) in changes.added.items()])
            nxt = apply_changes(snap, gen, changes.deleted, added)
        except Exception as exc:
            log.error("postings.failed", tier=self.name, reason="apply", error=f"{type(exc).__name__}: {exc}")
            return None
        return None if nxt.wants_rebuild() else nxt

    def reload_postings(self) -> None:
        """A new file replaced the index's whole (a rebuild): build the postings from it, when on."""
        self.deltas.broken()
        if self.postings.on and self.db.is_open:
            self._build_postings("rebuild")

    def refresh_postings(self) -> None:
        """Writer thread, asked by a reader: rebuild if the postings do not describe the file."""
        self._refresh_pending = False
        if not self.postings.on or not self.db.is_open:
            return
        snap = self.postings.snapshot
        if snap is None or snap.gen != self._gen():
            self._build_postings("stale")

    def ask_refresh(self) -> None:
        """A search met postings behind the file: the thread that writes the index rebuilds them
        (at once when it is this one; queued for the writer thread when the index has one)."""
        if self._refresh_pending or not self.postings.on:
            return
        if threading.get_ident() == self.db.writer_thread:
            self.refresh_postings()
            return
        if not self.threaded:
            return
        self._refresh_pending = True
        try:
            self.on_writer_thread(self.refresh_postings)
        except RuntimeError:  # the writer is shutting down
            self._refresh_pending = False

    def on_writer_thread(self, fn: Callable[[], None]) -> None:
        """Queue ``fn`` on the writer thread, in order with the writes; a failure is logged (no
        one waits for it)."""

        def run() -> None:
            try:
                fn()
            except Exception:
                log.exception("tier.writer_task_failed", tier=self.name)

        self.db.submit(run)

    def _stamp(self, kind: str, duration_ms: float) -> None:
        self.last_reindex = {"at": time.time(), "duration_ms": round(duration_ms, 3), "kind": kind}


class _Gone:
    """Files the index holds that one pass found gone (path -> content hash), with their chunk rows
    and where their last chunking left off: where a file new to the index may have moved from."""

    def __init__(self, went: dict[str, str], rows: dict[str, list[Any]], chunked: dict[str, Any] | None = None) -> None:
        self.rows = rows
        self.chunked = chunked or {}
        self._by_hash: dict[str, list[str]] = {}
        for rel, digest in sorted(went.items(), reverse=True):
            self._by_hash.setdefault(digest, []).append(rel)

    def __bool__(self) -> bool:
        return bool(self._by_hash)

    def take(self, digest: str) -> str | None:
        """A file gone with these bytes (the first by path), no longer offered; None if none."""
        rels = self._by_hash.get(digest)
        if not rels:
            return None
        rel = rels.pop()
        if not rels:
            del self._by_hash[digest]
        return rel


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _racy(mtime_ns: int, indexed_at: float) -> bool:
    """True when a file was indexed so soon after it was written that a later write of the same
    size could carry the same mtime (file times tick at a coarse clock: a few ms, or a second on
    some filesystems), so size and mtime cannot tell: the content is hashed instead. Git calls
    these index entries racily clean."""
    return indexed_at * 1e9 - mtime_ns < RACY_NS


def _text(data: bytes, tier: str, rel: str) -> str:
    """A file's text for the index. Memory is UTF-8: a file that is not is indexed with U+FFFD in
    place of the bytes that do not decode, and a warning names it and where (so it can be fixed)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.warning("index.not_utf8", tier=tier, path=rel, offset=exc.start, note="indexed with U+FFFD for bad bytes")
        return data.decode("utf-8", errors="replace")


def _check(cancel: Callable[[], bool] | None) -> None:
    if cancel is not None and cancel():
        raise Cancelled("reindex cancelled")
