"""A query word also finds its irregular forms, which porter stemming does not bring together
("come" and "came", "buy" and "bought", "children" and "child"): each form is searched beside the
word at ``FORM_WEIGHT`` of its own BM25, on the postings and on FTS5 alike. Real tiers of real
files; the hybrid with vectors from the real MiniLM model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.query import irregular_groups, terms
from sidecar.index.tier import Tier
from sidecar.index.tier_index import TierIndex
from sidecar.index.tokens import FORM_WEIGHT, QueryTokens, with_forms
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import DENSE_MATCH, HybridSearcher
from sidecar.retrieval.vectors import VectorIndex
from tests.support.embedding import drain, needs_model
from tests.support.memory import write

KITCHEN = """# Kitchen

The blast chiller is wiped down every Friday and its door seals are checked for tears.
"""
EQUIPMENT = """# Equipment

The blast chiller came from a hotel kitchen that closed last winter, second-hand, for 900 euros.
"""
OVEN = """# Oven

Dana cleans the deck oven on Mondays before the first bake.
"""
PURCHASES = """# Purchases

Dana bought the deck oven at an auction in March.
"""
SCHOOL = """# School

Each child brings a packed lunch on Thursdays.
"""


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "topics/kitchen.md", KITCHEN)
    write(root, "topics/equipment.md", EQUIPMENT)
    write(root, "topics/oven.md", OVEN)
    write(root, "topics/purchases.md", PURCHASES)
    write(root, "topics/school.md", SCHOOL)
    return root


class Searching:
    """A real tier with every chunk's vector filled by the real batcher, and the hybrid search."""

    def __init__(self, root: Path, model: OnnxEmbedder) -> None:
        self.tier = Tier("agent", root)
        self.model = model
        self.vectors = VectorIndex(self.tier.index.path, model.model_id, model.dim)
        self.health = EmbedderHealth(model, confirmed=True)

    async def search(self, query: str) -> list[dict[str, Any]]:
        searcher = HybridSearcher(self.model, self.health, {"agent": self.vectors}, query_timeout=30.0)
        results, degraded = await searcher.search(self.tier, query, 10, True)
        assert degraded == []
        return results


@pytest.fixture
async def hybrid(memory: Path, model: OnnxEmbedder) -> AsyncIterator[Searching]:
    rig = Searching(memory, model)
    await rig.tier.open()
    try:
        await drain(EmbedBatcher(model, rig.health, {"agent": rig.tier}, {"agent": rig.vectors}), rig.vectors)
        yield rig
    finally:
        rig.vectors.close()
        await rig.tier.close()


def earned(result: dict[str, Any]) -> bool:
    """A hit with a query term (or form) of its own or its own dense match (no dialogue here)."""
    dense = result["explain"]["dense"]["score"]
    return result["explain"]["bm25"]["rank"] is not None or (dense is not None and dense > DENSE_MATCH)


def test_each_group_is_forms_porter_keeps_apart() -> None:
    groups = irregular_groups()
    words = [w for group in groups for w in group]
    tokens = QueryTokens()(words)
    by_word = dict(zip(words, tokens, strict=True))
    assert all(len(t) == 1 for t in tokens), "every form is one token"
    for group in groups:
        assert len({by_word[w] for w in group}) == len(group), group
    assert not set(words) & {"be", "been", "was", "were", "have", "had", "do", "did", "done"}


def test_a_word_brings_its_other_forms_once() -> None:
    def forms(query: str) -> list[str]:
        words = terms(query)
        return [form for form, _ in with_forms(list(zip(words, QueryTokens()(words), strict=True)))]

    assert forms("where did the blast-chiller come from") == ["came"]
    assert forms("what did Dana buy") == ["bought"]
    assert forms("buying") == ["bought"]  # by the word's stem: "buying" and "buy" are one token
    assert forms("went children") == ["go", "gone", "child"]
    assert forms("come came") == []  # the query holds both already
    assert forms("postgres deploy") == []


@needs_model
async def test_a_question_finds_the_note_that_holds_the_irregular_form(hybrid: Searching) -> None:
    came = await hybrid.search("where did the blast chiller come from")
    assert [r["path"] for r in came[:2]] == ["topics/equipment.md", "topics/kitchen.md"]
    first = came[0]
    assert first["explain"]["bm25"]["rank"] == 1
    # The note holds the question's own words: those are what its snippet shows, not the form.
    assert {first["snippet"][a:b].lower() for a, b in first["highlights"]} == {"blast", "chiller"}
    bought = await hybrid.search("what did Dana buy")
    assert [r["path"] for r in bought[:2]] == ["topics/purchases.md", "topics/oven.md"]
    assert bought[0]["explain"]["bm25"]["rank"] == 1
    assert all(earned(r) for r in came + bought)


async def test_bm25_finds_a_form_alone_and_weighs_it_below_the_word(memory: Path) -> None:
    write(memory, "topics/family.md", "# Family\n\nThe children walk to school with the neighbours.\n")
    ix = TierIndex(memory)
    ix.open(postings=True)
    try:
        assert ix.status()["bm25"]["engine"] == "postings"
        found = ix.search("children", 10)
        assert [h.path for h in found] == ["topics/family.md", "topics/school.md"]  # "child" alone, after
        shown = found[1].window()  # a hit holding the form alone shows the form
        assert {shown.text[a:b] for a, b in shown.highlights} == {"child"}
        assert found[0].terms == ["children"]
        ix.bm25.forms = False
        assert [h.path for h in ix.search("children", 10)] == ["topics/family.md"]
        ix.bm25.forms = True
        # The form's own BM25 at FORM_WEIGHT: what the school note scores for "children" is half
        # what it scores for "child", its own word.
        own = {h.path: h.score for h in ix.search("child", 10)}
        assert found[1].score == pytest.approx(FORM_WEIGHT * own["topics/school.md"], rel=1e-12)
    finally:
        ix.close()


async def test_postings_and_fts5_rank_forms_alike(memory: Path) -> None:
    write(memory, "topics/both.md", "# Both\n\nThe children came and every child comes back.\n")
    ix = TierIndex(memory)
    ix.open(postings=True)
    try:
        snap = ix.postings.snapshot
        assert snap is not None
        for query in ["children come", "where did the blast chiller come from", "Dana buy oven", "bought", "child"]:
            words = terms(query)
            postings = ix.bm25.from_snapshot(snap, words, ix.bm25.query_tokens(words), 10)
            fts = ix.bm25.search_fts(query, 10, raw_fts=False)
            assert postings is not None and postings
            assert [(h.id, h.score) for h in postings] == [(h.id, h.score) for h in fts], query
            assert [h.snippet for h in postings] == [h.snippet for h in fts]
    finally:
        ix.close()
