"""Index migrations on a real file: an index made by an older schema opens, migrates and serves."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sidecar.index.db import MIGRATIONS, connect_writer, migrate, schema_version
from sidecar.index.tier_index import INDEX_NAME, TierIndex
from tests.support.memory import AGENT_MD, write


def rewound(root: Path, version: int) -> sqlite3.Connection:
    """An index of ``root`` (AGENT.md only) taken back to schema ``version`` (>= 2), as a writer
    connection: later migrations unrecorded, and the schema they changed undone."""
    write(root, "AGENT.md", AGENT_MD)
    index = TierIndex(root)
    index.open()
    index.close()
    conn = connect_writer(root / INDEX_NAME)
    conn.execute("DELETE FROM schema_migrations WHERE version > ?", (version,))
    if version < 7:
        conn.execute("ALTER TABLE embeddings DROP COLUMN sentences")
    return conn


def test_an_index_with_a_chunk_log_loses_it_and_keeps_its_chunks(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    # Take the file back to migration 5, when the chunk log still existed, with rows in it.
    conn = rewound(root, 5)
    conn.execute("CREATE TABLE chunk_log (gen INTEGER PRIMARY KEY, deleted TEXT NOT NULL, added TEXT NOT NULL)")
    conn.execute("INSERT INTO chunk_log VALUES (1, '', '1,2')")
    assert schema_version(conn) == 5
    conn.close()

    index = TierIndex(root)
    assert index.open() == "ok"
    try:
        tables = {r[0] for r in index.writer.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "chunk_log" not in tables
        assert schema_version(index.writer) == len(MIGRATIONS) == 7
        assert [h.path for h in index.search("PostgreSQL", 5)] == ["AGENT.md"]
    finally:
        index.close()


def test_stored_vectors_survive_the_sentence_column_and_gain_none(tmp_path: Path) -> None:
    """Migration 7 adds the sentence vectors beside the chunk vectors: vectors stored before keep
    serving, with no sentence vectors (their snippets are chosen the slower way)."""
    root = tmp_path / "memory"
    conn = rewound(root, 6)
    (digest,) = conn.execute("SELECT hash FROM chunks LIMIT 1").fetchone()
    conn.execute("INSERT INTO embeddings VALUES ('m', ?, 2, ?)", (digest, b"\x00" * 8))
    conn.close()

    index = TierIndex(root)
    assert index.open() == "ok"
    try:
        assert schema_version(index.writer) == 7
        rows = index.writer.execute("SELECT hash, vector, sentences FROM embeddings").fetchall()
        assert rows == [(digest, b"\x00" * 8, None)]
    finally:
        index.close()


def test_migrating_a_new_file_twice_is_a_no_op(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    conn.create_function("is_plain", 1, lambda text: 1, deterministic=True)
    assert migrate(conn) == len(MIGRATIONS)
    assert migrate(conn) == len(MIGRATIONS)
    assert conn.execute("SELECT COUNT(*) FROM schema_migrations").fetchone() == (len(MIGRATIONS),)
    conn.close()
