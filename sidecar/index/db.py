"""The tier index's database file: its numbered migrations and the connections to it.

The index file holds files, chunks, an FTS5 external-content table kept in sync by triggers,
and (from migration 2) chunk vectors. Connections, PRAGMAs, the writer thread and the migration
runner are the sidecar's one :mod:`sidecar.db`; this module says what is particular to an index.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sidecar.db import Database, connect, schema_version, shrink_memory
from sidecar.db import migrate as _migrate
from sidecar.index.snippet import is_plain

__all__ = [
    "FUNCTIONS",
    "MIGRATIONS",
    "WRITER_CACHE_KIB",
    "chunks_gen",
    "connect_reader",
    "connect_writer",
    "database",
    "migrate",
    "schema_version",
    "shrink_memory",
]

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


#: The writer's page cache in KiB: a rebuild walks every chunk; readers keep the default.
WRITER_CACHE_KIB = 8000
#: SQL functions every writer connection has (migration 5 calls ``is_plain``).
FUNCTIONS = {"is_plain": is_plain}


def database(path: Path, name: str, *, reader_threads: int = 1) -> Database:
    """The :class:`~sidecar.db.Database` of the index file ``path`` (not opened yet)."""
    return Database(
        path, MIGRATIONS, name=name, reader_threads=reader_threads, writer_cache_kib=WRITER_CACHE_KIB,
        functions=FUNCTIONS,
    )  # fmt: skip


def connect_writer(path: Path) -> sqlite3.Connection:
    """A read-write connection to an index file, not migrated (callers use BEGIN IMMEDIATE)."""
    return connect(path, writer=True, cache_kib=WRITER_CACHE_KIB, functions=FUNCTIONS)


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection; it sees the last committed state, never a rebuild in progress."""
    return connect(path, writer=False)


def migrate(conn: sqlite3.Connection, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Apply the index's missing migrations (or the first ``migrations`` of them); the version."""
    return _migrate(conn, migrations)


def chunks_gen(conn: sqlite3.Connection) -> int | None:
    """The index's chunk generation (migration 3), moved by every commit that changed a chunk, by
    any process; None where the index has none."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'chunks_gen'").fetchone()
    return int(row[0]) if row else None
