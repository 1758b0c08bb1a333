"""One SQLite database file: one writer thread fed by a queue, read-only reader connections, every
PRAGMA in one connection factory, numbered migrations recorded in the file.

The tier index, the journal and the knowledge graph each hold one :class:`Database`:

- Writes run on the database's one writer thread, in the order they were submitted (a FIFO
  queue), each ``fn(conn)`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` (:meth:`Database.write`), or
  as it is for a caller that runs its own transactions (:meth:`Database.on_writer`).
- Reads run on reader threads, each thread with its own read-only connection (WAL lets them read
  while a write is in flight); :meth:`Database.read` gives ``fn`` one snapshot.
- Migrations are numbered SQL scripts applied in order at open, each in its own transaction with
  its number recorded in ``schema_migrations``: a crash part-way through one leaves the file at
  the version before it, and the next open applies it again.

A single-threaded caller (the command line) opens the writer on its own thread
(:meth:`Database.connect`) and reads through :meth:`Database.reading`; no thread is started.

Database files are ``0600`` whatever the umask: the file is made (or set) so before SQLite opens
it, and SQLite gives its ``-wal`` and ``-shm`` files the database file's mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from sidecar.errors import TierMissing

__all__ = [
    "DB_MODE",
    "Database",
    "connect",
    "migrate",
    "private_db_file",
    "schema_version",
    "shrink_memory",
]

T = TypeVar("T")
DB_MODE = 0o600
#: Page cache of a connection, in KiB: small, since the OS page cache holds the file anyway.
CACHE_KIB = 2000
#: Called with the database's path after the file was replaced under an open database.
Replaced = Callable[[Path], None]


def private_db_file(path: Path) -> None:
    """Make database ``path`` (and a ``-wal`` or ``-shm`` beside it) mode 0600, creating it empty
    if missing: only the sidecar's user reads memory."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, DB_MODE)
    try:
        os.fchmod(fd, DB_MODE)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(f"{path}{suffix}", DB_MODE, follow_symlinks=False)


def connect(
    path: Path,
    *,
    writer: bool,
    cache_kib: int = CACHE_KIB,
    functions: Mapping[str, Callable[..., Any]] | None = None,
) -> sqlite3.Connection:
    """Every connection of the sidecar, with every PRAGMA: autocommit (writers open their own
    ``BEGIN IMMEDIATE``), a busy timeout, foreign keys, a small page cache; the writer puts the
    file in WAL mode; a reader is opened read-only and sees only committed state. ``functions``
    (one argument each, deterministic) are registered on a writer, for migrations that call them."""
    if writer:
        private_db_file(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        for name, fn in (functions or {}).items():
            conn.create_function(name, 1, fn, deterministic=True)
    else:
        uri = f"{path.as_uri()}?mode=ro"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA cache_size = {-cache_kib}")
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    else:
        conn.execute("PRAGMA query_only = ON")
    return conn


def shrink_memory(conn: sqlite3.Connection) -> None:
    """Hand back the connection's page cache (the server does it when idle); call it on the thread
    that uses the connection."""
    conn.execute("PRAGMA shrink_memory")


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded in the file (0 for a new one)."""
    row = conn.execute("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    if row is None:
        return 0
    (version,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection, migrations: tuple[str, ...]) -> int:
    """Apply every migration not yet recorded, each in its own transaction; return the version.
    Migration ``n`` is ``migrations[n - 1]``: a list only ever grows at its end."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
    current = schema_version(conn)
    for version, sql in enumerate(migrations, start=1):
        if version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (version, time.time()))
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise
    return max(current, len(migrations))


def _statements(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies whole."""
    out: list[str] = []
    buf = ""
    for piece in sql.strip().split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \n;"):
                out.append(buf.strip())
            buf = ""
    if buf.strip(" \n;"):
        out.append(buf.strip().removesuffix(";"))
    return out


def _rollback(conn: sqlite3.Connection) -> None:
    # SQLite has already rolled back after some errors (a full disk, an I/O error): a second
    # ROLLBACK would raise "no transaction is active" in place of the error that happened.
    if conn.in_transaction:
        conn.execute("ROLLBACK")


@dataclass(slots=True, eq=False)
class _Reader:
    """One thread's read-only connection; its lock is held while the thread uses it."""

    conn: sqlite3.Connection
    generation: int
    lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False


_STOP = object()


class Database:
    """One SQLite file, its writer thread and its readers. Nothing is opened until :meth:`open`
    (or :meth:`connect` for a single-threaded caller)."""

    def __init__(
        self,
        path: Path,
        migrations: tuple[str, ...],
        *,
        name: str,
        reader_threads: int = 1,
        writer_cache_kib: int = CACHE_KIB,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        on_replaced: Replaced | None = None,
    ) -> None:
        """``on_replaced``: before each :meth:`write`, check that ``path`` is still the file the
        writer has open; when it was deleted or replaced (the memory dir restored from a backup),
        open the file there now (migrated), drop the readers and call it. Without it, the caller
        decides (the tier index rebuilds from its files)."""
        self.path = path
        self.name = name
        self.migrations = migrations
        self._functions = dict(functions or {})
        self._writer_cache = writer_cache_kib
        self._on_replaced = on_replaced
        self._writer: sqlite3.Connection | None = None
        self.writer_thread: int | None = None  # the thread that opened the writer
        self._inode: int | None = None
        self._reader_threads = reader_threads
        self._read_pool: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._readers: list[_Reader] = []
        self._readers_lock = threading.Lock()
        self._generation = 0
        self._queue: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | object] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._closed = False

    # -- opening and closing ---------------------------------------------------------------------
    async def open(self) -> None:
        """Create or open the file on the writer thread and apply the migrations."""
        await self.on_writer(self.connect)

    def connect(self) -> sqlite3.Connection:
        """Open the writer connection on the calling thread (the writer thread, or a single-threaded
        caller) and apply the migrations; the connection."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path, writer=True, cache_kib=self._writer_cache, functions=self._functions)
        self._writer = conn
        self.writer_thread = threading.get_ident()
        try:
            migrate(conn, self.migrations)
            self._inode = self.path.stat().st_ino
        except BaseException:
            self._writer = None
            conn.close()
            raise
        return conn

    @property
    def writer(self) -> sqlite3.Connection:
        """The one read-write connection: for code on the writer thread, or a single-threaded caller."""
        if self._writer is None:
            raise RuntimeError(f"the {self.name} database is not open")
        return self._writer

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    def close_connections(self) -> None:
        """Close the readers (each once no thread is using it), then checkpoint and close the writer
        so no WAL is left behind. On the writer thread, or a single-threaded caller; the database
        may be connected again."""
        self.drop_readers()
        writer, self._writer = self._writer, None
        if writer is not None:
            # A corrupt or vanished file is about to be discarded anyway.
            with contextlib.suppress(sqlite3.DatabaseError):
                writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            writer.close()

    async def aclose(self) -> None:
        """Run what is queued, close every connection, stop the threads."""
        if self._closed:
            return
        with contextlib.suppress(RuntimeError):
            await self.on_writer(self.close_connections)
        with self._thread_lock:  # no write can be queued behind the stop, never to run
            self._closed = True
            thread = self._thread
            if thread is not None:
                self._queue.put(_STOP)  # after anything queued before the close: it runs first
        if thread is not None:
            thread.join()
        if self._read_pool is not None:
            self._read_pool.shutdown(wait=True)

    def close(self) -> None:
        """Close a database used from one thread only (no writer thread was started)."""
        if self._thread is not None:
            raise RuntimeError(f"the {self.name} database has a writer thread: use aclose()")
        self.close_connections()
        self._closed = True
        if self._read_pool is not None:
            self._read_pool.shutdown(wait=True)

    # -- the writer thread ------------------------------------------------------------------------
    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Queue ``fn()`` for the writer thread, after everything queued before it. RuntimeError
        once the database is closed. A future cancelled before its turn is skipped."""
        future: Future[T] = Future()
        with self._thread_lock:
            if self._closed:
                raise RuntimeError(f"the {self.name} database is closed")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"{self.name}-writer", daemon=True)
                self._thread.start()
            self._queue.put((fn, future))
        return future

    def _run(self) -> None:
        while True:
            task = self._queue.get()
            if task is _STOP:
                return
            assert isinstance(task, tuple)
            fn, future = task
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn()
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

    async def on_writer(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the writer thread, in order with every other write; no transaction is opened
        (the caller's ``fn`` runs its own, on :attr:`writer`)."""
        return await asyncio.wrap_future(self.submit(fn))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(writer)`` in one ``BEGIN IMMEDIATE`` transaction on the writer thread: committed when
        it returns, rolled back when it raises."""
        return await self.on_writer(lambda: self.write_now(fn))

    def write_now(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`write` on the calling thread (the writer thread, or a single-threaded caller)."""
        if self._on_replaced is not None:
            self._follow_replaced()
        conn = self.writer
        conn.execute("BEGIN IMMEDIATE")
        try:
            result = fn(conn)
        except BaseException:
            _rollback(conn)
            raise
        conn.execute("COMMIT")
        return result

    def replaced(self) -> bool:
        """Whether the file at ``path`` is not the one the writer has open (deleted or replaced)."""
        try:
            inode: int | None = self.path.stat().st_ino
        except FileNotFoundError:
            inode = None
        return inode != self._inode

    def _follow_replaced(self) -> None:
        if not self.replaced():
            return
        if not self.path.parent.is_dir():  # not recreated: it may be a volume that is not mounted yet
            raise TierMissing(f"the memory dir {self.path.parent} is missing; the {self.name} is not recreated")
        self.close_connections()
        self.connect()
        assert self._on_replaced is not None
        self._on_replaced(self.path)

    # -- readers ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """This thread's read-only connection, held (a close waits for it) for the block."""
        while True:
            reader: _Reader | None = getattr(self._local, "reader", None)
            if reader is None or reader.generation != self._generation or reader.closed:
                reader = _Reader(connect(self.path, writer=False), self._generation)
                self._local.reader = reader
                with self._readers_lock:
                    self._readers.append(reader)
            with reader.lock:
                if reader.closed:  # dropped between the check and the lock: open another
                    continue
                yield reader.conn
                return

    def drop_readers(self) -> None:
        """Close every reader connection (each once no thread is using it): the next read opens a
        new one, on the file there is now."""
        self._generation += 1
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for reader in readers:
            # Never under a thread that is using it: closing a connection in the middle of another
            # thread's statement is a use-after-free in SQLite, not an exception.
            with reader.lock:
                reader.closed = True
                reader.conn.close()

    async def on_reader(self, fn: Callable[[], T]) -> T:
        """``fn()`` on a reader thread (it reads through :meth:`reading`)."""
        if self._read_pool is None:
            self._read_pool = ThreadPoolExecutor(self._reader_threads, thread_name_prefix=f"{self.name}-reader")
        return await asyncio.get_running_loop().run_in_executor(self._read_pool, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``fn(reader)`` on a reader thread, every statement in it reading one snapshot."""
        return await self.on_reader(lambda: self.read_now(fn))

    def read_now(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """:meth:`read` on the calling thread."""
        with self.reading() as conn:
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")

    # -- memory -----------------------------------------------------------------------------------
    def release_readers(self) -> int:
        """Empty the page caches of reader connections no thread is using; how many were emptied."""
        with self._readers_lock:
            readers = list(self._readers)
        done = 0
        for reader in readers:
            if reader.lock.acquire(blocking=False):
                try:
                    if not reader.closed:
                        shrink_memory(reader.conn)
                        done += 1
                finally:
                    reader.lock.release()
        return done

    async def release_memory(self) -> None:
        """Empty every connection's page cache (the server does it when idle): the writer's on
        the writer thread, the readers' no thread is using."""

        def writer() -> None:
            if self._writer is not None:
                shrink_memory(self._writer)

        await self.on_writer(writer)
        self.release_readers()
