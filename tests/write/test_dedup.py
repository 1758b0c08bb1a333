"""Appends memory already holds are not written again: the same file or another file of the tier,
through HTTP and the memory_check_duplicate tool; replace, force and a threshold of 0 write."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.server.app import create_app
from sidecar.settings import Settings
from sidecar.write.dedup import Candidate, _judged, find_duplicate, jaccard
from tests.support.mcp import mcp_session

Client = TestClient[Any, Any]
FACT = "- The staging database is db-stage-3 on port 5433.\n- Deploys need a green smoke test first.\n"


@pytest.fixture
def start(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> Callable[..., Awaitable[Client]]:
    async def go(**overrides: Any) -> Client:
        client: Client = await aiohttp_client(create_app(make_settings(**overrides)))
        return client

    return go


async def write(client: Client, path: str, content: str, status: int, **extra: Any) -> dict[str, Any]:
    resp = await client.post("/memory/write", json={"path": path, "content": content, **extra})
    body: dict[str, Any] = await resp.json()
    assert resp.status == status, body
    return body


async def indexed(client: Client, seq: int) -> None:
    resp = await client.post("/memory/search", json={"query": "staging", "after_seq": seq})
    assert (await resp.json())["index"]["after_seq_met"] is True


async def test_an_append_memory_already_holds_is_not_written_again(start: Any, memory_dir: Path) -> None:
    client = await start()
    first = await write(client, "daily/2026-06-01.md", "## Ops\n" + FACT, 201)
    before = (memory_dir / "daily/2026-06-01.md").read_bytes()
    again = await write(client, "daily/2026-06-01.md", "## Ops again\n" + FACT.upper(), 200)
    assert again["duplicate_of"]["path"] == "daily/2026-06-01.md"
    assert (again["duplicate_of"]["line_start"], again["duplicate_of"]["line_end"]) == (2, 3)
    assert again["duplicate_of"]["similarity"] == 1.0 and again["seq"] >= first["seq"]
    assert (memory_dir / "daily/2026-06-01.md").read_bytes() == before
    # the same facts on another day: found through the tier's index
    await indexed(client, first["seq"])
    other = await write(client, "daily/2026-06-02.md", "- the staging database is db-stage-3, on port 5433\n", 200)
    assert other["duplicate_of"]["path"] == "daily/2026-06-01.md"
    assert not (memory_dir / "daily/2026-06-02.md").exists()


async def test_a_new_fact_among_old_ones_replace_and_force_are_written(start: Any, memory_dir: Path) -> None:
    client = await start()
    await write(client, "topics/ops.md", FACT, 201)
    mixed = FACT + "- The smoke test runs in 4 minutes.\n"
    await write(client, "topics/ops.md", mixed, 201)  # one new line: the append lands whole
    await write(client, "topics/ops.md", FACT, 201, force=True)
    await write(client, "topics/ops.md", FACT, 201, mode="replace")
    assert (memory_dir / "topics/ops.md").read_text() == FACT
    resp = await client.post("/memory/write", json={"path": "topics/ops.md", "content": FACT, "force": "yes"})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_force"


async def test_a_threshold_of_zero_turns_the_check_off(start: Any, memory_dir: Path) -> None:
    client = await start(dedup_threshold="0")
    await write(client, "topics/ops.md", FACT, 201)
    await write(client, "topics/ops.md", FACT, 201)
    assert (memory_dir / "topics/ops.md").read_text().count("db-stage-3") == 2


async def test_check_duplicate_tool_with_the_official_client(
    aiohttp_server: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    server: TestServer = await aiohttp_server(create_app(make_settings()))
    async with mcp_session(server) as session:
        wrote = await session.call_tool("memory_write", {"path": "topics/ops.md", "content": FACT})
        assert wrote.is_error is False
        same = await session.call_tool("memory_check_duplicate", {"content": FACT, "path": "topics/ops.md"})
        assert same.structured_content is not None and same.structured_content["duplicate"] is True
        assert same.structured_content["duplicate_of"]["path"] == "topics/ops.md"
        new = await session.call_tool("memory_check_duplicate", {"content": "- Billing closes on the 3rd."})
        assert new.structured_content == {"duplicate": False, "duplicate_of": None}
        again = await session.call_tool("memory_write", {"path": "topics/ops.md", "content": FACT})
        assert again.is_error is False and "Not written" in again.content[0].text  # type: ignore[union-attr]
        bad = await session.call_tool("memory_check_duplicate", {"content": ""})
        assert bad.is_error is True


def test_lines_judged_and_lines_not() -> None:
    held = [Candidate("a.md", 10, "# Heading\n- The cache TTL is five minutes\n```\ncode line one two\n```\n")]
    assert find_duplicate("* the cache TTL is five minutes", held, 0.9) is not None
    assert find_duplicate("# Heading\n---\nok", held, 0.9) is None  # nothing long enough to judge
    assert find_duplicate("code line one two", held, 0.9) is None  # fenced text is not memory's prose
    found = find_duplicate("- [x] The cache TTL is five minutes", held, 0.9)
    assert found is not None and (found.path, found.line_start) == ("a.md", 11)
    assert find_duplicate("- The cache TTL is ten minutes", held, 0.9) is None


def _every_pair(content: str, held: list[Candidate], threshold: float) -> tuple[str, int, int, float] | None:
    """The answer as every judged line compared with every known line gives it (the reference)."""
    new = [words for _, words in _judged(content)]
    if not new:
        return None
    known = [(c.path, c.line_start + offset, words) for c in held for offset, words in _judged(c.text)]
    matches = []
    for words in new:
        best = max(((jaccard(words, w), path, line) for path, line, w in known), default=(0.0, "", 0))
        if best[0] < threshold:
            return None
        matches.append((best[1], best[2], best[0]))
    lines = [line for p, line, _ in matches if p == matches[0][0]]
    return matches[0][0], min(lines), max(lines), min(s for _, _, s in matches)


_LETTERS = ["a", "bb", "c", "ddd", "e", "ff", "g", "hhhh", "i", "jj", "k", "lll"]


@settings(max_examples=300, deadline=None)
@given(
    known=st.lists(st.lists(st.sampled_from(_LETTERS), min_size=3, max_size=12), min_size=1, max_size=25),
    new=st.lists(st.lists(st.sampled_from(_LETTERS), min_size=3, max_size=12), min_size=1, max_size=3),
    threshold=st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0]),
)
@pytest.mark.slow
def test_lines_too_unlike_in_size_are_skipped_without_changing_the_answer(
    known: list[list[str]], new: list[list[str]], threshold: float
) -> None:
    """Lines whose word counts alone keep them under the threshold are not compared, nor lines
    holding none of the few words every line that like the new one must hold: the answer is the one
    every pair gives, ties and similarities exactly at the threshold included (sizes such as 9 of 10
    words against 0.9, 3 of 4 against 0.75), with words of several lengths (the longest are looked
    for)."""
    held = [
        Candidate("a.md", 1, "\n".join("- " + " ".join(f"w{c}" for c in line) for line in known[: len(known) // 2])),
        Candidate("b.md", 7, "\n".join("- " + " ".join(f"w{c}" for c in line) for line in known[len(known) // 2 :])),
    ]
    content = "\n".join("- " + " ".join(f"w{c}" for c in line) for line in new)
    found = find_duplicate(content, held, threshold)
    expected = _every_pair(content, held, threshold)
    assert (None if found is None else (found.path, found.line_start, found.line_end, found.similarity)) == expected
