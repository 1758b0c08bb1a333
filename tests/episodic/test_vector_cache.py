"""The journal's per-workspace vector matrices are a bounded cache: a recall may name any
workspace, and each one named used to keep a matrix for good."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sidecar.episodic import SqliteJournalStore
from sidecar.episodic.vector_cache import MAX_SETS, VectorCache
from sidecar.episodic.vector_set import VectorRow, VectorSet


def matrix(rows: int, dim: int = 8) -> VectorSet:
    blob = np.ones(dim, dtype="<f4").tobytes()
    return VectorSet.build([VectorRow(f"e{i}", None, None, "default", None, None, 0.5, blob, dim) for i in range(rows)])


async def test_recalls_naming_many_workspaces_keep_a_bounded_number_of_matrices(tmp_path: Path) -> None:
    store = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    try:
        for n in range(MAX_SETS * 4):
            await store.vectors(f"workspace-{n}", "some-model")
        assert len(store._cache) == MAX_SETS  # a test of the store's private cache: nothing else shows it
        # The most recent ones are kept: asking again for the last is served from the cache.
        kept = await store.vectors(f"workspace-{MAX_SETS * 4 - 1}", "some-model")
        assert kept is await store.vectors(f"workspace-{MAX_SETS * 4 - 1}", "some-model")
    finally:
        await store.aclose()


def test_the_least_recently_used_matrix_goes_first_and_the_bytes_are_bounded() -> None:
    cache = VectorCache(max_sets=3, max_bytes=10**9)
    for name in ("a", "b", "c"):
        cache.put("m", name, 1, matrix(4))
    assert cache.get("m", "a", 1) is not None  # "a" used again: "b" is now the oldest
    cache.put("m", "d", 1, matrix(4))
    assert [cache.get("m", n, 1) is not None for n in "abcd"] == [True, False, True, True]

    one = matrix(1000)
    small = VectorCache(max_sets=100, max_bytes=one.nbytes * 2)
    for name in "wxyz":
        small.put("m", name, 1, matrix(1000))
    assert len(small) == 2 and small.nbytes <= one.nbytes * 2
    big = VectorCache(max_sets=100, max_bytes=1)
    big.put("m", "huge", 1, one)  # the set just loaded stays even alone over the budget: its recall uses it
    assert big.get("m", "huge", 1) is one
