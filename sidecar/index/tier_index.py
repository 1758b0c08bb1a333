"""The FTS5 index of one memory tier, kept equal to the tier's markdown files.

Synchronous on purpose: the CLI uses it directly, and the server calls the write side from the
index database's one writer thread (``sidecar.index.tier``) and the read side from reader threads.
Files are the source of truth; the index can always be rebuilt from them.

:class:`TierIndex` opens the file and heals it: a missing, unreadable or corrupt index is deleted
and rebuilt from the files, and ``integrity`` says so; it is never served silently empty. It holds
the two sides that work on the open file: keeping it equal to the files (``sync``,
:class:`~sidecar.index.sync.IndexSync`) and searching it (``bm25``,
:class:`~sidecar.index.bm25.Bm25Search`), which share the in-memory postings.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sidecar.errors import TierMissing
from sidecar.index.bm25 import Bm25Search, LivePostings, RankedChunk, _postings_count
from sidecar.index.db import database, shrink_memory
from sidecar.index.sync import RACY_NS, SKIPPED_SHOWN, Cancelled, IndexSync, ReconcileResult

__all__ = [
    "CHECKED_SUFFIX",
    "INDEX_NAME",
    "READER_THREADS",
    "REBUILDING_SUFFIX",
    "UNCOUNTED",
    "Cancelled",
    "RankedChunk",
    "ReconcileResult",
    "TierIndex",
]

INDEX_NAME = "index.sqlite"
READER_THREADS = 2  # the server's searches that the event loop leaves to a thread
#: ``TierIndex.postings_counts`` of a word the index makes no token of: never taken for absent or rare.
UNCOUNTED = 2**62
#: Beside the index (``index.sqlite-checked``): the index file as it was when its checks last
#: passed and nothing had written it since (see ``TierIndex.open``).
CHECKED_SUFFIX = "-checked"
#: Beside the index (``index.sqlite-rebuilding``): a new index file while it is built from the
#: files, renamed over the index once whole (see ``TierIndex._rebuild_from_files``).
REBUILDING_SUFFIX = "-rebuilding"


class TierIndex:
    """One tier's ``index.sqlite``: write side for a single thread, read side for any thread."""

    def __init__(self, root: Path, name: str = "agent", *, threaded: bool = False) -> None:
        """``threaded``: the write side runs on the database's writer thread (the server's
        :class:`~sidecar.index.tier.Tier`), so a search may queue a refresh of the postings there;
        otherwise one thread uses the index (the command line) and starts none."""
        self.root = root
        self.name = name
        self.path = root / INDEX_NAME
        self.db = database(self.path, name, reader_threads=READER_THREADS)
        self.integrity = "unopened"
        #: How this open knew the file sound: "checked" (its checks ran), "remembered" (unchanged
        #: since they last passed), "rebuilt" (from the files), or "" before an open.
        self.checked = ""
        # Once the file is known sound: its stamp, when, and whether that is what the stamp file says.
        self._sound: tuple[list[int], int, bool] | None = None
        self.postings = LivePostings()
        self.sync = IndexSync(root, name, self.db, self.postings, threaded=threaded)
        self.bm25 = Bm25Search(self.db, self.postings, self.sync.ask_refresh)

    # -- lifecycle -------------------------------------------------------------------------
    def open(self, postings: bool = False, *, sync: bool = True) -> str:
        """Open (creating or rebuilding as needed), reconcile with the files; return integrity.
        ``postings``: also build the in-memory postings now (the server does it after ready).
        ``sync=False`` (memory off) opens the index without reading a single file into it.

        The file's checks (``PRAGMA quick_check`` and FTS5's integrity check: each reads the whole
        index, some 15 ms for 2,000 chunks and 150 ms for 10,000) are skipped when the file is
        the one they last passed on, unwritten since: the same inode, size and mtime as when they
        passed, no WAL frames beside it, and that mtime older than the timestamps' racy window
        then (a write in the same clock tick could keep it). Any write since, by this sidecar or
        another program, and the checks run again."""
        self.root.mkdir(parents=True, exist_ok=True)
        existed = self.path.exists()
        remembered = self._remembered()
        problem = self._try_open(check=remembered is None)
        if problem is None:
            self.checked = "checked" if remembered is None else "remembered"
            self._sound = (_stamp(self.path), time.time_ns(), False) if remembered is None else (*remembered, True)
        if problem is not None:
            self._rebuild_from_files(problem, sync=sync)
        else:
            self.integrity = "ok" if existed else "created"
            if sync:
                self.sync.reconcile(kind="reconcile")
        if postings:
            self.enable_postings()
        return self.integrity

    def _try_open(self, check: bool = True) -> str | None:
        """Open the writer and check the file (unless ``check`` is false); return what is wrong
        with it, or None."""
        try:
            self.db.connect()
        except sqlite3.DatabaseError as exc:
            return f"{type(exc).__name__}: {exc}"
        return self._check() if check else None

    @property
    def _checked_path(self) -> Path:
        return Path(f"{self.path}{CHECKED_SUFFIX}")

    def _remembered(self) -> tuple[list[int], int] | None:
        """The stamp of the index file and when its checks passed on it, if it is still that file
        (``open``); else None, and the checks run."""
        try:
            saved = json.loads(self._checked_path.read_text("utf-8"))
            stamp, at = [int(v) for v in saved["file"]], int(saved["at"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if _stamp(self.path) != stamp or at - stamp[3] < RACY_NS or _wal_frames(self.path):
            return None
        return stamp, at

    def _remember(self) -> None:
        """After the writer closed: keep the stamp of a sound file nothing wrote since it was known
        sound; forget it otherwise (the next open checks)."""
        sound, self._sound = self._sound, None
        if sound is None:
            return
        stamp, at, saved = sound
        path = self._checked_path
        if _stamp(self.path) != stamp or _wal_frames(self.path):
            path.unlink(missing_ok=True)
            return
        if saved:
            return
        temp = path.with_name(f"{path.name}.{os.getpid()}.{id(self)}.tmp")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"file": stamp, "at": at}, out)
            os.replace(temp, path)
        except OSError:  # a dir this user cannot write: the next open checks again
            temp.unlink(missing_ok=True)

    def _rebuild_from_files(self, reason: str, *, sync: bool = True) -> None:
        """Build a new index file from the markdown and put it in place of this one, saying why
        (``sync=False``: the file thrown away and left empty, the files not read).

        The new file is built beside the old one (``-rebuilding``) and renamed over it once whole.
        Until then the connections open on the old file keep answering searches from it (a file
        deleted under the server is still read through them), and a connection opened meanwhile
        meets no file or the damaged one and waits for the rebuild (``Tier._healing_read``): a
        search never answers from a half-built index. On a disk without room for both files the
        old one is deleted first and the new one built in its place (searches meanwhile may find
        it partly built, as a full disk may)."""
        self.checked = "rebuilt"
        if not sync:
            self._discard()
            self._try_open()
            self.integrity = f"discarded: {reason}"
            return
        try:
            built: Path | None = self._build_beside()
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_FULL:
                raise
            built = None  # no room for two index files: the old one goes first, as it must
        past = _held_gen(self.postings)
        self._discard()
        if built is not None:
            os.replace(built, self.path)
        self._try_open(check=built is None)  # the file just built, or a new empty one
        self.integrity = f"rebuilt: {reason}"
        if built is not None:
            self.sync.reload_postings()
            return
        _number_past(self.writer, past)
        self.sync.reconcile(kind="rebuild")  # the postings are built after its commit

    def _build_beside(self) -> Path:
        """A new index file of the tier's markdown, beside the index (no connection left on it)."""
        built = Path(f"{self.path}{REBUILDING_SUFFIX}")
        _unlink_with_journals(built)  # a build a crash left behind
        fresh = database(built, self.name)
        sync = self.sync.beside(fresh)
        try:
            fresh.connect()
            sync.reconcile(kind="rebuild")
            _number_past(fresh.writer, _held_gen(self.postings))
        except BaseException:
            fresh.close()
            _unlink_with_journals(built)
            raise
        fresh.close()  # checkpointed: no WAL beside it to carry over
        self.sync.adopt(sync)
        return built

    def _discard(self) -> None:
        """Close everything and delete the index files (they are rebuilt from the markdown)."""
        self._sound = None  # found unsound: nothing to remember
        self.close()
        _unlink_with_journals(self.path)
        self._checked_path.unlink(missing_ok=True)

    def close(self) -> None:
        """Close readers first, then checkpoint and close the writer so no WAL is left behind (the
        index may be opened again; the server's tier closes the database's threads after it)."""
        self.postings.snapshot = None
        self.db.close_connections()
        self._remember()

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

    # -- the two sides ------------------------------------------------------------------------
    def reconcile(self, cancel: Callable[[], bool] | None = None, kind: str = "reconcile") -> ReconcileResult:
        """Make the index equal to the files, reading only files whose size or mtime moved."""
        return self.sync.reconcile(cancel, kind)

    def rebuild(self, cancel: Callable[[], bool] | None = None) -> ReconcileResult:
        """Re-chunk every file in one transaction; on cancel, roll back to the previous index."""
        result = self.sync.rebuild(cancel)
        self.integrity = "ok"
        return result

    def apply_paths(self, rels: Iterable[str]) -> ReconcileResult:
        """Bring the named files up to date (changed, new or deleted): the queue's unit of work."""
        return self.sync.apply_paths(rels)

    def enable_postings(self) -> None:
        """Build the in-memory postings and keep them up to date from now on (writer thread). The
        build reads the whole index through the writer connection: its page cache is emptied
        after, or a sidecar nobody has asked anything yet would hold it for good (the idle release
        runs after a response)."""
        self.sync.enable_postings()
        if self.db.is_open:
            shrink_memory(self.writer)

    def hold_postings_in_numpy(self) -> None:
        """Hold the in-memory postings in numpy's layout whatever the tier's size, from the next
        build on (writer thread): for a process that has loaded numpy for its dense search, where
        it scores a query's words in about half the CPU of the ``array`` layout and saves no
        memory. Postings already built in ``array``s are built again now."""
        from sidecar.index.postings import SmallSnapshot

        self.postings.numpy = True
        if self.postings.on and isinstance(self.postings.snapshot, SmallSnapshot):
            self.enable_postings()

    def on_writer_thread(self, fn: Callable[[], None]) -> None:
        """Queue ``fn`` on the writer thread, in order with the writes (failures are logged)."""
        self.sync.on_writer_thread(fn)

    def search(self, query: str, limit: int = 10, *, raw_fts: bool = False) -> list[RankedChunk]:
        """BM25 search (:meth:`Bm25Search.search <sidecar.index.bm25.Bm25Search.search>`)."""
        return self.bm25.search(query, limit, raw_fts=raw_fts)

    def postings_counts(self, words: Sequence[str]) -> list[int] | None:
        """How many postings each of ``words`` has in the in-memory postings: a word the index
        makes several tokens of counts its rarest token's; 0 when no chunk of the tier holds it
        (neither the snapshot searches read nor the one a commit is making); ``UNCOUNTED`` for a
        word the index makes no token of. None while the postings cannot tell (off, building).
        A few dictionary lookups a word: what the duplicate check asks before it searches."""
        snap = self.postings.snapshot
        if snap is None:
            return None
        snaps = [snap] if self.postings.pending in (None, snap) else [snap, self.postings.pending]
        counts = []
        for tokens in self.bm25.query_tokens(list(words)):
            if not tokens:
                counts.append(UNCOUNTED)
                continue
            counts.append(min(max(_postings_count(s, [(token,)]) for s in snaps if s is not None) for token in tokens))
        return counts

    def search_postings(
        self, query: str, limit: int = 10, *, phrases: bool = True, max_postings: int | None = None
    ) -> list[RankedChunk] | None:
        """The in-memory answer, or None when only FTS5 can give it now
        (:meth:`Bm25Search.search_postings <sidecar.index.bm25.Bm25Search.search_postings>`)."""
        return self.bm25.search_postings(query, limit, phrases=phrases, max_postings=max_postings)

    def release_reader_memory(self) -> int:
        """Empty the page caches of reader connections no thread is using (``PRAGMA
        shrink_memory``); the server does it when idle. Returns how many were shrunk."""
        return self.db.release_readers()

    @property
    def last_reindex(self) -> dict[str, Any] | None:
        return self.sync.last_reindex

    def status(self) -> dict[str, Any]:
        files, chunks, size = self.bm25.counts()
        try:
            index_bytes = os.path.getsize(self.path)
        except OSError:
            index_bytes = 0
        skipped = self.sync.skipped
        return {
            "tier": self.name,
            "dir": str(self.root),
            "files": files,
            "chunks": chunks,
            "bytes": size,
            "index_bytes": index_bytes,
            "last_reindex": self.sync.last_reindex,
            "integrity": self.integrity,
            "skipped": {
                "count": len(skipped),
                "first": [{"path": s.rel, "reason": s.reason} for s in skipped[:SKIPPED_SHOWN]],
            },
            "bm25": self.bm25.engine_status(),
        }


def _stamp(path: Path) -> list[int]:
    """The index file's device, inode, size and mtime (all zero when it is missing)."""
    try:
        st = os.stat(path)
    except OSError:
        return [0, 0, 0, 0]
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


def _held_gen(postings: LivePostings) -> int:
    """The highest generation of the postings snapshots a search may hold now (0 for none)."""
    return max((snap.gen for snap in (postings.snapshot, postings.pending) if snap is not None), default=0)


def _number_past(conn: sqlite3.Connection, gen: int) -> None:
    """Move a new index file's chunk generation past ``gen``, that of every postings snapshot of the
    file it replaces: a search holding one as the files are swapped meets another generation and
    FTS5 answers it, never that snapshot's chunk ids read against the new file's rows."""
    if gen:
        sql = "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'chunks_gen'"
        conn.execute(sql, (gen + 1,))


def _unlink_with_journals(path: Path) -> None:
    """Delete a database file and the WAL, shared memory and journal files beside it."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _wal_frames(path: Path) -> bool:
    """Whether a WAL beside the index holds frames (written and not yet checkpointed into it)."""
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False
