"""A large matrix's ranking with a cosine floor reads the rows' sign codes first and scores only the
rows they put near the query: the answer over the floor is the exact search's, far fewer rows are
scored, and a recall reads only the entries that can earn a place or be named as near."""

from __future__ import annotations

import math
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from sidecar.clock import utcnow
from sidecar.episodic import SqliteJournalStore, index_new
from sidecar.episodic import vector_set as vs
from sidecar.episodic.entry import JournalEntry, StoredEntry
from sidecar.episodic.memories import NEAR_MISS, Identity, RecallRequest, recall_memories
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.vector_set import FIRST_PASS_ROWS, MISS_AT_FLOOR, VectorRow, VectorSet, sign_cut
from sidecar.index.query import terms
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.hybrid import DENSE_MATCH
from tests.support.embedding import needs_model

DIM = 384  # the shipped model's width: the sign codes' cut is set for its 768 hyperplanes
Floats = npt.NDArray[np.float32]


def unit(rows: Floats) -> Floats:
    normed: Floats = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return normed


def at_cosine(rng: np.random.Generator, query: Floats, cosines: Sequence[float]) -> Floats:
    """Unit rows at exactly these cosines to the unit ``query``, in random directions around it."""
    noise = rng.standard_normal((len(cosines), len(query))).astype(np.float32)
    noise = unit(noise - np.outer(noise @ query, query))  # orthogonal to the query
    c = np.asarray(cosines, dtype=np.float32)[:, None]
    rows: Floats = (c * query + np.sqrt(1 - c**2) * noise).astype(np.float32)
    return unit(rows)


def vector_set(matrix: Floats, types: Sequence[str] | None = None) -> VectorSet:
    return VectorSet.build(
        [
            VectorRow(f"e{i}", "a", None, "ns", None if types is None else types[i], None, 1.0, row.tobytes(), DIM)
            for i, row in enumerate(matrix.astype("<f4"))
        ]
    )


@pytest.fixture(scope="module")
def planted() -> tuple[VectorSet, Floats, Floats]:
    """FIRST_PASS_ROWS random rows, then for each of 8 queries 60 rows over the floor (0.40-0.95)
    and 60 just under it (0.20-0.399)."""
    rng = np.random.default_rng(29)
    queries = unit(rng.standard_normal((8, DIM)).astype(np.float32))
    parts = [unit(rng.standard_normal((FIRST_PASS_ROWS, DIM)).astype(np.float32))]
    for query in queries:
        parts.append(at_cosine(rng, query, np.linspace(0.40, 0.95, 60).tolist()))
        parts.append(at_cosine(rng, query, np.linspace(0.20, 0.399, 60).tolist()))
    matrix = np.concatenate(parts)
    return vector_set(matrix), matrix, queries


def test_over_the_floor_the_answer_is_the_exact_searchs(planted: tuple[VectorSet, Floats, Floats]) -> None:
    vectors, matrix, queries = planted
    where = ScopeFilter("w", agent_id="a")
    for query in queries:
        exact = vectors.rank(where, query, 50, weighted=False, exclude=())
        fast = vectors.rank(where, query, 50, weighted=False, exclude=(), floor=DENSE_MATCH)
        over = [s for s in exact if s.cosine > DENSE_MATCH]
        assert len(over) == 50  # the pool is full of rows over the floor: its cut is part of the answer
        assert [s.entry_id for s in fast if s.cosine > DENSE_MATCH] == [s.entry_id for s in over]
        for got, want in zip(fast, over, strict=False):
            assert got.cosine == pytest.approx(want.cosine, abs=1e-6)
            assert got.cosine == pytest.approx(float(matrix[int(got.entry_id[1:])] @ query), abs=1e-5)


def test_the_first_pass_scores_only_rows_near_the_query(planted: tuple[VectorSet, Floats, Floats]) -> None:
    vectors, _, queries = planted
    where = ScopeFilter("w", agent_id="a")
    for query in queries:
        everything = vectors.rank(where, query, vectors.size, weighted=False, exclude=())
        scored = vectors.rank(where, query, vectors.size, weighted=False, exclude=(), floor=DENSE_MATCH)
        assert len(everything) == vectors.size
        # Every one of the 60 rows planted over the floor, and a few percent of the rest.
        assert sum(s.cosine >= 0.4 - 1e-6 for s in scored) >= 60
        assert len(scored) < vectors.size // 20, len(scored)


def test_a_ranking_by_importance_or_without_a_floor_stays_exact(planted: tuple[VectorSet, Floats, Floats]) -> None:
    vectors, matrix, queries = planted
    where = ScopeFilter("w", agent_id="a")
    expected = np.argsort(-(matrix @ queries[0]), kind="stable")[:20]
    weighted = vectors.rank(where, queries[0], 20, weighted=True, exclude=(), floor=DENSE_MATCH)
    assert [s.entry_id for s in weighted] == [f"e{i}" for i in expected]  # every importance is 1.0 here


def test_the_cut_is_the_binomial_tail_and_the_codes_follow_it() -> None:
    bits = 2 * DIM
    for floor in (0.4, 0.8):
        p = math.acos(floor) / math.pi
        cut = sign_cut(floor, bits)

        def over(t: int, p: float = p) -> float:
            return sum(math.comb(bits, k) * p**k * (1 - p) ** (bits - k) for k in range(t + 1, bits + 1))

        assert over(cut) <= MISS_AT_FLOOR < over(cut - 1)
    assert sign_cut(-1.0, bits) == bits and sign_cut(1.0, bits) == 0

    # 100 queries with 200 rows each at exactly 0.4: over the queries (the planes are fixed, a query's
    # angles to them vary) the disagreements average bits x angle / pi, and as many rows exceed the
    # cut as the tail says (0.2 expected among 20,000).
    rng = np.random.default_rng(3)
    queries = unit(rng.standard_normal((100, DIM)).astype(np.float32))
    vectors = vector_set(np.concatenate([at_cosine(rng, q, [0.4] * 200) for q in queries]))
    counts = np.concatenate(
        [vectors._disagreements(q)[n * 200 : (n + 1) * 200] for n, q in enumerate(queries)]  # private: the codes
    ).astype(np.float64)
    p = math.acos(0.4) / math.pi
    assert counts.mean() == pytest.approx(bits * p, rel=0.005)
    assert int((counts > sign_cut(0.4, bits)).sum()) <= 2


def test_a_narrow_scope_scores_only_its_rows_and_the_same_way() -> None:
    rng = np.random.default_rng(5)
    matrix = unit(rng.standard_normal((3000, DIM)).astype(np.float32))
    types = ["decision" if i % 50 == 0 else "fact" for i in range(len(matrix))]
    vectors = vector_set(matrix, types)
    query = unit(rng.standard_normal(DIM).astype(np.float32))
    where = ScopeFilter("w", agent_id="a", memory_types=("decision",))
    ranked = vectors.rank(where, query, 10, weighted=True, exclude=())
    scoped = np.arange(0, len(matrix), 50)
    expected = scoped[np.argsort(-(matrix[scoped] @ query), kind="stable")][:10]
    assert [s.entry_id for s in ranked] == [f"e{i}" for i in expected]
    assert [s.cosine for s in ranked] == pytest.approx((matrix[expected] @ query).tolist(), abs=1e-6)


class CountingFetch:
    """The real store, with the ids each fetch asked for written down."""

    def __init__(self, store: SqliteJournalStore) -> None:
        self.store = store
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def fetch(self, workspace_id: str, ids: Sequence[str]) -> dict[str, StoredEntry]:
        self.asked += ids
        return await self.store.fetch(workspace_id, ids)


LINES = [
    "The user prefers dark mode in every editor",
    "Invoices are generated on the first of the month",
    "The checkout service was OOM killed during the sale",
    "Deploys to production need two approvals",
    "The staging database is refreshed every Sunday night",
    "Alice owns the billing pipeline",
    "Search latency regressed after the index rebuild",
    "The cache TTL for product pages is five minutes",
    "Rollbacks are done with the deploy tool, never by hand",
    "The team standup is at 9:30 in the morning",
    "Payments retries back off exponentially up to one hour",
    "Bob prefers tabs over spaces",
    "The export job writes CSV files to the shared bucket",
    "Auth tokens expire after twelve hours",
    "The queue consumer was scaled to eight workers",
    "Quarterly planning starts the second week of January",
]
QUERIES = ["what theme does the user like", "who is responsible for billing", "how do we undo a bad deploy", "zebra"]


@needs_model
async def test_a_recall_with_the_first_pass_answers_as_the_exact_one_and_reads_fewer_entries(
    tmp_path: Path, onnx_model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    for n, line in enumerate(LINES * 4):  # 64 memories, each line four times over
        entry = JournalEntry(
            workspace_id="w", agent_id="a", entry_type="memory.fact", summary=f"{line} ({n})", memory_type="fact"
        )
        await built.append(entry)
    await index_new(built, onnx_model)
    await built.aclose()
    shutil.copy(tmp_path / "journal.sqlite", tmp_path / "copy.sqlite")  # each way marks its own hits referenced
    who = Identity("w", "a", None, "default")
    where = ScopeFilter("w", agent_id="a", namespace="default", private=True)
    now = utcnow()
    answers: dict[int, list[list[tuple[str, float]]]] = {}
    skipped: set[str] = set()
    for first_rows, path in ((10**9, "journal.sqlite"), (0, "copy.sqlite")):  # the first pass off, then always on
        monkeypatch.setattr(vs, "FIRST_PASS_ROWS", first_rows)
        store = await SqliteJournalStore.open(tmp_path / path)
        try:
            answers[first_rows] = []
            for text in QUERIES:
                spy = CountingFetch(store)
                req = RecallRequest.from_json({"query": text}, who, default_scope="own", default_scoring="importance")
                hits, dense = await recall_memories(spy, onnx_model, req, crew_id=None, now=now)  # type: ignore[arg-type]
                assert dense == "ok"
                answers[first_rows].append([(h.entry.id, h.parts.score) for h in hits])
                vector = (await onnx_model.embed([text]))[0]
                pool = await store.dense_rank(where, onnx_model.model_id, vector, 50, weighted=False)
                sparse = set(await store.bm25_rank(where, " ".join(terms(text)), 50))
                under = {s.entry_id for s in pool if s.cosine < NEAR_MISS} - sparse
                assert not under & set(spy.asked)
                skipped |= under
        finally:
            await store.aclose()
    assert skipped  # the pools held rows under NEAR_MISS that no fetch asked for
    for fast, exact in zip(answers[0], answers[10**9], strict=True):
        assert [i for i, _ in fast] == [i for i, _ in exact]
        assert [score for _, score in fast] == pytest.approx([score for _, score in exact], abs=1e-6)  # float sums
    assert sum(map(len, answers[0])) >= 3  # not a comparison of empty answers
