"""Rank fusion: exact RRF numbers, tie-breaks, weighted normalisation edge cases, explain fields."""

from __future__ import annotations

import math

import pytest

from sidecar.retrieval import fusion
from sidecar.retrieval.fusion import FusedHit, LegHit, explain, fuse, rrf, weighted


def test_public_names_are_pinned() -> None:
    assert sorted(fusion.__all__) == ["DEFAULT_K", "FusedHit", "LegHit", "explain", "fuse", "rrf", "weighted"]
    assert fusion.DEFAULT_K == 60


def test_rrf_exact_scores_on_a_tiny_example() -> None:
    got = rrf([["a", "b", "c"], ["b", "d"]])
    assert [key for key, _ in got] == ["b", "a", "d", "c"]
    expected = {"a": 1 / 61, "b": 1 / 61 + 1 / 62, "c": 1 / 63, "d": 1 / 62}
    for key, score in got:
        assert score == pytest.approx(expected[key], abs=1e-15)


def test_rrf_k_is_honoured() -> None:
    assert rrf([["a", "b"]], k=0) == [("a", 1.0), ("b", 0.5)]
    assert rrf([["a"]], k=1) == [("a", 0.5)]


def test_rrf_ties_keep_first_appearance() -> None:
    assert [k for k, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [k for k, _ in rrf([["y", "x"], ["x", "y"]])] == ["y", "x"]
    assert [k for k, _ in rrf([["p"], ["q"]])] == ["p", "q"]
    assert [k for k, _ in rrf([["q"], ["p"]])] == ["q", "p"]


def test_rrf_duplicate_within_a_ranking_counts_once_at_best_rank() -> None:
    got = dict(rrf([["a", "a", "b"]]))
    assert got == {"a": pytest.approx(1 / 61), "b": pytest.approx(1 / 63)}


def test_rrf_edge_inputs() -> None:
    assert rrf([]) == []
    assert rrf([[], []]) == []
    with pytest.raises(ValueError, match="k must be"):
        rrf([["a"]], k=-1)


def test_rrf_is_generic_over_hashable_keys() -> None:
    got = rrf([[(1, "f.md"), (2, "g.md")], [(2, "g.md")]])
    assert got[0][0] == (2, "g.md")


def test_weighted_overlapping_legs() -> None:
    got = weighted([{"a": 1.0, "b": 0.5, "c": 0.0}, {"b": 4.0, "c": 2.0}], [1.0, 1.0])
    assert got == [("b", 1.5), ("a", 1.0), ("c", 0.0)]


def test_weighted_single_item_leg_normalises_to_one() -> None:
    [(key, score)] = weighted([{"a": 3.7}], [0.4])
    assert key == "a"
    assert score == pytest.approx(0.4)


def test_weighted_all_equal_leg_normalises_to_one_for_each_member() -> None:
    got = weighted([{"a": 2.0, "b": 2.0}, {"b": 9.0, "c": 1.0}], [0.5, 0.5])
    assert got == [("b", 1.0), ("a", 0.5), ("c", 0.0)]


def test_weighted_disjoint_legs_and_tie_order() -> None:
    got = weighted([{"a": 10.0, "b": 0.0}, {"c": 5.0, "d": 1.0}], [0.7, 0.3])
    assert [key for key, _ in got] == ["a", "c", "b", "d"]
    assert [score for _, score in got] == pytest.approx([0.7, 0.3, 0.0, 0.0])


def test_weighted_negative_scores_and_empty_leg() -> None:
    # Negated FTS5 bm25() values are negative; only their spread matters.
    got = weighted([{"a": -1.0, "b": -3.0}, {}], [1.0, 1.0])
    assert got == [("a", 1.0), ("b", 0.0)]


def test_weighted_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="2 legs but 1 weights"):
        weighted([{"a": 1.0}, {"b": 1.0}], [1.0])
    with pytest.raises(ValueError, match="finite"):
        weighted([{"a": math.nan, "b": 1.0}], [1.0])


BM25 = [("a", 3.2), ("b", 1.1)]
DENSE = [("b", 0.9), ("c", 0.5)]


def test_fuse_rrf_explains_every_leg() -> None:
    hits = fuse([BM25, DENSE])
    assert [h.key for h in hits] == ["b", "a", "c"]
    b, a, c = hits
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    assert b.legs == (LegHit(2, 1.1), LegHit(1, 0.9))
    assert a.legs == (LegHit(1, 3.2), LegHit(None, None))
    assert c.legs == (LegHit(None, None), LegHit(2, 0.5))
    assert a.explain(["bm25", "dense"]) == {
        "score": pytest.approx(1 / 61),
        "legs": {"bm25": {"rank": 1, "score": 3.2}, "dense": {"rank": None, "score": None}},
    }


def test_fuse_weighted_uses_raw_scores() -> None:
    hits = fuse([BM25, DENSE], "weighted", weights=[0.3, 0.7])
    assert [(h.key, h.score) for h in hits] == [
        ("b", pytest.approx(0.7)),
        ("a", pytest.approx(0.3)),
        ("c", 0.0),
    ]
    assert hits[0].legs == (LegHit(2, 1.1), LegHit(1, 0.9))
    equal = fuse([BM25, DENSE], "weighted")
    assert [(h.key, h.score) for h in equal] == [("a", 1.0), ("b", 1.0), ("c", 0.0)]


def test_explain_on_plain_rrf_output() -> None:
    legs = [[("x", 1.0)], [("y", 2.0), ("x", 0.5)]]
    hits = explain(rrf([[k for k, _ in leg] for leg in legs]), legs)
    assert isinstance(hits[0], FusedHit)
    assert hits[0].key == "x"
    assert hits[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert hits[0].legs == (LegHit(1, 1.0), LegHit(2, 0.5))
    assert hits[1].legs == (LegHit(None, None), LegHit(1, 2.0))


def test_fuse_and_explain_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown method"):
        fuse([BM25], "borda")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1 names for 2 legs"):
        fuse([BM25, DENSE])[0].explain(["bm25"])
