"""A search that would hold the event loop for milliseconds runs on a reader thread instead.

BM25 from the in-memory postings is answered on the loop (cheaper than a hop to a thread), but its
cost grows with the postings of the query's words: 24 stopwords over a 10k-chunk tier took 20 ms
of loop time. A real tier, real postings; a spy on the index's thread-side search shows where
each search ran.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from sidecar.index.tier import ON_LOOP_POSTINGS, Tier
from tests.support.waiting import async_wait_until

WORDS = [f"common{i}" for i in range(16)]


@pytest.fixture
async def tier(tmp_path: Path) -> AsyncIterator[Tier]:
    root = tmp_path / "memory"
    root.mkdir()
    for f in range(25):  # 2,500 chunks, each holding every one of WORDS: 40,000 postings for them all
        sections = [f"## Part {p}\n{' '.join(WORDS)} unique{f}x{p} filler text" for p in range(100)]
        (root / f"f{f:02}.md").write_text("\n\n".join(sections) + "\n")
    tier = Tier("agent", root)
    await tier.open()

    async def built() -> bool:
        return bool((await tier.status())["bm25"]["engine"] == "postings")

    await async_wait_until(built, timeout=60, message="the postings to be built")
    yield tier
    await tier.close()


async def test_a_heavy_query_is_searched_on_a_reader_thread_with_the_same_answer(
    tier: Tier, monkeypatch: pytest.MonkeyPatch
) -> None:
    heavy, light = " ".join(WORDS), "unique3x7"
    assert ON_LOOP_POSTINGS < 16 * 2500
    index = tier.index
    assert index.search_postings(heavy, 10, phrases=False, max_postings=ON_LOOP_POSTINGS) is None
    assert index.search_postings(light, 10, phrases=False, max_postings=ON_LOOP_POSTINGS)
    expected = index.search_postings(heavy, 10)
    assert expected

    ran_on: list[str] = []
    thread_side = index.search

    def spy(*args: object, **kwargs: object) -> object:
        ran_on.append(threading.current_thread().name)
        return thread_side(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(index, "search", spy)
    hits = await tier.search(heavy, 10)
    assert [(h.id, h.score) for h in hits] == [(h.id, h.score) for h in expected]
    assert len(ran_on) == 1 and ran_on[0].startswith("agent-reader")
    hits = await tier.search(light, 10)
    assert [h.path for h in hits] == ["f03.md"] and len(ran_on) == 1  # answered on the loop
