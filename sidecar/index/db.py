"""SQLite connections for a tier index: one factory for every PRAGMA, numbered migrations.

The index file holds files, chunks, an FTS5 external-content table kept in sync by triggers,
and (from migration 2) chunk vectors. One writer connection per index; readers open their own
read-only connections.

Database files are ``0600`` whatever the umask: the file is made (or set) so before SQLite opens
it, and SQLite gives its ``-wal`` and ``-shm`` files the database file's mode.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path

from sidecar.index.snippet import is_plain

__all__ = [
    "DB_MODE",
    "MIGRATIONS",
    "chunks_gen",
    "connect_reader",
    "connect_writer",
    "migrate",
    "private_db_file",
    "schema_version",
    "shrink_memory",
]

DB_MODE = 0o600

MIGRATIONS: tuple[str, ...] = (
    # 1: files, chunks, FTS5 over heading + body (porter on unicode61, diacritics folded).
    """
    CREATE TABLE files (
        path TEXT PRIMARY KEY,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        indexed_at REAL NOT NULL
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        heading TEXT NOT NULL,
        body TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        hash TEXT NOT NULL
    );
    CREATE INDEX chunks_path ON chunks(path, ord);
    CREATE INDEX chunks_hash ON chunks(hash);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        heading, body, content='chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body);
    END;
    CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, heading, body)
        VALUES ('delete', old.id, old.heading, old.body);
    END;
    CREATE TRIGGER chunks_au AFTER UPDATE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, heading, body)
        VALUES ('delete', old.id, old.heading, old.body);
        INSERT INTO chunks_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body);
    END;
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    """,
    # 2: vectors, keyed by (model, chunk hash): an unchanged chunk is never embedded twice.
    """
    CREATE TABLE embeddings (
        model TEXT NOT NULL,
        hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, hash)
    );
    """,
    # 3: a change generation, bumped by every transaction that changes chunks (by any process),
    # so an in-memory copy of the postings can tell whether it still describes the file.
    """
    INSERT OR IGNORE INTO meta (key, value) VALUES ('chunks_gen', '0');
    """,
    # 4: a log of which chunks each generation deleted and added (dropped again by migration 6).
    """
    CREATE TABLE chunk_log (gen INTEGER PRIMARY KEY, deleted TEXT NOT NULL, added TEXT NOT NULL);
    """,
    # 5: whether a chunk's snippet source (its body, or its heading when the body is empty) needs
    # no whitespace flattening beyond its line breaks (sidecar.index.snippet.is_plain, a function every
    # writer connection has), so a search need not check it ten times per query. The update
    # trigger now fires on heading and body only: setting the flag is no reason to re-tokenize.
    """
    ALTER TABLE chunks ADD COLUMN plain INTEGER NOT NULL DEFAULT 0;
    DROP TRIGGER chunks_au;
    CREATE TRIGGER chunks_au AFTER UPDATE OF heading, body ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, heading, body)
        VALUES ('delete', old.id, old.heading, old.body);
        INSERT INTO chunks_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body);
    END;
    UPDATE chunks SET plain = is_plain(COALESCE(NULLIF(body, ''), heading));
    """,
    # 6: the chunk log of migration 4 has no reader any more: every process that searches an index
    # keeps its postings from its own writes.
    """
    DROP TABLE IF EXISTS chunk_log;
    """,
    # 7: a vector per sentence of the chunk (float16 rows, in the order of
    # sidecar.index.snippet.sentence_spans over its body, or its heading when the body is empty),
    # pooled from the same model run as the chunk's vector: a dense-only hit's snippet is its
    # sentence closest to the query with no model call at search time. NULL where the embedder
    # cannot give them (a remote one).
    """
    ALTER TABLE embeddings ADD COLUMN sentences BLOB;
    """,
)


def _pragmas(conn: sqlite3.Connection, *, writer: bool) -> None:
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA foreign_keys = ON")
    # Small page caches: the OS page cache holds the file anyway, and RSS stays low.
    conn.execute(f"PRAGMA cache_size = {-8000 if writer else -2000}")
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")


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


def connect_writer(path: Path) -> sqlite3.Connection:
    """The one read-write connection of an index (autocommit; callers use BEGIN IMMEDIATE)."""
    private_db_file(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.create_function("is_plain", 1, is_plain, deterministic=True)  # migration 5
    _pragmas(conn, writer=True)
    return conn


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection; it sees the last committed state, never a rebuild in progress."""
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    _pragmas(conn, writer=False)
    return conn


def shrink_memory(conn: sqlite3.Connection) -> None:
    """Hand back the connection's page cache (the server does it when idle); call it on the thread
    that uses the connection."""
    conn.execute("PRAGMA shrink_memory")


def chunks_gen(conn: sqlite3.Connection) -> int | None:
    """The index's chunk generation (migration 3), moved by every commit that changed a chunk, by
    any process; None where the index has none."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'chunks_gen'").fetchone()
    return int(row[0]) if row else None


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT name FROM sqlite_master WHERE name = 'schema_migrations'").fetchone()
    if row is None:
        return 0
    (version,) = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()
    return int(version)


def migrate(conn: sqlite3.Connection, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Apply every migration not yet recorded, each in its own transaction; return the version.
    Shared by every database of the sidecar (tier indexes, the episodic journal)."""
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
            if conn.in_transaction:  # not when SQLite rolled back itself (a full disk)
                conn.execute("ROLLBACK")
            raise
    return len(migrations)


def _statements(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies whole."""
    out: list[str] = []
    buf = ""
    for line in sql.strip().splitlines():
        buf += line + "\n"
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
