"""The FTS5 index of one memory tier, kept equal to the tier's markdown files.

Synchronous on purpose: the CLI uses it directly, and the server calls the write side from its
one writer thread (``sidecar.index.tier``) and the read side from reader threads. Files are the source
of truth; the index can always be rebuilt from them.

- ``reconcile()`` brings the index in line with the files, touching only files whose content
  hash changed; deleted files leave the index.
- ``rebuild()`` re-chunks every file inside one transaction: readers (WAL) keep seeing the
  previous index until it commits, and a cancelled rebuild rolls back, leaving it in service.
- ``open()`` checks the file: a missing, unreadable or corrupt index is deleted and rebuilt
  from the files, and ``integrity`` says so; it is never served silently empty.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import structlog

from sidecar.errors import BadRequest, TierMissing
from sidecar.heap import release_free_memory
from sidecar.index.chunker import chunk_markdown
from sidecar.index.db import chunks_gen, database
from sidecar.index.files import FileStat, Skipped, TierScan, read_tier_file, scan_tier, stat_tier_file
from sidecar.index.query import build_match, quote_word, terms
from sidecar.index.snippet import SNIPPET_CHARS, Snippet, is_plain, query_tokens, window

if TYPE_CHECKING:
    from sidecar.index.postings import QueryTokens, Snapshot

__all__ = ["INDEX_NAME", "Cancelled", "RankedChunk", "ReconcileResult", "TierIndex"]

INDEX_NAME = "index.sqlite"
HEADING_WEIGHT = 4.0
BODY_WEIGHT = 1.0
RACY_NS = 2_000_000_000  # see _racy: wider than any filesystem's timestamp tick we expect
SKIPPED_SHOWN = 20  # skipped paths named in the status and the log (all are counted)
READER_THREADS = 2  # the server's searches that the event loop leaves to a thread
log = structlog.get_logger("sidecar.index.tier_index")


class Cancelled(Exception):
    """A reindex was stopped (client gone, SIGTERM); the previous index stays in service."""


class RankedChunk(NamedTuple):
    """One ranked chunk. A named tuple: a search makes one per candidate, and a frozen dataclass
    costs several times as much to build (a setattr per field). Its snippet is made only when it is
    asked for: a hybrid search ranks a hundred candidates and shows ten."""

    id: int
    path: str
    heading: str
    line_start: int
    line_end: int
    text: str  # what the snippet is cut from: the chunk's body, or its heading when the body is empty
    score: float
    hash: str
    plain: bool  # ``is_plain(text)``, as the index stored it
    terms: list[str]  # the query's tokens (``query_tokens``), shared by a search's hits

    def window(self, width: int = SNIPPET_CHARS) -> Snippet:
        return window(self.text, [], width, tokens=self.terms, plain=self.plain)

    @property
    def snippet(self) -> str:
        return self.window().text

    def as_json(self, source: str) -> dict[str, Any]:
        shown = self.window()
        return {
            "source": source,
            "path": self.path,
            "heading": self.heading,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "snippet": shown.text,
            "highlights": [[start, end] for start, end in shown.highlights],
            "score": round(self.score, 6),
        }


@dataclass(slots=True)
class _Changes:
    """What one write transaction did to the chunks, for the in-memory postings."""

    track: bool  # record ids (postings are on and current); otherwise only note that it changed
    full: bool = False  # rebuild the postings from the index instead of applying a delta
    dirty: bool = False
    deleted: set[int] = field(default_factory=set)
    added: dict[int, tuple[str, str]] = field(default_factory=dict)

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


class TierIndex:
    """One tier's ``index.sqlite``: write side for a single thread, read side for any thread."""

    def __init__(self, root: Path, name: str = "agent", *, threaded: bool = False) -> None:
        """``threaded``: the write side runs on the database's writer thread (the server's
        :class:`~sidecar.index.tier.Tier`), so a search may queue a refresh of the postings there;
        otherwise one thread uses the index (the command line) and starts none."""
        self.root = root
        self.name = name
        self.path = root / INDEX_NAME
        self.threaded = threaded
        self.db = database(self.path, name, reader_threads=READER_THREADS)
        self.integrity = "unopened"
        self.last_reindex: dict[str, Any] | None = None
        self.skipped: list[Skipped] = []  # what the last scan of the files left out, and why
        # In-memory BM25 postings (sidecar.index.postings): off until enable_postings(); then kept equal
        # to the index by the writer thread after every commit. None: search through FTS5.
        self._postings_on = False
        self._postings: Snapshot | None = None
        # The snapshot of the transaction being committed: the commit gives up the GIL, and a search
        # that meets the new generation before the writer thread gets it back can use this one.
        self._pending: Snapshot | None = None
        self._tokens: QueryTokens | None = None
        self._changes: _Changes | None = None
        self._refresh_pending = False
        self._writing_thread: int | None = None  # the thread that opened the writer

    # -- lifecycle -------------------------------------------------------------------------
    def open(self, postings: bool = False, *, sync: bool = True) -> str:
        """Open (creating or rebuilding as needed), reconcile with the files; return integrity.
        ``postings``: also build the in-memory postings now (the server does it after ready).
        ``sync=False`` (memory off) opens the index without reading a single file into it."""
        self.root.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        problem = self._try_open()
        if problem is not None:
            self._rebuild_from_files(problem, sync=sync)
        else:
            self.integrity = "ok" if existed else "created"
            if sync:
                self.reconcile(kind="reconcile")
        if postings:
            self.enable_postings()
        return self.integrity

    def _try_open(self) -> str | None:
        """Open the writer and check the file; return what is wrong with it, or None."""
        self._writing_thread = threading.get_ident()
        try:
            self.db.connect()
        except sqlite3.DatabaseError as exc:
            return f"{type(exc).__name__}: {exc}"
        return self._check()

    def _rebuild_from_files(self, reason: str, *, sync: bool = True) -> None:
        """Throw the index file away and build a new one from the markdown, saying why
        (``sync=False``: left empty, the files not read)."""
        self._discard()
        self._try_open()
        if not sync:
            self.integrity = f"discarded: {reason}"
            return
        self.integrity = f"rebuilt: {reason}"
        self.reconcile(kind="rebuild")

    def _discard(self) -> None:
        """Close everything and delete the index files (they are rebuilt from the markdown)."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    def close(self) -> None:
        """Close readers first, then checkpoint and close the writer so no WAL is left behind (the
        index may be opened again; the server's tier closes the database's threads after it)."""
        self._postings = None
        self.db.close_connections()

    def recover_if_lost(self) -> bool:
        """Rebuild when the index file was deleted or replaced under us; True if it was. A tier dir
        that is gone altogether is an error: recreating it could write memory onto the wrong disk."""
        if not self.root.is_dir():
            raise TierMissing(f"the {self.name} tier dir {self.root} is missing; not recreating it")
        if not self.db.replaced():
            return False
        self._rebuild_from_files("index file was deleted or replaced")
        return True

    def heal(self, error: sqlite3.DatabaseError | None = None) -> bool:
        """After a read failed: rebuild if the index file is gone, the read said it is corrupt, or it
        no longer passes its checks. True if it was rebuilt."""
        if self.recover_if_lost():
            return True
        code = getattr(error, "sqlite_errorcode", None)
        corrupt = code is not None and code & 0xFF in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
        problem = f"read failed: {error}" if corrupt else self._check()
        if problem is None:
            return False
        self._rebuild_from_files(problem)
        return True

    def _check(self) -> str | None:
        try:
            (quick,) = self.writer.execute("PRAGMA quick_check").fetchone()
            if quick != "ok":
                return f"quick_check: {quick}"
            self.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    @property
    def writer(self) -> sqlite3.Connection:
        """The index's one read-write connection (the writer thread's, or the one caller's)."""
        return self.db.writer

    # -- write side --------------------------------------------------------------------------
    def reconcile(self, cancel: Callable[[], bool] | None = None, kind: str = "reconcile") -> ReconcileResult:
        """Make the index equal to the files, reading only files whose size or mtime moved."""
        started = time.perf_counter()
        on_disk = self._scan()
        sql = "SELECT path, size, mtime_ns, hash, indexed_at FROM files"
        known = {row[0]: row[1:] for row in self.writer.execute(sql)}
        result = ReconcileResult()
        self._begin()
        try:
            for rel in sorted(set(known) - set(on_disk)):
                self._remove(rel)
                result.removed.append(rel)
            for rel, st in sorted(on_disk.items()):
                _check(cancel)
                old = known.get(rel)
                if old is not None and (old[0], old[1]) == (st.size, st.mtime_ns) and not _racy(old[1], old[3]):
                    result.unchanged += 1
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
        self.integrity = "ok"
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
        (trigger,) = self.writer.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_ad'").fetchone()
        self.writer.execute("DROP TRIGGER chunks_ad")
        self.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all')")
        self.writer.execute("DELETE FROM chunks")
        self.writer.execute("DELETE FROM files")
        self.writer.execute(trigger)
        if self._changes is not None:
            self._changes.full = self._changes.dirty = True

    def apply_paths(self, rels: Iterable[str]) -> ReconcileResult:
        """Bring the named files up to date (changed, new or deleted): the queue's unit of work."""
        started = time.perf_counter()
        result = ReconcileResult()
        self._begin()
        try:
            for rel in rels:
                self._apply_one(rel, result)
            self._commit()
        except BaseException:
            self._rollback()
            raise
        result.duration_ms = (time.perf_counter() - started) * 1000
        return result

    def _apply_one(self, rel: str, result: ReconcileResult) -> None:
        st = stat_tier_file(self.root, rel)
        row = self.writer.execute("SELECT hash FROM files WHERE path = ?", (rel,)).fetchone()
        if st is None:
            if row is not None:
                self._remove(rel)
                result.removed.append(rel)
            return
        if self._index_file(st, row[0] if row else None) is None:
            result.unchanged += 1
        else:
            (result.added if row is None else result.updated).append(rel)

    def _begin(self) -> None:
        self.writer.execute("BEGIN IMMEDIATE")
        changes = _Changes(track=self._postings_on)
        if self._postings_on and (self._postings is None or self._postings.gen != self._gen(self.writer)):
            changes.full = True  # another process wrote the index, or the postings are not built yet
        self._changes = changes

    def _commit(self) -> None:
        """Commit the writer's transaction. The next postings snapshot is derived before the commit
        (inside the transaction, at the new generation) and offered as ``_pending`` across it, then
        swapped in: a search that meets the new generation first (the commit gives up the GIL)
        answers from it instead of falling back to FTS5."""
        changes, self._changes = self._changes, None
        ready: Snapshot | None = None
        if changes is not None and changes.dirty:
            self.writer.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_gen'")
            gen = self._gen(self.writer)
            if self._postings_on and not changes.full:
                ready = self._pending = self._next_postings(gen, changes)
        self.writer.execute("COMMIT")  # on failure the caller's _rollback() drops _pending
        if changes is None or not self._postings_on or not (changes.dirty or changes.full):
            return
        if ready is not None:
            self._postings = ready
            self._pending = None
        else:
            self._build_postings("rebuild" if changes.full else "delta unavailable")

    def _rollback(self) -> None:
        self._changes = None
        self._pending = None
        # SQLite has already rolled back after some errors (a full disk, an I/O error): a second
        # ROLLBACK would raise "no transaction is active" in place of the error that happened.
        if self.writer.in_transaction:
            self.writer.execute("ROLLBACK")

    def _remove(self, rel: str) -> None:
        changes = self._changes
        if changes is not None:
            if changes.wants_ids:
                changes.delete(r[0] for r in self.writer.execute("SELECT id FROM chunks WHERE path = ?", (rel,)))
            changes.dirty = True
        self.writer.execute("DELETE FROM chunks WHERE path = ?", (rel,))
        self.writer.execute("DELETE FROM files WHERE path = ?", (rel,))

    def _index_file(self, st: FileStat, old_hash: str | None) -> str | None:
        """(Re)index one file if its content hash changed; return the new hash, or None if not."""
        data = read_tier_file(self.root, st.rel)
        if data is None:
            return None
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        now = time.time()
        if digest == old_hash:
            self.writer.execute(
                "UPDATE files SET size = ?, mtime_ns = ?, indexed_at = ? WHERE path = ?",
                (len(data), st.mtime_ns, now, st.rel),
            )
            return None
        self.writer.execute(
            "INSERT INTO files (path, hash, size, mtime_ns, indexed_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET hash = excluded.hash, size = excluded.size, "
            "mtime_ns = excluded.mtime_ns, indexed_at = excluded.indexed_at",
            (st.rel, digest, len(data), st.mtime_ns, now),
        )
        chunks = chunk_markdown(_text(data, self.name, st.rel))
        # Chunks that are the same at the same place keep their row (and id): an append to a daily
        # file rewrites its last chunk or two, not every chunk of the file.
        old: dict[int, tuple[int, str, str, int, int]] = {}
        if old_hash is not None:
            sql = "SELECT ord, id, heading, body, line_start, line_end FROM chunks WHERE path = ?"
            old = {r[0]: r[1:] for r in self.writer.execute(sql, (st.rel,))}
        same = {
            i
            for i, c in enumerate(chunks)
            if (row := old.get(i)) is not None and row[1:] == (c.heading, c.body, c.line_start, c.line_end)
        }
        dead = [row[0] for i, row in old.items() if i not in same]
        fresh = [(i, c) for i, c in enumerate(chunks) if i not in same]
        changes = self._changes
        tracked = changes if changes is not None and changes.wants_ids else None
        if dead:
            if tracked is not None:
                tracked.delete(dead)
            self.writer.executemany("DELETE FROM chunks WHERE id = ?", [(cid,) for cid in dead])
        insert = (
            "INSERT INTO chunks (path, ord, heading, body, line_start, line_end, hash, plain) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        )
        rows = [
            (st.rel, i, c.heading, c.body, c.line_start, c.line_end, c.hash, is_plain(c.body or c.heading))
            for i, c in fresh
        ]
        if tracked is not None:
            for values, (_, c) in zip(rows, fresh, strict=True):
                cur = self.writer.execute(insert, values)
                assert cur.lastrowid is not None
                tracked.added[cur.lastrowid] = (c.heading, c.body)
        else:
            self.writer.executemany(insert, rows)
        if changes is not None and (dead or fresh):
            changes.dirty = True
        return digest

    # -- in-memory postings (sidecar.index.postings) ---------------------------------------------------
    @staticmethod
    def _gen(conn: sqlite3.Connection) -> int:
        return chunks_gen(conn) or 0

    def enable_postings(self) -> None:
        """Build the in-memory postings and keep them up to date from now on (writer thread)."""
        self._postings_on = True
        self._build_postings("enabled")

    def _build_postings(self, reason: str) -> None:
        from sidecar.index.postings import build_snapshot

        started = time.perf_counter()
        self._postings = None
        try:
            self.writer.execute("BEGIN")
            try:
                snap = build_snapshot(self.writer, self._gen(self.writer))
            finally:
                self.writer.execute("COMMIT")
        except Exception as exc:
            # Search stays correct through FTS5; say so rather than fail the write that got here.
            log.error("postings.failed", tier=self.name, reason=reason, error=f"{type(exc).__name__}: {exc}")
            return
        self._postings = snap
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

        snap = self._postings
        if snap is None:
            return None
        try:
            added = count_terms([(cid, h, b) for cid, (h, b) in changes.added.items()])
            nxt = apply_changes(snap, gen, changes.deleted, added)
        except Exception as exc:
            log.error("postings.failed", tier=self.name, reason="apply", error=f"{type(exc).__name__}: {exc}")
            return None
        return None if nxt.wants_rebuild() else nxt

    def _refresh_postings(self) -> None:
        """Writer thread, asked by a reader: rebuild if the postings do not describe the file."""
        self._refresh_pending = False
        if not self._postings_on or not self.db.is_open:
            return
        snap = self._postings
        if snap is None or snap.gen != self._gen(self.writer):
            self._build_postings("stale")

    def _ask_refresh(self) -> None:
        """A search met postings behind the file: the thread that writes the index rebuilds them
        (at once when it is this one; queued for the writer thread when the index has one)."""
        if self._refresh_pending or not self._postings_on:
            return
        if threading.get_ident() == self._writing_thread:
            self._refresh_postings()
            return
        if not self.threaded:
            return
        self._refresh_pending = True
        try:
            self.on_writer_thread(self._refresh_postings)
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

    # -- read side ---------------------------------------------------------------------------
    def release_reader_memory(self) -> int:
        """Empty the page caches of reader connections no thread is using (``PRAGMA
        shrink_memory``); the server does it when idle. Returns how many were shrunk."""
        return self.db.release_readers()

    def search(self, query: str, limit: int = 10, *, raw_fts: bool = False) -> list[RankedChunk]:
        """BM25 search, headings weighted above bodies; user text is always quoted. Answered from
        the in-memory postings when they describe the file, else by FTS5: the same ranking."""
        if not raw_fts:
            hits = self.search_postings(query, limit)
            if hits is not None:
                return hits
        return self._search_fts(query, limit, raw_fts=raw_fts)

    def search_postings(
        self, query: str, limit: int = 10, *, phrases: bool = True, max_postings: int | None = None
    ) -> list[RankedChunk] | None:
        """The in-memory answer (well under a millisecond at 10k chunks), or None when only FTS5
        can give it now (postings building, or behind the file). ``phrases=False``: also None
        for a query with a word of several tokens (``multi-agent``), which FTS5 scores;
        ``max_postings``: also None when the query's words have more postings than that to score
        (the cost of a search grows with them). The event loop asks both, and leaves those
        searches to a reader thread."""
        snap = self._postings
        if snap is None:
            return None
        words = terms(query)
        if not words:
            return []
        tokens = self._query_tokens(words)
        if not phrases and any(len(t) > 1 for t in tokens):
            return None
        if max_postings is not None and _postings_count(snap, tokens) > max_postings:
            return None
        hits = self._search_postings(snap, words, tokens, limit)
        if hits is None:
            pending = self._pending  # the database may be at the generation being committed
            if pending is not None and pending is not snap:
                hits = self._search_postings(pending, words, tokens, limit)
        if hits is None:
            self._ask_refresh()
        return hits

    def _query_tokens(self, words: list[str]) -> list[tuple[str, ...]]:
        from sidecar.index.postings import QueryTokens

        if self._tokens is None:
            self._tokens = QueryTokens()
        return self._tokens(words)

    def _search_postings(
        self, snap: Snapshot, words: list[str], tokens: list[tuple[str, ...]], limit: int
    ) -> list[RankedChunk] | None:
        with self.db.reading() as conn:
            return self._postings_hits(conn, snap, words, tokens, limit)

    def _postings_hits(
        self, conn: sqlite3.Connection, snap: Snapshot, words: list[str], tokens: list[tuple[str, ...]], limit: int
    ) -> list[RankedChunk] | None:
        """The answer from ``snap`` with rows read on ``conn`` (held by the caller), or None if
        the database is at another generation than ``snap``."""
        from sidecar.index.postings import top_k

        def phrase_scores(word: str) -> list[tuple[int, float]]:
            sql = "SELECT rowid, -bm25(chunks_fts, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?"
            return conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, quote_word(word))).fetchall()

        ranked = top_k(snap, list(zip(words, tokens, strict=True)), limit, phrase_scores)
        if ranked is None:
            return None
        if not ranked:
            return [] if self._gen(conn) == snap.gen else None
        marks = ",".join("?" * len(ranked))
        rows = conn.execute(
            "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, c.hash, "
            "(SELECT value FROM meta WHERE key = 'chunks_gen'), c.plain "
            f"FROM chunks c WHERE c.id IN ({marks})",
            [cid for cid, _ in ranked],
        ).fetchall()
        # One statement, one read snapshot: the rows and the generation they belong to.
        if len(rows) != len(ranked) or int(rows[0][7]) != snap.gen:
            return None
        by_id = {r[0]: r for r in rows}
        shown = query_tokens(words)
        out = []
        for cid, score in ranked:
            r = by_id[cid]
            out.append(RankedChunk(r[0], r[1], r[2], r[4], r[5], r[3] or r[2], score, r[6], bool(r[8]), shown))
        return out

    def _search_fts(self, query: str, limit: int, *, raw_fts: bool) -> list[RankedChunk]:
        match = query if raw_fts else build_match(query)
        if match is None:
            return []
        sql = (
            "WITH top AS (SELECT rowid, bm25(chunks_fts, ?, ?) AS rank FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) "
            "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, top.rank, c.hash, c.plain "
            "FROM top JOIN chunks c ON c.id = top.rowid ORDER BY top.rank, c.id"
        )
        try:
            with self.db.reading() as conn:
                rows = conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, match, limit)).fetchall()
        except sqlite3.OperationalError as exc:
            # SQLITE_ERROR is what FTS5 raises for a bad expression; busy, I/O or corruption are not the client's.
            if raw_fts and exc.sqlite_errorcode == sqlite3.SQLITE_ERROR:
                raise BadRequest(f"invalid FTS5 query: {exc}", code="invalid_fts_syntax") from None
            raise
        tokens = query_tokens(terms(query))
        return [
            RankedChunk(r[0], r[1], r[2], r[4], r[5], r[3] or r[2], -float(r[6]), r[7], bool(r[8]), tokens)
            for r in rows
        ]

    def status(self) -> dict[str, Any]:
        with self.db.reading() as conn:
            files, size = conn.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files").fetchone()
            (chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        try:
            index_bytes = os.path.getsize(self.path)
        except OSError:
            index_bytes = 0
        return {
            "tier": self.name,
            "dir": str(self.root),
            "files": files,
            "chunks": chunks,
            "bytes": size,
            "index_bytes": index_bytes,
            "last_reindex": self.last_reindex,
            "integrity": self.integrity,
            "skipped": {
                "count": len(self.skipped),
                "first": [{"path": s.rel, "reason": s.reason} for s in self.skipped[:SKIPPED_SHOWN]],
            },
            "bm25": self._bm25_status(),
        }

    def _bm25_status(self) -> dict[str, Any]:
        """Where BM25 answers from: in-memory postings (and how big), or FTS5 while they build."""
        snap = self._postings
        if snap is None:
            return {"engine": "fts5", "postings": "building" if self._postings_on else "off"}
        return {
            "engine": "postings",
            "terms": len(snap.vocab) + len(snap.delta),
            "postings": snap.postings,
            "delta_chunks": snap.delta_slots,
        }


def _postings_count(snap: Snapshot, tokens: list[tuple[str, ...]]) -> int:
    """How many postings a search of single-token ``tokens`` scores in ``snap``."""
    total = 0
    for token in tokens:
        if len(token) != 1:
            continue
        row = snap.vocab.get(token[0])
        if row is not None:
            total += int(snap.offsets[row + 1] - snap.offsets[row])
        extra = snap.delta.get(token[0])
        if extra is not None:
            total += len(extra[0])
    return total


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
