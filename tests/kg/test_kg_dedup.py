"""Entity dedup by meaning, with the real in-process model: a new name close to a known entity's
becomes its alias; names that differ in a number never merge."""

from __future__ import annotations

from pathlib import Path

from sidecar.kg.dedup import NameDedup
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import Scope
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from tests.support.embedding import needs_model

SCOPE = Scope("acme")


@needs_model
async def test_close_names_are_one_entity(tmp_path: Path, onnx_model: OnnxEmbedder) -> None:
    store = await SqliteKgStore.open(tmp_path / "kg.sqlite")
    embedder = onnx_model  # the worker's real model, loaded once (tests/conftest.py)
    try:
        graph = KnowledgeGraph(store, NameDedup(store, embedder))
        await graph.add_one(SCOPE, "authentication module", "owner", "Alice", valid_from="2026-01-01")
        await graph.add_one(SCOPE, "service-1", "located in", "eu-west", valid_from="2026-01-01")
        await graph.add_one(SCOPE, "auth module", "owner", "Bob", valid_from="2026-04-01")
        await graph.add_one(SCOPE, "service-2", "located in", "us-east", valid_from="2026-01-01")
        timeline = await graph.timeline(SCOPE, "authentication module")
        assert [(f["object"], f["current"]) for f in timeline["facts"]] == [("Alice", False), ("Bob", True)]
        assert timeline["entity"]["name"] == "authentication module"
        assert "auth module" in timeline["entity"]["aliases"]
        one = await graph.query(SCOPE, "service-1")
        two = await graph.query(SCOPE, "service-2")
        assert [f["object"] for f in one["facts"]] == ["eu-west"]
        assert [f["object"] for f in two["facts"]] == ["us-east"]
        # Without an embedder, the same names stay apart (matched by key and alias only).
        plain = KnowledgeGraph(store)
        await plain.add_one(Scope("other"), "authentication module", "owner", "Alice")
        await plain.add_one(Scope("other"), "auth module", "owner", "Bob")
        assert [f["object"] for f in (await plain.query(Scope("other"), "authentication module"))["facts"]] == ["Alice"]
    finally:
        await store.aclose()
