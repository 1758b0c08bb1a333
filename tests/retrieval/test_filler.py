"""No filler: a hit is returned only if it earned it (a BM25 match, a cosine above ``DENSE_MATCH``, or,
in a dialogue, the turn beside an earned turn), and a query nothing earns gets no hits at all.

The fusion rules are checked on small hand-made legs; the searcher on a real tier of real files,
with vectors from the real MiniLM model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.tier import Tier
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import (
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    DENSE_MATCH,
    HybridSearcher,
    fuse_rrf,
    fuse_weighted,
)
from sidecar.retrieval.vectors import VectorIndex
from tests.support.embedding import drain, needs_model
from tests.support.memory import AGENT_MD, DAILY_MD, DIALOGUE_MD, TOOLS_MD, write
from tests.support.queries import nonsense

HOUSEHOLD = """# Household

Our feline companion Miso refuses to eat anything except salmon.

The boiler service is booked for the first Monday of every month.
"""
TRAVEL = """# Travel

Booked the train to Lisbon for the conference in March, window seat.
"""


# -- the fusion rules ---------------------------------------------------------------------------
def test_a_chunk_that_earned_nothing_is_left_out() -> None:
    weak = DENSE_MATCH - 0.05
    fused = fuse_weighted([(1, 5.0)], [(2, 0.6), (3, weak)], {1: 0.3, 2: 0.6, 3: weak}, {})
    assert sorted(s.id for s in fused) == [1, 2]
    assert all(s.score > 0 for s in fused)


def test_nothing_earned_means_no_hits() -> None:
    assert fuse_weighted([], [(1, DENSE_MATCH), (2, 0.1)], {1: DENSE_MATCH, 2: 0.1}, {}) == []
    assert fuse_weighted([], [], {}, {}) == []
    assert fuse_rrf([], [(1, DENSE_MATCH), (2, 0.1)], {1: DENSE_MATCH, 2: 0.1}) == []


def _in_order(order: list[int]) -> dict[int, dict[int, int]]:
    """Neighbour maps of chunks ``order`` laid out in one file, two places either way."""
    return {cid: {o: order[i + o] for o in (-2, -1, 1, 2) if 0 <= i + o < len(order)} for i, cid in enumerate(order)}


def test_plain_neighbours_reorder_earned_chunks_and_never_add_one() -> None:
    # One file, chunks 10..14 in order; 11 is a strong BM25 hit, 13 a weak one, the rest earned nothing.
    near = _in_order([10, 11, 12, 13, 14])
    cosines = {10: 0.05, 11: 0.5, 12: 0.05, 13: 0.05, 14: 0.05}
    alone = {s.id: s for s in fuse_weighted([(11, 4.0), (13, 0.4)], [(11, 0.5)], cosines, {})}
    fused = {s.id: s for s in fuse_weighted([(11, 4.0), (13, 0.4)], [(11, 0.5)], cosines, near)}
    assert sorted(fused) == [11, 13], "a neighbour with no query term and no dense match of its own is no hit"
    assert fused[11].score == alone[11].score and fused[11].context == 0.0
    gap = alone[11].score - alone[13].score
    assert fused[13].score == pytest.approx(alone[13].score + CONTEXT_BEFORE[1] * gap)  # lifted, still below 11
    assert fused[13].bm25_rank == 2 and fused[13].context > 0


def test_a_dialogue_turn_holds_the_turns_beside_it() -> None:
    # The same file as a dialogue: a turn's key holds its neighbouring turns, so the reply to a
    # matching question (and the turn before it) comes back on the question's words.
    order = [10, 11, 12, 13, 14]
    near = _in_order(order)
    weak = DENSE_MATCH - 0.05
    cosines = {10: 0.05, 11: 0.5, 12: 0.05, 13: weak, 14: 0.05}
    fused = {s.id: s for s in fuse_weighted([(11, 4.0)], [(11, 0.5), (13, weak)], cosines, near, turns=near)}
    top = fused[11].score
    assert fused[11].context == 0.0
    assert fused[12].score == pytest.approx(CONTEXT_BEFORE[0] * top)  # the turn after the match
    assert fused[10].score == pytest.approx(CONTEXT_AFTER[0] * top)  # the turn before it
    assert fused[13].score == pytest.approx(CONTEXT_BEFORE[1] * top)  # its own weak cosine adds nothing
    assert 14 not in fused  # 13 earned nothing of its own, so it lends nothing
    assert all(s.score <= top for s in fused.values())


def test_rrf_keeps_only_dense_candidates_above_the_match_floor() -> None:
    fused = fuse_rrf([(2, 3.0)], [(1, 0.5), (3, DENSE_MATCH)], {1: 0.5, 2: 0.2, 3: DENSE_MATCH})
    assert sorted(s.id for s in fused) == [1, 2]
    assert all(s.score > 0 for s in fused)


# -- the searcher on a real tier ----------------------------------------------------------------
@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    write(root, "topics/household.md", HOUSEHOLD)
    write(root, "topics/travel.md", TRAVEL)
    return root


class Searching:
    """A real tier with every chunk's vector filled by the real batcher, and its searchers."""

    def __init__(self, root: Path, model: OnnxEmbedder | None) -> None:
        self.tier = Tier("agent", root)
        self.model = model
        self.vectors = VectorIndex(self.tier.index.path, model.model_id if model else None, model.dim if model else 0)

    async def open(self) -> None:
        await self.tier.open()
        if self.model is not None:
            health = EmbedderHealth(self.model, confirmed=True)
            batcher = EmbedBatcher(self.model, health, {"agent": self.tier}, {"agent": self.vectors})
            await drain(batcher, self.vectors)

    async def close(self) -> None:
        self.vectors.close()
        await self.tier.close()

    def searcher(self, fusion: str = "weighted") -> HybridSearcher:
        health = EmbedderHealth(self.model, confirmed=True) if self.model else None
        vectors = {"agent": self.vectors} if self.model else {}
        return HybridSearcher(self.model, health, vectors, fusion=fusion, query_timeout=30.0)

    async def search(self, query: str, fusion: str = "weighted", limit: int = 10) -> list[dict[str, Any]]:
        results, degraded = await self.searcher(fusion).search(self.tier, query, limit, True)
        assert degraded == []
        return results


@pytest.fixture
async def hybrid(memory: Path, model: OnnxEmbedder) -> AsyncIterator[Searching]:
    rig = Searching(memory, model)
    await rig.open()
    yield rig
    await rig.close()


def earned(result: dict[str, Any]) -> bool:
    """A hit with a query term of its own or its own dense match (no dialogue in these notes)."""
    ex = result["explain"]
    dense = ex["dense"]["score"]
    return ex["bm25"]["rank"] is not None or (dense is not None and dense > DENSE_MATCH)


@needs_model
@pytest.mark.parametrize("fusion", ["weighted", "rrf"])
async def test_nonsense_queries_get_no_hits(hybrid: Searching, fusion: str) -> None:
    for query in nonsense(40):
        assert await hybrid.search(query, fusion) == [], query


@needs_model
async def test_a_weak_query_gets_only_the_hits_that_earned_them(hybrid: Searching) -> None:
    chunks = (await hybrid.tier.status())["chunks"]
    results = await hybrid.search("postgres")
    assert results, "the daily note says postgres"
    assert any("postgres" in r["snippet"] for r in results)
    assert len(results) < chunks, "every chunk came back: filler"
    assert all(r["score"] > 0 and earned(r) for r in results), results


@needs_model
async def test_a_real_dense_match_still_comes_back(hybrid: Searching) -> None:
    query = "which pet food does the cat like"
    assert not await hybrid.tier.search(query, 10), "the query must share no word with the notes"
    results = await hybrid.search(query)
    assert results and "Miso" in results[0]["snippet"]
    assert all(r["score"] > 0 and earned(r) for r in results)


async def test_a_bm25_answer_has_no_zero_score_hits(memory: Path) -> None:
    rig = Searching(memory, None)
    await rig.open()
    try:
        for query in ("postgres", "salmon boiler", "the sqlite driver name"):
            results = await rig.search(query)
            assert results and all(r["score"] > 0 for r in results), query
        assert await rig.search("qwxzyv") == []
    finally:
        await rig.close()


@needs_model
async def test_a_real_term_with_noise_words_gets_only_the_note_that_holds_it(hybrid: Searching) -> None:
    write(hybrid.tier.root, "topics/tools.md", TOOLS_MD)
    await hybrid.tier.reconcile()
    await hybrid.open()
    for query in ("grafana qwxzyv flurbinate zazzle", "tailwind inline styles"):
        results = await hybrid.search(query)
        assert results, query
        assert all(earned(r) and r["score"] > 0 for r in results), (query, [r["explain"] for r in results])
    grafana = await hybrid.search("grafana qwxzyv flurbinate zazzle")
    assert [r["heading"] for r in grafana] == ["Tools > Grafana"]
    assert "Postgres" not in " ".join(r["snippet"] for r in await hybrid.search("tailwind inline styles"))


@needs_model
async def test_the_reply_turn_comes_back_with_its_question(hybrid: Searching) -> None:
    write(hybrid.tier.root, "daily/2026-05-10.md", DIALOGUE_MD)
    write(hybrid.tier.root, "topics/tools.md", TOOLS_MD)
    await hybrid.tier.reconcile()
    await hybrid.open()
    rows = hybrid.tier.index.writer.execute("SELECT id, path, heading FROM chunks ORDER BY path, ord").fetchall()
    dialogue = [cid for cid, path, _ in rows if path == "daily/2026-05-10.md"]
    spoken = {cid for cid, _, heading in rows if heading.endswith((" > Ana", " > Ben"))}
    tools = [cid for cid, path, _ in rows if path == "topics/tools.md"]
    turns = hybrid.vectors.turns(dialogue + tools, 2)
    assert len(spoken) == 4 and set(turns) == spoken, "the session's turns are a dialogue, its headings are not"
    assert not set(turns) & set(tools), "sections on distinct topics are not turns"
    results = await hybrid.search("hiking trip you planned")
    reply = [r for r in results if "Tamalpais" in r["snippet"]]
    assert reply and reply[0]["explain"]["bm25"]["rank"] is None and reply[0]["explain"]["context"] > 0
