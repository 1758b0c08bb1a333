"""A changed file waits ``linger_s`` before the graph reads it: appends to it in that time are read
once, in one reading of the lines they added, and the graph then holds what reading each append at
once would have. A graph question, the timer and the close each read the waiting files; a removal
is not kept waiting. On a real ``kg.sqlite`` and a real tier dir."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.ingest import Ingest
from sidecar.kg.model import Scope
from sidecar.kg.sqlite_kg import SqliteKgStore
from tests.support.waiting import async_wait_until

SCOPE = Scope("default")
PATH = "topics/vendors.md"
LINES = [
    "The billing service currently uses Stripe.\n",
    "The mail service currently uses Postmark.\n",
    "The search service currently uses Typesense.\n",
]


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteKgStore]:
    opened = await SqliteKgStore.open(tmp_path / "kg.sqlite")
    yield opened
    await opened.aclose()


def ingest(store: SqliteKgStore, root: Path, linger_s: float) -> Ingest:
    return Ingest(KnowledgeGraph(store), {"agent": root}, {"agent": SCOPE}, None, linger_s=linger_s)


def start(root: Path) -> Path:
    (root / "topics").mkdir(parents=True)
    (root / PATH).write_text("## Vendors\n", encoding="utf-8")
    return root / PATH


async def objects(store: SqliteKgStore) -> list[str]:
    """The objects of the graph's current facts, from its file."""
    with sqlite3.connect(store.path) as db:
        rows = db.execute(
            "SELECT o.name FROM kg_facts f JOIN kg_entities o ON o.id = f.object_id WHERE f.valid_to IS NULL"
        ).fetchall()
    return sorted(name for (name,) in rows)


async def test_appends_while_a_file_lingers_are_read_once(store: SqliteKgStore, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    note = start(root)
    reader = ingest(store, root, linger_s=30.0)
    await reader.file("agent", PATH)  # read once as it is
    read, lines = reader.files_read, reader.lines_read
    for line in LINES:
        with note.open("a", encoding="utf-8") as fh:
            fh.write(line)
        await reader.changed("agent", PATH, 0, "updated")
    assert (reader.files_read, reader.lines_read) == (read, lines)  # waiting: not read yet
    await reader.follow()  # what a graph question does first
    assert reader.files_read == read + 1  # one reading for the three appends
    assert reader.lines_read == lines + len(LINES)  # of the lines they added only
    assert await objects(store) == ["Postmark", "Stripe", "Typesense"]
    recorded = await store.file_digest("agent", PATH)
    assert recorded == hashlib.blake2b(note.read_bytes(), digest_size=16).hexdigest()
    await reader.aclose()


async def test_the_same_appends_read_at_once_hold_the_same_facts(store: SqliteKgStore, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    note = start(root)
    reader = ingest(store, root, linger_s=0.0)
    await reader.file("agent", PATH)
    read = reader.files_read
    for line in LINES:
        with note.open("a", encoding="utf-8") as fh:
            fh.write(line)
        await reader.changed("agent", PATH, 0, "updated")
    assert reader.files_read == read + len(LINES)  # no linger: each append read as it comes
    assert await objects(store) == ["Postmark", "Stripe", "Typesense"]
    await reader.aclose()


async def test_a_lingering_file_is_read_when_its_time_is_up(store: SqliteKgStore, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    note = start(root)
    reader = ingest(store, root, linger_s=0.05)
    note.write_text("## Vendors\n" + LINES[0], encoding="utf-8")
    await reader.changed("agent", PATH, 0, "added")

    async def read() -> bool:
        return await objects(store) == ["Stripe"]

    await async_wait_until(read, timeout=60, interval=0.02)  # nobody asked: the timer read it
    await reader.aclose()


async def test_the_close_reads_the_files_still_waiting(store: SqliteKgStore, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    note = start(root)
    reader = ingest(store, root, linger_s=3600.0)
    note.write_text("## Vendors\n" + LINES[1], encoding="utf-8")
    await reader.changed("agent", PATH, 0, "added")
    assert await objects(store) == []
    await reader.aclose()
    assert await objects(store) == ["Postmark"]


async def test_a_removal_is_not_kept_waiting(store: SqliteKgStore, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    note = start(root)
    note.write_text("## Vendors\n" + LINES[0], encoding="utf-8")
    reader = ingest(store, root, linger_s=3600.0)
    await reader.file("agent", PATH)
    assert await objects(store) == ["Stripe"]
    note.write_text("## Vendors\n" + LINES[0] + LINES[1], encoding="utf-8")
    await reader.changed("agent", PATH, 0, "updated")  # waits
    note.unlink()
    await reader.changed("agent", PATH, 0, "removed")  # ends the file's facts now, and drops the wait
    assert await objects(store) == []
    await reader.follow()
    assert await objects(store) == [] and await store.file_digest("agent", PATH) is None
    await reader.aclose()
