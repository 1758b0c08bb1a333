"""What the duplicate check searches the tier for, in a real sidecar: each judged line's rarest
words the tier holds (a few postings to score, not every chunk's common words), which still find
a copy in another file; and nothing at all for an append whose every line holds so many words no
chunk has that it cannot reach the threshold against any line of the tier."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from sidecar.index.tier import Tier
from sidecar.server.app import create_app
from sidecar.settings import Settings
from sidecar.write.dedup import tier_query
from sidecar.write.service import DEDUP_RAREST_WORDS

Client = TestClient[Any, Any]
COMMON = ("service", "deploy", "staging", "team", "weekly")
FACT = "- the ledger service pins zephyrite quorum on marlin nodes"


async def write(client: Client, path: str, content: str, status: int) -> dict[str, Any]:
    resp = await client.post("/memory/write", json={"path": path, "content": content})
    body: dict[str, Any] = await resp.json()
    assert resp.status == status, body
    return body


async def ready(client: Client, tier: Tier) -> None:
    """The tier's in-memory postings built (the server starts them once it serves): the build is
    queued on the writer thread, and a write queued after it runs once it is done."""
    tier.start_postings()
    await tier.write_with(lambda _: None)
    assert tier.index.postings.snapshot is not None


async def test_the_tier_is_searched_for_each_lines_rarest_words(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, monkeypatch: Any
) -> None:
    for i in range(12):  # the common words in every topic file
        (memory_dir / "topics").mkdir(exist_ok=True)
        (memory_dir / "topics" / f"t{i}.md").write_text(
            f"# Topic {i}\n\n- the {' '.join(COMMON)} notes item{i}\n", encoding="utf-8"
        )
    (memory_dir / "topics" / "ledger.md").write_text(f"# Ledger\n\n{FACT}\n", encoding="utf-8")
    client: Client = await aiohttp_client(create_app(make_settings()))
    tier = client.app[SIDECAR].tiers["agent"]
    await ready(client, tier)
    searched: list[str] = []
    search = Tier.search

    async def counted(self: Tier, query: str, limit: int, raw_fts: bool = False) -> Any:
        searched.append(query)
        return await search(self, query, limit, raw_fts)

    monkeypatch.setattr(Tier, "search", counted)
    # The fact in another file, among common words: still found, by its rare words alone.
    line = f"{FACT} {' '.join(COMMON)}"
    (memory_dir / "topics" / "ledger.md").write_text(f"# Ledger\n\n{line}\n", encoding="utf-8")
    await client.app[SIDECAR].queue.wait_for(client.app[SIDECAR].queue.put("agent", "topics/ledger.md", "test"), 10)
    found = await write(client, "daily/2026-07-01.md", line + "\n", 200)
    assert found["duplicate_of"]["path"] == "topics/ledger.md"
    assert len(searched) == 1
    query = searched[0].split()
    assert 0 < len(query) <= DEDUP_RAREST_WORDS
    assert not set(query) & set(COMMON)  # in every chunk: they find nothing a rare word does not
    assert set(query) <= {"ledger", "pins", "zephyrite", "quorum", "marlin", "nodes"}


async def test_a_line_no_chunk_can_match_searches_nothing(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, monkeypatch: Any
) -> None:
    client: Client = await aiohttp_client(create_app(make_settings()))
    tier = client.app[SIDECAR].tiers["agent"]
    await ready(client, tier)
    searched: list[str] = []
    search = Tier.search

    async def counted(self: Tier, query: str, limit: int, raw_fts: bool = False) -> Any:
        searched.append(query)
        return await search(self, query, limit, raw_fts)

    monkeypatch.setattr(Tier, "search", counted)
    # Two words of six held by no chunk: at most 4/6 like any line of the tier, under 0.9.
    first = await write(client, "daily/2026-07-01.md", "- qwzxv plorbin noted during the run\n", 201)
    assert "duplicate_of" not in first and searched == []
    # Its own file is still compared (the write's own words are in the tier once it is indexed).
    again = await write(client, "daily/2026-07-01.md", "- qwzxv plorbin noted during the run\n", 200)
    assert again["duplicate_of"]["path"] == "daily/2026-07-01.md"


def test_tier_query_keeps_each_lines_rarest_held_words() -> None:
    counts = {"a": 0, "b": 3, "c": 1, "d": 50, "e": 2, "f": 0, "g": 0, "h": 9}
    lines = [frozenset("bcdeh"), frozenset("afgc")]  # the second: 1 word of 4 held, under 0.9
    assert tier_query(lines, counts, 0.9, 2) == ["c", "e"]
    assert tier_query(lines, counts, 0.2, 3) == ["c", "e", "b"]
