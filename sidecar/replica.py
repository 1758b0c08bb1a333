"""A read-only copy of a tier's search side, for a process that does not own the index.

A read worker (``sidecar.read_worker``) answers searches from the tier's ``index.sqlite`` while
the primary sidecar process writes it. It keeps its own in-memory postings (``sidecar.postings``)
and never writes the file. After each commit by the primary, the next search here finds the
database at a newer ``chunks_gen`` and catches up from ``chunk_log`` (the ids each generation
deleted and added, written by the primary in the same transaction): the added chunks are read and
tokenized, the deleted ones masked, as the primary does for its own postings. Where the log cannot
say (a rebuild, a gap, the file replaced) the postings are built again on a background thread and
searches go through FTS5 until then: the same ranking, only slower.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import structlog

from sidecar.db import connect_reader
from sidecar.index import Hit, TierIndex, _Changes
from sidecar.postings import Snapshot, apply_changes, build_snapshot, count_terms

__all__ = ["CATCH_UP_MAX", "ReplicaIndex"]

log = structlog.get_logger("sidecar.replica")

# Catching up (on the event loop) on more added chunks than this is left to a rebuild on the
# background thread: a big reindex by the primary.
CATCH_UP_MAX = 100


class ReplicaIndex(TierIndex):
    """The read side of a ``TierIndex`` another process writes. Never opens the writer."""

    def __init__(self, root: Path, name: str = "agent") -> None:
        super().__init__(root, name)
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) the connections read
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}-replica")
        self._building = False
        self._build_lock = threading.Lock()
        self.catch_ups = 0
        self.builds = 0

    def start(self) -> None:
        """Build the postings on the background thread (FTS5 answers until they are ready)."""
        self._check_file()

    def stop(self) -> None:
        self._builder.shutdown(wait=True, cancel_futures=True)
        self.close()

    # -- search ------------------------------------------------------------------------------
    def search_fast(self, query: str, limit: int) -> list[Hit] | None:
        """The answer from the in-memory postings (caught up to the file first), or None when only
        FTS5 can give it now: call ``search`` on a thread then."""
        self._check_file()
        for _ in range(2):  # a commit can land between the catch-up and the read
            if self._postings is None:
                return None
            hits = self.search_postings(query, limit, phrases=False)
            if hits is not None:
                return hits
            if not self.catch_up():
                return None
        return None

    def catch_up(self) -> bool:
        """Bring the postings to the database's generation from ``chunk_log``; True if they moved.
        False when they were current already (the query needs FTS5 for another reason: a word of
        several tokens), or when the log cannot say what changed (a rebuild is scheduled then)."""
        snap = self._postings
        if snap is None:
            return False
        try:
            with self._reading() as conn:
                nxt = self._delta(conn, snap)
        except sqlite3.DatabaseError:
            nxt = None
        if nxt is snap:
            return False
        if nxt is None:
            self._schedule_build()
            return False
        if self._postings is snap:
            self._postings = nxt
        self.catch_ups += 1
        if nxt.wants_rebuild():
            self._schedule_build()
        return True

    def _delta(self, conn: sqlite3.Connection, snap: Snapshot) -> Snapshot | None:
        conn.execute("BEGIN")  # one read snapshot: the generation, its log and its chunks
        try:
            gen = self._gen(conn)
            if gen == snap.gen:
                return snap
            if gen < snap.gen:
                return None
            rows = conn.execute(
                "SELECT deleted, added FROM chunk_log WHERE gen > ? AND gen <= ? ORDER BY gen", (snap.gen, gen)
            ).fetchall()
            if len(rows) != gen - snap.gen:
                return None  # a generation the primary did not log: a rebuild
            changes = _Changes(track=True)
            for deleted, added in rows:
                changes.delete(_ids(deleted))
                for cid in _ids(added):
                    changes.added[cid] = ("", "")
            if len(changes.added) > CATCH_UP_MAX:
                return None
            wanted = list(changes.added)  # at most CATCH_UP_MAX: one statement
            marks = ",".join("?" * len(wanted))
            sql = f"SELECT id, heading, body FROM chunks WHERE id IN ({marks})"
            chunks: list[tuple[int, str, str]] = conn.execute(sql, wanted).fetchall() if wanted else []
            if len(chunks) != len(wanted):
                return None
        finally:
            conn.execute("COMMIT")
        return apply_changes(snap, gen, changes.deleted, count_terms(chunks))

    # -- the file and the background build ----------------------------------------------------
    def _check_file(self) -> None:
        """If the primary replaced the index file (a rebuild after damage or deletion), drop the
        connections to the old one and the postings built from it."""
        try:
            st = os.stat(self.path)
            ident: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            ident = None
        if ident == self._file:
            return
        if self._file is not None:
            log.info("replica.file_replaced", tier=self.name)
            self.close()  # new reader connections, no postings
        self._file = ident
        if ident is not None:
            self._schedule_build()

    def reset(self) -> None:
        """After a read failed: reopen everything on the next search, and rebuild."""
        self._file = None
        self.close()

    def _schedule_build(self) -> None:
        with self._build_lock:
            if self._building:
                return
            self._building = True
        try:
            self._builder.submit(self._run_build)
        except RuntimeError:  # stopping
            self._building = False

    def _run_build(self) -> None:
        try:
            self._build()
        finally:
            with self._build_lock:
                self._building = False

    def _build(self) -> None:
        target = self._file
        try:
            conn = connect_reader(self.path)
        except sqlite3.DatabaseError as exc:
            log.warning("replica.build_failed", tier=self.name, error=str(exc))
            return
        try:
            conn.execute("BEGIN")
            snap = build_snapshot(conn, self._gen(conn))
            conn.execute("COMMIT")
        except (sqlite3.DatabaseError, RuntimeError) as exc:
            log.warning("replica.build_failed", tier=self.name, error=f"{type(exc).__name__}: {exc}")
            return
        finally:
            conn.close()
        if self._file == target:
            self._postings = snap
            self.builds += 1
            log.info("replica.postings_built", tier=self.name, chunks=snap.live, gen=snap.gen)


def _ids(text: str) -> list[int]:
    return [int(x) for x in text.split(",")] if text else []
