"""The dense leg's int8 first pass: every row's bound holds, the rows it leaves hold the exact top k
(rows planted around the k-th place, rows not in the copy), and a real tier's dense search answers
as the float32 product does, through new chunks, an edited chunk and a rebuilt index."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from sidecar.index.tier_index import TierIndex
from sidecar.retrieval import int8 as int8_module
from sidecar.retrieval import vectors as vectors_module
from sidecar.retrieval.int8 import MARGIN, Int8Pass
from sidecar.retrieval.vectors import VectorIndex
from tests.support.corpus import make_corpus
from tests.support.embedding import needs_model
from tests.support.memory import write

pytestmark = needs_model  # the int8 product is onnxruntime's

DIM = 384
Floats = npt.NDArray[np.float32]


@pytest.fixture(autouse=True)
def _onnxruntime_loaded() -> None:
    """The pass runs where the process has loaded onnxruntime (the in-process embedder did)."""
    import onnxruntime  # noqa: F401


def unit(rows: Floats) -> Floats:
    normed: Floats = (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)
    return normed


def around(rng: np.random.Generator, query: Floats, cosines: npt.NDArray[np.float64]) -> Floats:
    """Unit rows at these cosines to the unit ``query``."""
    noise = rng.standard_normal((len(cosines), len(query))).astype(np.float32)
    noise = unit(noise - np.outer(noise @ query, query))
    c = cosines.astype(np.float32)[:, None]
    return unit(c * query + np.sqrt(1 - c**2) * noise)


def exact_top(matrix: Floats, query: Floats, k: int) -> set[int]:
    cosines = matrix @ query
    return set(np.argpartition(cosines, len(cosines) - k)[len(cosines) - k :].tolist())


def test_every_rows_bound_holds_and_the_rows_left_hold_the_exact_top_k() -> None:
    rng = np.random.default_rng(41)
    queries = unit(rng.standard_normal((6, DIM)).astype(np.float32))
    parts = [unit(rng.standard_normal((6000, DIM)).astype(np.float32))]
    for query in queries:  # 100 rows a query crowded around where its 100th best falls, 1e-4 apart
        parts.append(around(rng, query, 0.5 + 1e-4 * np.arange(-50, 50)))
    matrix = np.concatenate(parts)
    copy = Int8Pass.build(matrix[:6000])
    assert copy is not None and copy.rows == 6000
    held = np.arange(6000)
    missing = np.arange(6000, len(matrix))
    for query in queries:
        approx, err = copy.bounds(query)
        exact = (matrix[:6000] @ query).astype(np.float64)
        assert np.all(np.abs(approx - exact) <= err)
        assert np.all(err > MARGIN)
        # the planted rows are not in the copy: scored exactly
        rows = copy.candidates(matrix, query, 100, held=held, at=held, missing=missing)
        assert exact_top(matrix, query, 100) <= set(rows.tolist())
        assert len(rows) < len(matrix) // 10  # a first pass, not the whole matrix again


def test_a_copy_whose_kernel_is_not_exact_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # Eight-bit rows (-127 to 127): on a CPU whose uint8 x int8 kernel sums pairs of products in
    # saturating 16-bit lanes (AVX2 without VNNI) the product is wrong, and the copy must say so
    # rather than serve; where the kernel is exact, every row's bound holds. Either way no copy
    # serves a bound that does not hold.
    monkeypatch.setattr(int8_module, "_PEAK", 127)
    rng = np.random.default_rng(41)
    matrix = unit(rng.standard_normal((6000, DIM)).astype(np.float32))
    queries = unit(rng.standard_normal((6, DIM)).astype(np.float32))
    try:
        copy = Int8Pass.build(matrix)
    except ArithmeticError:
        return
    assert copy is not None
    for query in queries:
        approx, err = copy.bounds(query)
        assert np.all(np.abs(approx - (matrix @ query).astype(np.float64)) <= err)


def fake_vector(text: str) -> Floats:
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    normed: Floats = v / np.linalg.norm(v)
    return normed


def embed_all(index: TierIndex, vi: VectorIndex) -> int:
    vi.refresh()
    pending = vi.missing(100_000)
    VectorIndex.store(index.writer, "m1", DIM, [(p.hash, fake_vector(p.text)) for p in pending])
    vi.refresh()
    return len(pending)


@pytest.fixture
def tier(tmp_path: Path) -> Iterator[tuple[TierIndex, VectorIndex]]:
    root = tmp_path / "memory"
    make_corpus(root, 1500, seed=3)
    index = TierIndex(root)
    index.open()
    vi = VectorIndex(index.path, "m1", DIM)
    yield index, vi
    vi.close()
    index.close()


def answers(
    vi: VectorIndex, queries: list[Floats], monkeypatch: pytest.MonkeyPatch, first: bool
) -> list[list[tuple[int, float]]]:
    monkeypatch.setattr(vectors_module, "INT8_FROM", 256 if first else 10**9)
    return [vi.search(q, 50) for q in queries]


def same(got: list[list[tuple[int, float]]], exact: list[list[tuple[int, float]]]) -> bool:
    """The same top 50 for each query, each at its exact cosine, in the same order but for rows
    whose float32 cosines differ by rounding alone (a product over some rows and one over all
    round a sum apart: 1 in 10^7)."""
    for ours, theirs in zip(got, exact, strict=True):
        cosine = dict(theirs)
        assert cosine.keys() == dict(ours).keys()
        for (cid, c), (_, expected) in zip(ours, theirs, strict=True):
            assert c == pytest.approx(cosine[cid], abs=1e-6)
            assert c == pytest.approx(expected, abs=1e-6)  # another row here only on a tie
    return True


def test_a_tiers_dense_search_answers_as_the_float_product(
    tier: tuple[TierIndex, VectorIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    index, vi = tier
    embed_all(index, vi)
    rows = {cid: vi.matrix[at] for cid, at in vi._snap.row_of.items()}
    rng = np.random.default_rng(5)
    # Queries near a row: its neighbours' cosines crowd the top 50, where a loose pass would err.
    queries = [unit(rows[cid] + 0.4 * unit(rng.standard_normal(DIM).astype(np.float32))) for cid in list(rows)[:40]]
    assert same(answers(vi, queries, monkeypatch, first=True), answers(vi, queries, monkeypatch, first=False))
    held = vi._int8
    assert held is not None and held.copy.rows == vi.size  # made, and serving
    assert len(held.rows(vi._snap).missing) == 0
    assert held.rows(vi._snap).held is None  # the copy's own rows in its order: read in place

    # A new note's chunks: the copy still serves, their rows scored exactly beside it.
    write(index.root, "topics/appended.md", "# Appended\n\n" + "\n\n".join(f"Fresh line {i}." for i in range(8)))
    index.reconcile()
    embed_all(index, vi)
    fresh = [cid for cid in vi._snap.hashes if cid not in rows and cid in vi._snap.row_of]
    assert fresh
    asked = [unit(vi.matrix[vi._snap.row_of[cid]]) for cid in fresh]
    got = answers(vi, [*queries, *asked], monkeypatch, first=True)
    assert vi._int8 is held, "the copy still serves"
    assert len(held.rows(vi._snap).missing) == len(fresh)
    assert held.rows(vi._snap).held is not None
    assert same(got, answers(vi, [*queries, *asked], monkeypatch, first=False))
    assert [a[0][0] for a in got[len(queries) :]] == fresh  # each new row is its own query's best

    # An edited chunk has a new vector under a new serial: the copy's row for it is not read.
    text = (index.root / "topics/appended.md").read_text()
    write(index.root, "topics/appended.md", text.replace("Fresh line 3.", "Edited line three."))
    index.reconcile()
    embed_all(index, vi)
    edited = unit(vi.matrix[-1])  # the edited chunk's new vector was laid in last
    assert same(
        answers(vi, [edited, *queries], monkeypatch, first=True),
        answers(vi, [edited, *queries], monkeypatch, first=False),
    )

    # Every chunk a new id: the serials of unchanged vectors stay, so the copy serves on.
    index.rebuild()
    vi.refresh()
    assert vi._snap.serials.size == vi.size
    assert same(answers(vi, queries, monkeypatch, first=True), answers(vi, queries, monkeypatch, first=False))
    assert vi._int8 is held


def test_without_onnxruntime_loaded_the_search_is_the_float_product(
    tier: tuple[TierIndex, VectorIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Taking the module out of sys.modules stands in for a process that never loaded it (a remote
    # embedder): the same process cannot unload it for real.
    index, vi = tier
    monkeypatch.delitem(sys.modules, "onnxruntime")
    embed_all(index, vi)
    query = unit(np.ones(DIM, dtype=np.float32))
    assert answers(vi, [query] * 3, monkeypatch, first=True) == answers(vi, [query], monkeypatch, first=False) * 3
    assert vi._int8 is None


def test_a_copy_that_cannot_be_made_leaves_the_float_product_for_good(
    tier: tuple[TierIndex, VectorIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stand-in for an onnxruntime that refuses the model (the installed one runs it): the fault
    # cannot be caused for real here.
    index, vi = tier
    tried: list[int] = []

    def refuses(matrix: Floats) -> Int8Pass:
        tried.append(len(matrix))
        raise RuntimeError("no int8 kernel")

    monkeypatch.setattr(Int8Pass, "build", staticmethod(refuses))
    embed_all(index, vi)
    queries = [unit(np.full(DIM, 1.0 + i, dtype=np.float32) + np.arange(DIM, dtype=np.float32)) for i in range(4)]
    got = answers(vi, queries, monkeypatch, first=True)
    assert got == answers(vi, queries, monkeypatch, first=False)
    assert tried == [vi.size]  # tried once, not on every search
