"""What the duplicate check costs an append, in a real sidecar: the target file's lines are judged
once across appends (an append judges only the lines the one before it added), and the result is
the same as judging the whole file (a duplicate of a line far up the file is found, also after the
file was edited in place); an append with no line long enough to judge asks the tier's index nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.http.state import SIDECAR
from sidecar.index.tier import Tier
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.corpus import VOCAB

Client = TestClient[Any, Any]
PATH = "daily/2026-07-01.md"


def line(i: int) -> str:
    """A fact line of its own words (no two are near duplicates)."""
    words = VOCAB[400 + 5 * i : 405 + 5 * i]
    return f"- The {words[0]} {words[1]} service keeps {words[2]} in {words[3]} since {words[4]}."


async def write(client: Client, content: str, status: int, path: str = PATH) -> dict[str, Any]:
    resp = await client.post("/memory/write", json={"path": path, "content": content})
    body: dict[str, Any] = await resp.json()
    assert resp.status == status, body
    return body


async def test_the_files_lines_are_judged_once_across_appends(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client: Client = await aiohttp_client(create_app(make_settings()))
    lines = client.app[SIDECAR].writes.file_lines
    appends = 40
    for i in range(appends):
        await write(client, f"## Session {i}\n{line(2 * i)}\n{line(2 * i + 1)}\n", 201)
    # Each append judged the lines the one before it added (3 each), never the whole file again.
    assert lines.lines_judged == 3 * (appends - 1)
    # The same answer as judging the whole file: the second line of the first append is found.
    again = await write(client, line(1).upper() + "\n", 200)
    assert (again["duplicate_of"]["path"], again["duplicate_of"]["line_start"]) == (PATH, 3)
    # Edited in place (not an append): judged whole again, and the edit is what is found.
    file = memory_dir / PATH
    file.write_text(file.read_text(encoding="utf-8").replace(line(0), "- The rollout ran behind the canary flag."))
    before = lines.lines_judged
    found = await write(client, "- the rollout ran behind the canary flag\n", 200)
    assert found["duplicate_of"]["line_start"] == 2
    assert lines.lines_judged - before == 3 * appends


async def test_an_append_with_no_line_to_judge_asks_the_index_nothing(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, monkeypatch: Any
) -> None:
    """The tier's search is wrapped to count its calls (it still answers)."""
    client: Client = await aiohttp_client(create_app(make_settings()))
    tier = client.app[SIDECAR].tiers["agent"]
    searches: list[str] = []
    search = Tier.search

    async def counted(self: Tier, query: str, limit: int, raw_fts: bool = False) -> Any:
        searches.append(query)
        return await search(self, query, limit, raw_fts)

    monkeypatch.setattr(Tier, "search", counted)
    for content in ("- fact", "## Deploy\n", "ok\n- done\n"):
        await write(client, content, 201)
    assert searches == []
    await write(client, line(0), 201)
    assert len(searches) == 1 and tier.name == "agent"


async def test_a_file_is_no_duplicate_of_its_own_stale_chunks(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """A file deleted while the index still holds its chunks (here removed behind the sidecar's back,
    with no watcher and no reconcile to see it; through the API, a write right after a delete, before
    the index has applied it) is judged as it is now: its own old chunks are no earlier copy of it."""
    client: Client = await aiohttp_client(create_app(make_settings(watch=False, reconcile_interval=0)))
    first = await write(client, line(7) + "\n", 201)
    resp = await client.post("/memory/search", json={"query": "service keeps", "after_seq": first["seq"]})
    assert resp.status == 200
    (memory_dir / PATH).unlink()  # the index still holds the file's chunk
    writes = client.app[SIDECAR].writes
    assert await writes.check_duplicate("agent", PATH, line(7)) is None  # the file as it is: none
    assert (await writes.check_duplicate("agent", None, line(7))) is not None  # the tier's index, as it is
    again = await write(client, line(7) + "\n", 201)
    assert again["bytes"] > 0 and "duplicate_of" not in again
    assert (memory_dir / PATH).read_text(encoding="utf-8").count(line(7)) == 1
    # Another file's copy is still a duplicate.
    other = await write(client, line(7) + "\n", 200, path="daily/2026-07-02.md")
    assert other["duplicate_of"]["path"] == PATH
