"""The graph's file deleted under a running store (the memory dir restored from a backup): the
next write opens the file at that path now, and what it adds is read there, not committed into the
deleted file; the journal feed the graph reads reads the journal at the path now (real files, one
store kept open across the restore)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from sidecar.db import migrate
from sidecar.episodic.schema import MIGRATIONS as JOURNAL_MIGRATIONS
from sidecar.kg.model import NewFact, Scope
from sidecar.kg.sqlite_kg import JournalFeed, SqliteKgStore

SCOPE = Scope("w")


def _objects(path: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT o.name FROM kg_facts f JOIN kg_entities o ON o.id = f.object_id").fetchall()
    finally:
        conn.close()
    return {name for (name,) in rows}


async def test_a_write_after_the_dir_is_restored_lands_in_the_file_there_now(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    memory.mkdir()
    backup = tmp_path / "backup"
    store = await SqliteKgStore.open(memory / "kg.sqlite")
    try:
        await store.add(SCOPE, [NewFact("billing", "uses", "postgres", "2025-01-01", "api")])
        await store.release_memory()
        shutil.copytree(memory, backup)
        await store.add(SCOPE, [NewFact("search", "uses", "opensearch", "2025-01-02", "api")])
        shutil.rmtree(memory)  # restored from the backup taken before the second fact
        shutil.copytree(backup, memory)
        await store.add(SCOPE, [NewFact("queue", "uses", "rabbitmq", "2025-01-03", "api")])
    finally:
        await store.aclose()
    assert "rabbitmq" in _objects(memory / "kg.sqlite")  # not committed into the deleted file
    assert "postgres" in _objects(memory / "kg.sqlite")  # the restored file's facts kept


async def test_a_write_after_the_dir_is_emptied_makes_a_new_graph_there(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    memory.mkdir()
    store = await SqliteKgStore.open(memory / "kg.sqlite")
    try:
        await store.add(SCOPE, [NewFact("billing", "uses", "postgres", "2025-01-01", "api")])
        shutil.rmtree(memory)
        memory.mkdir()
        await store.add(SCOPE, [NewFact("queue", "uses", "rabbitmq", "2025-01-03", "api")])
        names = await store.entity_names(SCOPE, 10)
    finally:
        await store.aclose()
    assert _objects(memory / "kg.sqlite") == {"rabbitmq"}
    assert {name for _, name in names} == {"queue", "rabbitmq"}  # read from the file there now


def _journal(path: Path, *summaries: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        migrate(conn, JOURNAL_MIGRATIONS)
        for n, summary in enumerate(summaries):
            conn.execute(
                "INSERT INTO journal_entries (id, workspace_id, ts, entry_type, severity, summary)"
                " VALUES (?, 'w', '2025-01-01T00:00:00Z', 'note', 'info', ?)",
                (f"{path.parent.name}-{n}", summary),
            )
    finally:
        conn.close()


def test_the_journal_feed_reads_the_journal_restored_under_it(tmp_path: Path) -> None:
    memory = tmp_path / ".memory"
    memory.mkdir()
    _journal(memory / "journal.sqlite", "billing uses postgres")
    feed = JournalFeed(memory / "journal.sqlite")
    try:
        assert [row[6] for row in feed.entries(0)] == ["billing uses postgres"]
        shutil.rmtree(memory)
        assert feed.entries(0) == []  # no journal at the path: none read from the deleted one
        memory.mkdir()
        _journal(memory / "journal.sqlite", "queue uses rabbitmq", "search uses opensearch")
        assert [row[6] for row in feed.entries(0)] == ["queue uses rabbitmq", "search uses opensearch"]
    finally:
        feed.close()
