"""Recall against the real in-process model: isolation, ordering, hybrid, relations, walks, indexing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from sidecar.episodic import (
    Indexer,
    JournalEntry,
    Query,
    Scope,
    SqliteJournalStore,
    hybrid_recall,
    index_new,
    link_supports,
    recall,
)
from sidecar.episodic.indexer import embed_text, run_index
from sidecar.episodic.query import ScopeFilter
from sidecar.errors import BadRequest, NotFound
from sidecar.retrieval.embed import EmbedderError, OnnxEmbedder, Vectors
from sidecar.retrieval.embed.onnx import MODEL_ID
from tests.support.embedding import needs_model
from tests.support.waiting import async_wait_until

pytestmark = needs_model

NOW = datetime(2025, 6, 1, tzinfo=UTC)
OOM = "Checkout service OOM killed in production"


@pytest.fixture(scope="module")
def embedder(onnx_model: OnnxEmbedder) -> OnnxEmbedder:
    """The worker's model (``onnx_model``): these tests only embed with it."""
    return onnx_model


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteJournalStore]:
    opened = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    yield opened
    await opened.aclose()


class BrokenEmbedder:
    """Deliberately fails every call: an embedder outage we cannot cause for real in a unit test."""

    model_id = MODEL_ID  # the real model's id, so its unindexed entries are the ones it would see
    dim = 384

    async def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbedderError("embedder is down (deliberate test fault)")

    async def aclose(self) -> None:
        return None


async def add(store: SqliteJournalStore, summary: str, **kw: object) -> str:
    values: dict[str, object] = {"workspace_id": "w1", "agent_id": "a1", "entry_type": "peer.escalation"}
    values.update(kw)
    return (await store.append(JournalEntry(summary=summary, **values))).id  # type: ignore[arg-type]


async def cosines(embedder: OnnxEmbedder, text: str, others: Sequence[str]) -> list[float]:
    vectors = await embedder.embed([text, *others])
    return [float(v) for v in vectors[1:] @ vectors[0]]


# -- isolation ----------------------------------------------------------------------------------
async def test_no_cross_workspace_hit_whatever_the_scope(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    owners: dict[str, tuple[str, str, str | None]] = {}
    for ws in ("w1", "w2"):
        for agent in ("a1", "a2"):
            for crew in ("c1", None):
                entry_id = await add(store, OOM, workspace_id=ws, agent_id=agent, crew_id=crew)
                owners[entry_id] = (ws, agent, crew)
    assert await index_new(store, embedder) == 8
    queries = [
        Query("w1", OOM, Scope.OWN, agent_id="a1", k=50),
        Query("w1", OOM, Scope.CREW_SHARED, crew_id="c1", k=50),
        Query("w1", OOM, Scope.CREW_SHARED, crew_id="c1", agent_id="a2", k=50, walk_depth=1),
    ]
    expected = [
        {(a, c) for _, a, c in [("w1", "a1", "c1"), ("w1", "a1", None)]},
        {("a1", "c1"), ("a2", "c1")},
        {("a1", "c1"), ("a2", "c1"), ("a2", None)},
    ]
    for query, want in zip(queries, expected, strict=True):
        for run in (recall, hybrid_recall):
            hits = await run(store, embedder, query, now=NOW)
            assert {owners[h.entry_id][0] for h in hits} == {"w1"}
            assert {owners[h.entry_id][1:] for h in hits} == want, (run.__name__, query)
    # A whole-workspace filter (what indexing uses) still sees only its own workspace.
    ranked = await store.dense_rank(
        ScopeFilter("w2"), embedder.model_id, (await embedder.embed([OOM]))[0], 50, weighted=False
    )
    assert {owners[s.entry_id][0] for s in ranked} == {"w2"} and len(ranked) == 4


def test_scope_requirements_are_clear_bad_requests() -> None:
    with pytest.raises(BadRequest, match="scope own needs agent_id"):
        Query("w1", "x", Scope.OWN)
    with pytest.raises(BadRequest, match="scope crew_shared needs crew_id"):
        Query("w1", "x", Scope.CREW_SHARED, agent_id="a1")
    with pytest.raises(BadRequest, match="workspace_id is required"):
        Query("", "x", Scope.OWN, agent_id="a1")
    for k in (0, 51, True):
        with pytest.raises(BadRequest, match="k must be"):
            Query("w1", "x", Scope.OWN, agent_id="a1", k=k)
    assert Query("w1", "x", agent_id="a1").k == 5


# -- ordering -----------------------------------------------------------------------------------
async def test_recall_sorts_by_cosine_times_importance(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    near = await add(store, OOM)
    far = await add(store, "The checkout pod ran out of memory in prod")
    other = await add(store, "Quarterly planning meeting notes")
    await index_new(store, embedder, now=NOW)
    query = Query("w1", OOM, agent_id="a1", k=3)
    # The planning notes share nothing with the query (cosine near 0.1): they do not fill k.
    assert [h.entry_id for h in await recall(store, embedder, query, now=NOW)] == [near, far]

    await store.set_importance([(near, 0.3), (far, 0.9), (other, 0.9)])  # demote the closest match
    hits = await recall(store, embedder, query, now=NOW)
    assert [h.entry_id for h in hits] == [far, near] and other not in {h.entry_id for h in hits}
    keys = [h.cosine * h.importance for h in hits]  # type: ignore[operator]
    assert keys == sorted(keys, reverse=True)
    assert hits[1].cosine is not None and hits[0].cosine is not None and hits[1].cosine > hits[0].cosine
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].score == pytest.approx(hits[0].cosine)


async def test_returned_hits_are_marked_referenced(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    hit = await add(store, OOM)
    miss = await add(store, "Quarterly planning meeting notes")
    await index_new(store, embedder, now=NOW)
    for day in range(3):
        await recall(store, embedder, Query("w1", OOM, agent_id="a1", k=1), now=NOW + timedelta(days=day))
    rows = {r.entry_id: r.reference_count for r in await store.importance_rows()}
    assert rows == {hit: 3, miss: 0}


# -- hybrid and degraded modes ------------------------------------------------------------------
async def test_hybrid_fuses_cosine_and_bm25_by_rrf(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    lexical = await add(store, "OOM in checkout", entry_type="approval.denied")
    semantic = await add(store, "out-of-memory kill of the cart service")  # no word shared
    unrelated = await add(store, "pod exhausted its memory limit and was killed")  # cosine near 0: not a hit
    noise = await add(store, "exec log OOM checkout", entry_type="exec.output_chunk")  # never a recall candidate
    await index_new(store, embedder, now=NOW)
    hits = await hybrid_recall(store, embedder, Query("w1", "OOM in checkout", agent_id="a1"), now=NOW)
    assert [h.entry_id for h in hits] == [lexical, semantic]
    assert hits[0].via == "hybrid" and hits[0].score == pytest.approx(2 / 61)
    assert hits[1].via == "dense" and hits[1].score == pytest.approx(1 / 62)
    assert noise not in {h.entry_id for h in hits} and unrelated not in {h.entry_id for h in hits}


async def test_without_embedder_recall_is_empty_and_hybrid_serves_bm25(store: SqliteJournalStore) -> None:
    entry_id = await add(store, "OOM in checkout")
    query = Query("w1", "checkout OOM", agent_id="a1")
    assert await recall(store, None, query, now=NOW) == []
    hits = await hybrid_recall(store, None, query, now=NOW)
    assert [(h.entry_id, h.via, h.cosine) for h in hits] == [(entry_id, "bm25", None)]
    broken = BrokenEmbedder()
    assert await recall(store, broken, query, now=NOW) == []
    assert [h.via for h in await hybrid_recall(store, broken, query, now=NOW)] == ["bm25"]


# -- indexing -------------------------------------------------------------------------------------
async def test_index_new_embeds_only_what_passes_and_retries_after_errors(
    store: SqliteJournalStore, embedder: OnnxEmbedder
) -> None:
    wanted = {
        await add(store, "escalated"),
        await add(store, "keeper denied deploy", entry_type="keeper.decision", severity="error"),
        await add(store, "operator tagged", entry_type="exec.output_chunk", refs={"episodic": True}),
    }
    await add(store, "keeper allowed", entry_type="keeper.decision", severity="info")
    await add(store, "hi there", entry_type="peer.conversation")
    run = await run_index(store, BrokenEmbedder())
    assert run.indexed == 0 and isinstance(run.error, EmbedderError)
    assert {e.id for e in await store.unindexed(embedder.model_id, 10)} == wanted  # left for the next run
    assert await index_new(store, embedder, batch_size=2) == 3
    assert await store.unindexed(embedder.model_id, 10) == []
    assert {r.entry_id for r in await store.importance_rows()} == wanted


def test_embed_text_is_summary_then_payload_text() -> None:
    from sidecar.episodic.entry import StoredEntry

    stored = StoredEntry(
        1,
        "e",
        "w",
        None,
        "a",
        NOW,
        "peer.escalation",
        "info",
        "Disk full",
        {"host": "b1", "n": 3, "tags": ["x"]},
        {},
        None,
        True,
    )
    assert embed_text(stored) == "Disk full\nb1 x"


async def test_background_indexer_embeds_shortly_after_append(
    store: SqliteJournalStore, embedder: OnnxEmbedder
) -> None:
    indexer = Indexer(store, embedder, debounce=0.01, sweep=3600)
    await indexer.start()
    try:
        await async_wait_until(lambda: indexer.ticks, timeout=60)  # the start-up catch-up run finds nothing
        for n in range(3):
            await add(store, f"escalation number {n}")
            indexer.notify()
        await async_wait_until(lambda: indexer.indexed_total == 3, timeout=60)  # on the notify, not the hourly sweep
    finally:
        await indexer.stop()
    assert indexer.indexed_total == 3 and indexer.last_error is None
    assert await store.unindexed(embedder.model_id, 10) == []


# -- relations ----------------------------------------------------------------------------------
SIMILAR = [
    OOM,
    "checkout service was OOM killed in production",
    "checkout service OOM-killed in production again",
    "Checkout service OOM killed in production!",
    "The checkout pod ran out of memory in prod",
    "Quarterly planning meeting notes",
]


async def test_similar_edges_top3_above_threshold_new_to_old(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    old = [await add(store, text) for text in SIMILAR]
    await add(store, OOM, workspace_id="w2")  # identical text elsewhere: never linked
    await index_new(store, embedder)
    newest = await add(store, "checkout service OOM killed in production today")
    await index_new(store, embedder)

    cos = await cosines(embedder, "checkout service OOM killed in production today", SIMILAR)
    above = sorted(((c, i) for i, c in zip(old, cos, strict=True) if c > 0.80), reverse=True)
    assert len(above) == 4  # so the top-3 cut matters
    edges = [r for r in await store.relations_of("w1", [newest], "similar") if r.src_entry_id == newest]
    assert sorted((r.dst_entry_id, round(r.weight, 4)) for r in edges) == sorted((i, round(c, 4)) for c, i in above[:3])
    # Edges made in the first batch also point new -> old, each at most three, each above 0.80.
    seq = {i: n for n, i in enumerate(old)}
    first = [r for r in await store.relations_of("w1", old, "similar") if r.src_entry_id in seq]
    assert first and all(seq[r.src_entry_id] > seq[r.dst_entry_id] and r.weight > 0.80 for r in first)
    assert max(sum(r.src_entry_id == s for r in first) for s in old) <= 3


async def test_supports_edges_and_their_workspace_check(store: SqliteJournalStore) -> None:
    rule = await add(store, "Rule: never deploy on Fridays", entry_type="memory.consolidated")
    evidence = [await add(store, "Friday deploy broke checkout"), await add(store, "Friday deploy broke search")]
    foreign = await add(store, "Friday deploy elsewhere", workspace_id="w2")
    assert await link_supports(store, rule, evidence, workspace_id="w1", now=NOW) == 2
    edges = await store.relations_of("w1", [rule], "supports")
    assert sorted((r.src_entry_id, r.dst_entry_id, r.weight) for r in edges) == sorted((rule, e, 1.0) for e in evidence)
    with pytest.raises(NotFound):
        await link_supports(store, rule, [foreign], workspace_id="w1")


async def test_walk_depth_one_adds_similar_neighbours_in_scope(
    store: SqliteJournalStore, embedder: OnnxEmbedder
) -> None:
    anchor = await add(store, "Deploy to production denied by keeper")
    twin = await add(store, "Keeper denied the deploy to production")
    foreign_twin = await add(store, "Keeper denied a deploy to production", agent_id="a2")
    await index_new(store, embedder, now=NOW)
    edges = await store.relations_of("w1", [anchor], "similar")
    assert {twin, foreign_twin} <= {r.src_entry_id for r in edges}

    flat = await recall(
        store, embedder, Query("w1", "Deploy to production denied by keeper", agent_id="a1", k=1), now=NOW
    )
    assert [h.entry_id for h in flat] == [anchor]
    walked = await recall(
        store, embedder, Query("w1", "Deploy to production denied by keeper", agent_id="a1", k=1, walk_depth=1), now=NOW
    )
    assert [(h.entry_id, h.via) for h in walked] == [(anchor, "dense"), (twin, "similar")]  # a2's twin is out of scope
    weight = next(r.weight for r in edges if r.src_entry_id == twin)
    assert walked[1].score == pytest.approx(walked[0].score * weight)


async def test_cache_serves_new_rows_after_each_index(store: SqliteJournalStore, embedder: OnnxEmbedder) -> None:
    query = Query("w1", OOM, agent_id="a1", k=10)
    first = await add(store, OOM)
    await index_new(store, embedder)
    assert [h.entry_id for h in await recall(store, embedder, query)] == [first]
    second = await add(store, "checkout service was OOM killed in production")
    await index_new(store, embedder)
    assert {h.entry_id for h in await recall(store, embedder, query)} == {first, second}
    assert await store.delete("w1", first)
    assert [h.entry_id for h in await recall(store, embedder, query)] == [second]
    assert np.isclose(len(await store.importance_rows()), 1)
