"""The graph's in-memory keys: a search's words are checked against every key an entity is found
by before the database is asked. They must follow this process's writes at once (a fact just added
lifts the next search) and another process's after ``KEYS_TTL``."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.kg import sqlite_kg
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import Scope
from sidecar.kg.sqlite_kg import SqliteKgStore

SCOPE = Scope("w")
CREW = Scope("w", "crew-a")


async def test_named_entities_follow_writes_here_and_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = await SqliteKgStore.open(tmp_path / "kg.sqlite")
    other = await SqliteKgStore.open(tmp_path / "kg.sqlite")  # stands in for `memory-sidecar kg add`
    graph = KnowledgeGraph(store)
    try:
        assert await graph.named_in(SCOPE, "who owns the billing service") == []
        await graph.add_one(SCOPE, "Priya", "owns", "billing service")
        named = await graph.named_in(SCOPE, "who owns the billing service")  # at once, no reload
        assert [e.name for e in named] == ["billing service"]
        assert [e.name for e in await graph.named_in(SCOPE, "what does priya do")] == ["Priya"]
        assert await graph.named_in(CREW, "what does priya do") == []  # another scope's keys
        # An alias learnt here counts at once too.
        await store.add_alias(SCOPE, named[0].id, "payments api")
        assert [e.name for e in await graph.named_in(SCOPE, "is the payments api up")] == ["billing service"]
        # Another process's write: seen once the keys are read again.
        await KnowledgeGraph(other).add_one(SCOPE, "Marcus", "owns", "search cluster")
        assert await graph.named_in(SCOPE, "ask marcus") == []
        monkeypatch.setattr(sqlite_kg, "KEYS_TTL", 0.0)
        assert [e.name for e in await graph.named_in(SCOPE, "ask marcus")] == ["Marcus"]
    finally:
        await other.aclose()
        await store.aclose()
