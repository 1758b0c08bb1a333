"""A search's first hits do not depend on the limit it is asked with, and live text below archived
text that scored higher for its length is still found (``standing.WINDOW``, ``standing.enough``).

A tier after consolidation holds archived notes, whose long chunks say a subject's words many times,
and one-line sections of the live summaries that say the answer once. BM25 ranks the archived chunks
first; their standing halves them. Reading only a few hits past the limit by BM25 alone, a small
limit missed the live answer a larger one found, and the first hits of two searches differed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidecar.index.tier import Tier
from sidecar.retrieval.hybrid import HybridSearcher
from tests.support.memory import write

TODAY = datetime.now(UTC).date()
ANSWER = "The kiln glaze firing for the stoneware runs on Tuesdays from 06:00."


def _archived(n: int) -> str:
    """An archived note that says the kiln's words often, never its schedule."""
    day = TODAY - timedelta(days=60 + n)
    lines = [
        f"Loaded kiln two with glaze tests, firing log sheet {n} filled in.",
        "Checked the kiln shelves for glaze drips before the next firing.",
        f"Unloaded the kiln after the overnight firing, glaze crawled on {n % 4 + 1} bowls.",
        "Wiped the kiln lid seal, the firing smelled of wax resist.",
        "Kiln glaze firing cones bent evenly, kiln vents open for the firing, glaze glossy.",
        "Glaze firing notes: kiln element three glows late, firing ran long, glaze pinholed.",
    ]
    return f"# {day}\n\n## Log\n" + "".join(f"- {line}\n" for line in lines)


def _filler(n: int) -> str:
    day = TODAY - timedelta(days=5 + n)
    lines = ["Swept the studio floor.", f"Sold {n + 3} mugs at the market.", "Reclaimed clay slop buckets."]
    return f"# {day}\n\n## Log\n" + "".join(f"- {line}\n" for line in lines)


@pytest.fixture
async def tier(tmp_path: Path) -> AsyncIterator[Tier]:
    root = tmp_path / "memory"
    for n in range(40):
        day = TODAY - timedelta(days=60 + n)
        write(root, f"archive/daily/{day}.md", _archived(n))
    for n in range(60):
        day = TODAY - timedelta(days=5 + n)
        write(root, f"daily/{day}.md", _filler(n))
    year, week, _ = (TODAY - timedelta(days=14)).isocalendar()
    write(root, f"daily/summaries/{year}-W{week:02d}.md", f"# Summary of {year}-W{week:02d}\n\n### Kiln\n- {ANSWER}\n")
    opened = Tier("agent", root)
    await opened.open()
    yield opened
    await opened.close()


async def _hits(tier: Tier, query: str, limit: int) -> list[tuple[str, int]]:
    searcher = HybridSearcher(None, None, {})
    results, _ = await searcher.search(tier, query, limit, False)
    return [(hit["path"], hit["line_start"]) for hit in results]


async def test_live_text_below_archived_text_is_found_at_a_small_limit(tier: Tier) -> None:
    query = "kiln glaze firing schedule"
    raw = await tier.search(query, 15)
    assert all(hit.path.startswith("archive/") for hit in raw), "BM25 alone ranks the archived notes first"
    first = await _hits(tier, query, 5)
    assert first[0][0].startswith("daily/summaries/"), first


async def test_the_first_hits_are_the_same_whatever_the_limit(tier: Tier) -> None:
    for query in ("kiln glaze firing schedule", "glaze firing", "kiln shelves", "stoneware Tuesdays"):
        five = await _hits(tier, query, 5)
        assert five == (await _hits(tier, query, 10))[:5] == (await _hits(tier, query, 15))[:5], query
