"""The graph's SQLite file: a file made at an earlier schema version opens and migrates with its
facts kept, and the store's writes and reads go through the one ``Database`` (real files)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sidecar.db import migrate
from sidecar.kg.model import NewFact, Scope
from sidecar.kg.sqlite_kg import MIGRATIONS, SqliteKgStore

SCOPE = Scope("w")


async def test_a_graph_made_at_version_1_opens_migrated_with_its_facts(tmp_path: Path) -> None:
    path = tmp_path / "kg.sqlite"
    old = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(old, MIGRATIONS[:1]) == 1
        old.execute("INSERT INTO kg_files (tier, path, digest) VALUES ('agent', 'a.md', 'd1')")
    finally:
        old.close()
    first = await SqliteKgStore.open(path)
    try:
        [fact] = await first.add(SCOPE, [NewFact("billing", "uses", "postgres", "2025-01-01", "file:agent:a.md#3")])
    finally:
        await first.aclose()
    store = await SqliteKgStore.open(path)  # opened again: nothing applied twice
    try:
        assert await store.fact(SCOPE, fact.id) == fact
        assert await store.file_digest("agent", "a.md") is None  # migration 2 reads every file again
    finally:
        await store.aclose()
    conn = sqlite3.connect(path)
    try:
        versions = [v for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        tables = {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    assert "kg_file_facts" in tables


async def test_a_write_that_fails_leaves_the_graph_as_it_was(tmp_path: Path) -> None:
    store = await SqliteKgStore.open(tmp_path / "kg.sqlite")
    try:
        await store.add(SCOPE, [NewFact("search", "uses", "opensearch", "2025-01-01", "api")])
        before = await store.stats(SCOPE)
        broken = [NewFact("a", "uses", "b", "2025-01-02", "api"), NewFact("c", "uses", "d", None, "api")]  # type: ignore[arg-type]
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):  # a fact with no start
            await store.add(SCOPE, broken)
        assert await store.stats(SCOPE) == before  # the first fact of the failed batch is not kept
    finally:
        await store.aclose()
