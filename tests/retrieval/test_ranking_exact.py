"""The hybrid ranking is computed cheaply and gives exactly the answer of the plain computation:
the weighted fusion against a line-by-line reference (random inputs), a real tier's ranking
(ids, scores, every ``Scored`` field) against the reference over neighbours and turns read
straight from the index, before and after the index changes (the cached neighbours follow), and a
tier with no vector answered without a query vector, identical to the answer that embeds it."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.index.tier import Tier
from sidecar.index.tier_index import RankedChunk
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.embed.base import Vectors
from sidecar.retrieval.hybrid import (
    CANDIDATES,
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    DENSE_FLOOR,
    DENSE_MATCH,
    DENSE_PIVOT,
    DENSE_WEIGHT,
    HybridSearcher,
    Scored,
    _Fused,
    fuse_weighted,
)
from sidecar.retrieval.standing import SLACK, standing
from sidecar.retrieval.vectors import VectorIndex, dialogue_turns
from tests.support.corpus import make_corpus, make_queries
from tests.support.embedding import drain, needs_model
from tests.support.memory import AGENT_MD, DAILY_MD, DIALOGUE_MD, TOOLS_MD, write

REACH = max(len(CONTEXT_BEFORE), len(CONTEXT_AFTER))

HOUSEHOLD = """# Household

Our feline companion Miso refuses to eat anything except salmon.

The boiler service is booked for the first Monday of every month.
"""

TRAVEL = """# Travel

Booked the train to Lisbon for the conference in March, window seat.
"""


class Searching:
    """A real tier with every chunk's vector filled by the real batcher."""

    def __init__(self, root: Path, model: OnnxEmbedder) -> None:
        self.tier = Tier("agent", root)
        self.model = model
        self.vectors = VectorIndex(self.tier.index.path, model.model_id, model.dim)

    async def open(self) -> None:
        await self.tier.open()
        health = EmbedderHealth(self.model, confirmed=True)
        batcher = EmbedBatcher(self.model, health, {"agent": self.tier}, {"agent": self.vectors})
        await drain(batcher, self.vectors)

    async def close(self) -> None:
        self.vectors.close()
        await self.tier.close()

    def searcher(self) -> HybridSearcher:
        health = EmbedderHealth(self.model, confirmed=True)
        return HybridSearcher(self.model, health, {"agent": self.vectors}, query_timeout=30.0)


def reference_fuse(
    bm25: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]],
    cosines: Mapping[int, float],
    neighbours: Mapping[int, Mapping[int, int]],
    turns: Mapping[int, Mapping[int, int]],
    before: Sequence[float] = CONTEXT_BEFORE,
    after: Sequence[float] = CONTEXT_AFTER,
) -> list[Scored]:
    """The weighted fusion as its docstring states it, one chunk at a time."""
    bm = dict(bm25)
    top_bm = max(bm.values(), default=0.0)
    top_cos = max((c for _, c in dense), default=DENSE_FLOOR)
    dense_weight = DENSE_WEIGHT * max(top_cos, 0.0) / DENSE_PIVOT
    base: dict[int, float] = {}
    for cid in dict.fromkeys([*bm, *(cid for cid, c in dense if c > DENSE_MATCH)]):
        b = bm.get(cid, 0.0) / top_bm if top_bm > 0 else 0.0
        cos = cosines.get(cid)
        if cid not in bm and (cos is None or cos <= DENSE_MATCH):
            continue
        if cos is None:
            cos = DENSE_FLOOR + b * max(top_cos - DENSE_FLOOR, 0.0)
        score = b + dense_weight * max(0.0, cos - DENSE_FLOOR)
        if score > 0.0:
            base[cid] = score
    lenders: dict[int, dict[int, int]] = {}
    for cid in base:
        for offset, other in neighbours.get(cid, {}).items():
            if other in base:
                lenders.setdefault(other, {})[-offset] = cid
        for offset, other in turns.get(cid, {}).items():
            lenders.setdefault(other, {})[-offset] = cid
    bm_rank = {cid: r for r, (cid, _) in enumerate(bm25, start=1)}
    dense_rank = {cid: r for r, (cid, _) in enumerate(dense, start=1)}
    out = []
    for cid in dict.fromkeys([*base, *lenders]):
        own = base.get(cid, 0.0)
        near = lenders.get(cid, {})
        borrowed = 0.0
        for distance in range(1, max(len(before), len(after)) + 1):
            gaps = [
                shares[distance - 1] * max(0.0, base.get(near[offset], 0.0) - own)
                for shares, offset in ((before, -distance), (after, distance))
                if distance <= len(shares) and offset in near
            ]
            borrowed += max(gaps, default=0.0)
        if own + borrowed > 0.0:
            out.append(
                Scored(
                    cid, own + borrowed, borrowed, bm_rank.get(cid), bm.get(cid), dense_rank.get(cid), cosines.get(cid)
                )
            )
    out.sort(key=lambda s: -s.score)
    return out


def read_context(path: Path, chunk_ids: Sequence[int]) -> tuple[dict[int, dict[int, int]], dict[int, dict[int, int]]]:
    """Neighbours and dialogue turns of ``chunk_ids``, read from the index file with no cache."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    near: dict[int, dict[int, int]] = {}
    window: dict[int, tuple[str, dict[int, tuple[int, str]]]] = {}
    try:
        for cid in chunk_ids:
            sql = (
                "SELECT c.heading, n.id, n.ord - c.ord, n.heading FROM chunks c JOIN chunks n "
                "ON n.path = c.path AND n.ord BETWEEN c.ord - ? AND c.ord + ? AND n.id != c.id WHERE c.id = ?"
            )
            for heading, nid, offset, other in conn.execute(sql, (REACH, REACH, cid)):
                near.setdefault(cid, {})[offset] = nid
                window.setdefault(cid, (heading, {}))[1][offset] = (nid, other)
    finally:
        conn.close()
    return near, dialogue_turns(window)


def reference_rank(vectors: VectorIndex, hits: list[RankedChunk], qvec: Vectors | None, limit: int) -> list[Scored]:
    """The ranking a hybrid search shows, computed plainly: both legs, the reference fusion over
    neighbours read from the index, then the first ``limit + SLACK`` with their standing."""
    bm25 = [(h.id, h.score) for h in hits]
    dense = vectors.search(qvec, CANDIDATES) if qvec is not None else []
    cosines = vectors.scores(qvec, [h.id for h in hits]) if qvec is not None else {}
    cosines.update(dense)
    earned = list(dict.fromkeys([*(h.id for h in hits), *(cid for cid, c in dense if c > DENSE_MATCH)]))
    near, turns = read_context(vectors.path, earned)
    ranked = reference_fuse(bm25, dense, cosines, near, turns)
    by_id = {h.id: h for h in hits}
    top = ranked[: limit + SLACK]
    rows = vectors.chunk_rows([s.id for s in top if s.id not in by_id])
    weighed = []
    for scored in top:
        where = by_id.get(scored.id) or rows.get(scored.id)
        weighed.append(scored if where is None else scored.with_standing(standing(where.path, where.heading)))
    weighed.sort(key=lambda s: -s.score)
    return [*weighed, *ranked[limit + SLACK :]]


offsets = st.sampled_from([-2, -1, 1, 2])
ids = st.integers(1, 40)


@settings(max_examples=300, deadline=None)
@given(
    bm25=st.lists(st.tuples(ids, st.floats(0.0, 20.0)), max_size=25, unique_by=lambda p: p[0]),
    dense=st.lists(st.tuples(ids, st.floats(-0.2, 1.0)), max_size=25, unique_by=lambda p: p[0]),
    extra=st.dictionaries(ids, st.floats(-0.2, 1.0), max_size=15),
    neighbours=st.dictionaries(ids, st.dictionaries(offsets, ids, max_size=4), max_size=30),
    turns=st.dictionaries(ids, st.dictionaries(offsets, ids, max_size=4), max_size=30),
    shares=st.sampled_from([(CONTEXT_BEFORE, CONTEXT_AFTER), ((0.5,), (0.3, 0.2, 0.1)), ((0.4, 0.0), (0.4,))]),
)
@pytest.mark.slow
def test_the_weighted_fusion_is_the_reference_to_the_last_bit(
    bm25: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    extra: dict[int, float],
    neighbours: dict[int, dict[int, int]],
    turns: dict[int, dict[int, int]],
    shares: tuple[tuple[float, ...], tuple[float, ...]],
) -> None:
    dense = sorted(dense, key=lambda p: -p[1])
    cosines = {**extra, **dict(dense)}
    before, after = shares
    got = fuse_weighted(bm25, dense, cosines, neighbours, turns=turns, before=before, after=after)
    assert got == reference_fuse(bm25, dense, cosines, neighbours, turns, before, after)


@settings(max_examples=300, deadline=None)
@given(
    bm25=st.lists(
        st.tuples(ids, st.sampled_from([0.0, 1.0, 2.5, 4.0, 9.5, 20.0])), max_size=25, unique_by=lambda p: p[0]
    ),
    dense=st.lists(st.tuples(ids, st.floats(-0.2, 1.0)), max_size=25, unique_by=lambda p: p[0]),
    extra=st.dictionaries(ids, st.floats(-0.2, 1.0), max_size=15),
    neighbours=st.dictionaries(ids, st.dictionaries(offsets, ids, max_size=4), max_size=30),
    turns=st.dictionaries(ids, st.dictionaries(offsets, ids, max_size=4), max_size=30),
    shares=st.sampled_from([(CONTEXT_BEFORE, CONTEXT_AFTER), ((0.5,), (0.3, 0.2, 0.1)), ((0.6, 0.5), (0.3,))]),
    depth=st.integers(1, 12),
)
@pytest.mark.slow
def test_the_fusions_first_chunks_asked_alone_are_the_whole_rankings(
    bm25: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    extra: dict[int, float],
    neighbours: dict[int, dict[int, int]],
    turns: dict[int, dict[int, int]],
    shares: tuple[tuple[float, ...], tuple[float, ...]],
    depth: int,
) -> None:
    # Few BM25 scores (ties between chunks), shares summing past 1 (no chunk left out then).
    dense = sorted(dense, key=lambda p: -p[1])
    cosines = {**extra, **dict(dense)}
    before, after = shares
    kw: dict[str, Any] = {
        "weight": DENSE_WEIGHT,
        "floor": DENSE_FLOOR,
        "pivot": DENSE_PIVOT,
        "match": DENSE_MATCH,
        "before": before,
        "after": after,
    }
    whole = _Fused.weighted(bm25, dense, cosines, neighbours, turns, **kw)
    first = _Fused.weighted(bm25, dense, cosines, neighbours, turns, depth=depth, **kw)
    shown = min(depth, len(whole))
    assert [first.at(i) for i in range(shown)] == [whole.at(i) for i in range(shown)]


def test_the_fusion_asked_for_its_first_chunks_scores_only_those_that_can_be_among_them() -> None:
    # 30 earned turns of 30 dialogues, each lending to the two turns beside it (not earned).
    bm25 = [(100 * n, float(30 - n)) for n in range(30)]
    turns = {100 * n: {-1: 100 * n + 1, 1: 100 * n + 2} for n in range(30)}
    kw: dict[str, Any] = {"weight": DENSE_WEIGHT, "floor": DENSE_FLOOR, "pivot": DENSE_PIVOT, "match": DENSE_MATCH}
    whole = _Fused.weighted(bm25, [], {}, {}, turns, before=CONTEXT_BEFORE, after=CONTEXT_AFTER, **kw)
    first = _Fused.weighted(bm25, [], {}, {}, turns, before=CONTEXT_BEFORE, after=CONTEXT_AFTER, depth=5, **kw)
    assert len(whole) == 90
    # The first 5 earned turns, and the turns they lend to: a turn lent a share ranks below its lender.
    assert sorted(first.ids) == sorted([100 * n + k for n in range(5) for k in range(3)])
    assert first.ids[:5] == whole.ids[:5] and first.scores[:5] == whole.scores[:5]


DIALOGUE_LONG = """# 2026-05-11 (Monday 11 May 2026)

## Session 2, 8:15 pm

### Ana
Where did you leave the spare keys for the allotment shed?

### Ben
They hang on the blue hook behind the pantry door. The padlock code is written on the tag.

### Ana
Thanks. I will water the tomatoes tomorrow morning.

### Ben
The courgettes need it more than the tomatoes this week.
"""


@pytest.fixture
async def tier_rig(tmp_path: Path, model: OnnxEmbedder) -> AsyncIterator[Searching]:
    root = tmp_path / "memory"
    # 120 notes (130 chunks, each embedded by the real model: ~0.1 s of CPU a chunk): the dense leg's
    # 100 candidates leave chunks out, and the query of common words fills the BM25 leg's 100.
    make_corpus(root, 120, seed=7)
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    write(root, "daily/2026-05-10.md", DIALOGUE_MD)
    write(root, "daily/2026-05-11.md", DIALOGUE_LONG)
    write(root, "topics/tools.md", TOOLS_MD)
    write(root, "topics/household.md", HOUSEHOLD)
    write(root, "topics/travel.md", TRAVEL)
    rig = Searching(root, model)
    await rig.open()
    yield rig
    await rig.close()


QUERIES = [
    "hiking trip you planned",
    "spare keys allotment shed",
    "which colour for the kitchen",
    "postgres baseline database",
    "tailwind inline styles",
    "qwxzyv flurbinate zazzle",
    "the a to of and",
]


async def ranks(rig: Searching, searcher: HybridSearcher, query: str, limit: int = 10) -> int:
    """Fail unless the searcher's ranking of ``query`` (every chunk, every field) is the reference's;
    return the number of BM25 candidates."""
    hits = await rig.tier.search(query, CANDIDATES)
    qvec = await searcher._query_vector(query)
    weighed, rest, _, _ = searcher._rank(rig.vectors, hits, qvec, limit)
    got = [*weighed, *rest]
    assert got == reference_rank(rig.vectors, hits, qvec, limit), query
    assert any(s.context > 0 for s in got) or not got or query == "qwxzyv flurbinate zazzle"
    return len(hits)


@pytest.mark.slow  # 130 chunks embedded by the real model: ~15 s of CPU
@needs_model
async def test_a_real_tiers_ranking_is_the_reference_before_and_after_the_index_changes(
    tier_rig: Searching,
) -> None:
    rig = tier_rig
    searcher = rig.searcher()
    queries = [*QUERIES, *make_queries(30, seed=11)]
    assert rig.vectors.size > CANDIDATES, "the dense leg leaves chunks out"
    candidates = [await ranks(rig, searcher, query) for query in queries]
    assert max(candidates) == CANDIDATES, "a query fills the BM25 leg"
    before = [(await searcher.search(rig.tier, q, 10, True))[0] for q in queries]
    again = [(await searcher.search(rig.tier, q, 10, True))[0] for q in queries]
    assert again == before, "a warm cache answers as a cold one"

    # A turn inserted between two turns moves every later turn's neighbours; a note goes away.
    dialogue = [
        cid
        for (cid,) in rig.tier.index.writer.execute(
            "SELECT id FROM chunks WHERE path = 'daily/2026-05-11.md' ORDER BY ord"
        )
    ]
    cached = rig.vectors.context(dialogue, REACH)
    write(
        rig.tier.root,
        "daily/2026-05-11.md",
        DIALOGUE_LONG.replace(
            "### Ana\nThanks.", "### Ben\nOr ask the neighbour, she has a copy of the keys.\n\n### Ana\nThanks."
        ),
    )
    (rig.tier.root / "topics/household.md").unlink()
    await rig.tier.reconcile()
    await rig.open()  # the batcher embeds the new turn
    moved = [
        cid
        for (cid,) in rig.tier.index.writer.execute(
            "SELECT id FROM chunks WHERE path = 'daily/2026-05-11.md' ORDER BY ord"
        )
    ]
    fresh = rig.vectors.context(moved, REACH)
    assert fresh == read_context(rig.vectors.path, moved)
    assert fresh != cached
    for query in queries:
        await ranks(rig, searcher, query)


class Counting:
    """The real model, counting the texts it is asked to embed (observation only)."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model = model
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return await self.model.embed(texts)

    async def aclose(self) -> None:
        return None


class AlwaysEmbeds(HybridSearcher):
    """The search that embeds the query whatever the tier holds: the answer to compare with."""

    async def _has_vectors(self, vectors: VectorIndex) -> bool:
        return True


@needs_model
async def test_a_tier_with_no_vector_is_answered_without_the_query_vector_and_the_same(
    tmp_path: Path, model: OnnxEmbedder
) -> None:
    root = tmp_path / "memory"
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-10.md", DIALOGUE_MD)
    write(root, "daily/2026-05-11.md", DIALOGUE_LONG)
    write(root, "topics/tools.md", TOOLS_MD)
    tier = Tier("agent", root)
    await tier.open()
    vectors = VectorIndex(tier.index.path, model.model_id, model.dim)
    try:
        answers: dict[str, list[tuple[list[dict[str, Any]], list[str]]]] = {}
        counted: dict[str, list[str]] = {}
        for name, kind in (("skips", HybridSearcher), ("embeds", AlwaysEmbeds)):
            counting = Counting(model)
            searcher = kind(counting, EmbedderHealth(counting, confirmed=True), {"agent": vectors}, query_timeout=30.0)
            answers[name] = [await searcher.search(tier, q, 10, True) for q in QUERIES]
            counted[name] = counting.texts
        assert vectors.size == 0
        assert answers["skips"] == answers["embeds"]
        assert all(degraded == [] for _, degraded in answers["skips"])
        # A query is embedded only when a turn shown for its neighbour's words has sentences to
        # choose from; the others (the notes' words alone, nothing matched) need no model run.
        embedded = [q for q in QUERIES if q in counted["skips"]]
        assert "spare keys allotment shed" in embedded, counted["skips"]
        assert not {"postgres baseline database", "tailwind inline styles", "qwxzyv flurbinate zazzle"} & set(embedded)
        assert [q for q in QUERIES if q in counted["embeds"]] == QUERIES
        assert [t for t in counted["skips"] if t not in QUERIES] == [t for t in counted["embeds"] if t not in QUERIES]
        keys = answers["skips"][1][0]
        reply = [r for r in keys if r["explain"]["bm25"]["rank"] is None]
        sentences = {
            "They hang on the blue hook behind the pantry door. The padlock code is written on the tag.",
            "The padlock code is written on the tag.",
        }
        assert reply and reply[0]["snippet"] in sentences, "the reply shows its sentence closest to the query"
        assert np.isfinite([r["score"] for a, _ in answers["skips"] for r in a]).all()
    finally:
        vectors.close()
        await tier.close()
