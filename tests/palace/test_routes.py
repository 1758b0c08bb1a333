"""The palace's HTTP routes on a real sidecar over real files: list, taxonomy, delete (durable and
journaled), identity, diary and the per-agent settings file."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from tests.support.memory import write

Start = Callable[..., Awaitable[TestClient[Any, Any]]]
NOTES = "# Notes\nIntro line.\n\n## Deploy\nStaging first.\n\n### Rollback\nKeep the last image.\n\n## Cooking\nBake bread.\n"


async def ok(client: TestClient[Any, Any], method: str, url: str, **kw: Any) -> dict[str, Any]:
    resp = await client.request(method, url, **kw)
    assert resp.status in (200, 201), await resp.text()
    out: dict[str, Any] = await resp.json()
    return out


async def err(client: TestClient[Any, Any], method: str, url: str, status: int, **kw: Any) -> str:
    resp = await client.request(method, url, **kw)
    assert resp.status == status, await resp.text()
    body = await resp.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"])
    code: str = body["error"]["code"]
    return code


async def test_list_and_taxonomy_name_wings_rooms_and_counts(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/deploy.md", NOTES)
    write(memory_dir, "daily/summaries/2026-W20.md", "# Week 20\nQuiet week.\n")
    client = await start()
    listed = (await ok(client, "GET", "/memory/list"))["files"]
    by_path = {f["path"]: f for f in listed}
    assert set(by_path) == {"AGENT.md", "daily/2026-05-14.md", "daily/summaries/2026-W20.md", "topics/deploy.md"}
    deploy = by_path["topics/deploy.md"]
    assert deploy["wing"] == "agent" and deploy["room"] == "topics"
    assert deploy["bytes"] == len(NOTES.encode()) and deploy["chunks"] == 4 and deploy["modified"].endswith("Z")
    assert by_path["AGENT.md"]["room"] == "evergreen"
    daily = (await ok(client, "GET", "/memory/list", params={"room": "daily"}))["files"]
    assert {f["path"] for f in daily} == {"daily/2026-05-14.md", "daily/summaries/2026-W20.md"}
    await client.post("/memory/remember", json={"content": "We use Kafka for events", "memory_type": "decision"})
    wings = {w["wing"]: w for w in (await ok(client, "GET", "/memory/taxonomy"))["wings"]}
    rooms = {r["room"]: r for r in wings["agent"]["rooms"]}
    assert rooms["topics"] == {"room": "topics", "files": 1, "chunks": 4, "bytes": len(NOTES.encode())}
    assert rooms["daily/summaries"]["files"] == 1 and wings["agent"]["files"] == 4
    assert wings["journal"]["rooms"] == [{"room": "decision", "memories": 1}]
    assert await err(client, "GET", "/memory/list?colour=red", 400) == "unknown_field"
    assert await err(client, "GET", "/memory/list?wing=", 400) == "invalid_wing"


async def test_delete_a_section_with_its_subsections_durably_and_journaled(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/deploy.md", NOTES)
    client = await start()
    out = await ok(client, "POST", "/memory/delete", json={"path": "topics/deploy.md", "heading": "Deploy"})
    assert out["deleted"] == "section" and (out["line_start"], out["line_end"]) == (4, 9)
    text = (memory_dir / "topics/deploy.md").read_text()
    assert text == "# Notes\nIntro line.\n\n## Cooking\nBake bread.\n"
    assert out["bytes"] == len(text.encode()) and out["bytes_removed"] == len(NOTES.encode()) - len(text.encode())
    found = await ok(client, "POST", "/memory/search", json={"query": "rollback image", "after_seq": out["seq"]})
    assert found["results"] == []  # the reindex followed the delete
    entries = (await ok(client, "GET", "/journal", params={"workspace_id": "default"}))["entries"]
    deleted = [e for e in entries if e["entry_type"] == "memory.deleted"]
    assert deleted and deleted[0]["id"] == out["journal_id"]
    assert deleted[0]["payload"] == {
        "tier": "agent",
        "path": "topics/deploy.md",
        "deleted": "section",
        "seq": out["seq"],
        "heading": "Deploy",
    }


async def test_delete_a_file_and_the_errors(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/a.md", "# A\n## Same\none\n# B\n## Same\ntwo\n")
    client = await start()
    assert await err(client, "POST", "/memory/delete", 409, json={"path": "topics/a.md", "heading": "Same"}) == (
        "ambiguous_heading"
    )
    out = await ok(client, "POST", "/memory/delete", json={"path": "topics/a.md", "heading": "B > Same"})
    assert (memory_dir / "topics/a.md").read_text() == "# A\n## Same\none\n# B\n"
    assert out["deleted"] == "section"
    assert await err(client, "POST", "/memory/delete", 404, json={"path": "topics/a.md", "heading": "Nope"}) == (
        "section_not_found"
    )
    gone = await ok(client, "POST", "/memory/delete", json={"path": "topics/a.md"})
    assert gone["deleted"] == "file" and not (memory_dir / "topics/a.md").exists()
    assert await err(client, "POST", "/memory/delete", 404, json={"path": "topics/a.md"}) == "file_not_found"
    assert await err(client, "POST", "/memory/delete", 400, json={"path": "../etc/passwd.md"}) == "invalid_path"
    assert await err(client, "POST", "/memory/delete", 400, json={"path": "x.md", "heading": None}) == (
        "invalid_heading"
    )
    assert await err(client, "POST", "/memory/delete", 409, json={"path": "x.md", "tier": "crew"}) == "no_crew_tier"


async def test_identity_is_l0_and_capped(start: Start, memory_dir: Path) -> None:
    client = await start()
    out = await ok(client, "POST", "/memory/identity", json={"identity": "I am Ledger, the billing agent of Acme."})
    assert (memory_dir / "identity.md").read_text() == "I am Ledger, the billing agent of Acme.\n"
    assert out["path"] == "identity.md" and out["chars"] == len("I am Ledger, the billing agent of Acme.\n")
    await ok(client, "POST", "/memory/identity", json={"identity": "I am Ledger v2."})
    assert (memory_dir / "identity.md").read_text() == "I am Ledger v2.\n"  # replaced, not appended
    assert await err(client, "POST", "/memory/identity", 400, json={"identity": "x" * 2001}) == "identity_too_long"
    assert await err(client, "POST", "/memory/identity", 400, json={"identity": " "}) == "invalid_identity"


async def test_diary_entries_per_agent_newest_first(start: Start, memory_dir: Path) -> None:
    client = await start()
    await ok(client, "POST", "/memory/diary", json={"content": "Rolled out the export fix."})
    await ok(client, "POST", "/memory/diary", json={"content": "## Sneaky\nNot a new entry.", "agent_id": "reviewer"})
    last = await ok(client, "POST", "/memory/diary", json={"content": "Wrote the runbook."})
    note = (memory_dir / last["path"]).read_text()
    assert "## Diary (agent) " in note and "### Sneaky" in note and "\n## Sneaky" not in note
    assert f"## Diary (agent) {last['at']}\nWrote the runbook.\n" in note and last["at"].endswith("Z")
    mine = (await ok(client, "GET", "/memory/diary"))["entries"]
    assert [e["content"] for e in mine][:2] in (
        ["Wrote the runbook.", "Rolled out the export fix."],
        ["Rolled out the export fix.", "Wrote the runbook."],  # written within the same second
    )
    assert len(mine) == 2 and all(e["agent_id"] == "agent" for e in mine)
    theirs = (await ok(client, "GET", "/memory/diary", params={"agent_id": "reviewer"}))["entries"]
    assert [e["content"] for e in theirs] == ["### Sneaky\nNot a new entry."]
    assert len((await ok(client, "GET", "/memory/diary", params={"limit": "1"}))["entries"]) == 1
    assert await err(client, "GET", "/memory/diary?limit=0", 400) == "invalid_limit"
    assert await err(client, "POST", "/memory/diary", 400, json={"content": ""}) == "invalid_content"
    assert await err(client, "POST", "/memory/diary", 400, json={"content": "x", "agent_id": "a b"}) == (
        "invalid_agent_id"
    )


async def test_agent_settings_file_applies_and_reports(start: Start, memory_dir: Path) -> None:
    (memory_dir / "memory.toml").write_text(
        "budget = 3000\nthreshold = 0.7\nepisodic_ttl_days = 30\nconsolidation = false\n"
    )
    client = await start()
    out = await ok(client, "GET", "/memory/agent-settings")
    assert out["path"] == "memory.toml" and out["errors"] == []
    assert out["effective"] == {
        "budget": 3000,
        "threshold": 0.7,
        "episodic_ttl_days": 30.0,
        "consolidation": 0.0,
        "memory": True,
    }
    block = await ok(client, "POST", "/memory/block", json={})
    assert block["budget"] == 3000


@pytest.mark.parametrize(
    ("name", "text", "problem"),
    [
        ("memory.toml", "budget = = 3", "the whole file is ignored"),
        ("memory.toml", "budget = 0\ncolour = 'red'\nmemory = true", "budget must be"),
        ("settings.md", "---\nbudget 3\n---\n", "not 'key: value'"),
        ("settings.md", "---\nbudget: 3000\n", "never closed"),
    ],
)
async def test_a_bad_settings_file_is_reported_never_fatal(
    start: Start, memory_dir: Path, name: str, text: str, problem: str
) -> None:
    (memory_dir / name).write_text(text)
    client = await start()  # starts
    out = await ok(client, "GET", "/memory/agent-settings")
    assert out["path"] == name and any(problem in e for e in out["errors"]), out
    assert out["effective"]["budget"] == 15000  # the bad value did not apply
    assert (await ok(client, "POST", "/memory/block", json={}))["used"] > 0


async def test_settings_md_front_matter_turns_memory_off(start: Start, memory_dir: Path) -> None:
    (memory_dir / "settings.md").write_text("---\nmemory: false\nbudget: 4000\n---\n# Settings\n")
    client = await start()
    out = await ok(client, "GET", "/memory/agent-settings")
    assert out["values"] == {"memory": False, "budget": 4000} and out["errors"] == []
    block = await ok(client, "POST", "/memory/block", json={"query": "PostgreSQL"})
    assert block["text"] == "" and block["layers"] == [] and block["match_count"] == 0
    write_body = {"path": "daily/2026-05-15.md", "content": "x y z"}
    assert await err(client, "POST", "/memory/write", 403, json=write_body) == "memory_disabled"
    turns = {"turns": [{"content": "We decided to use Kafka for events."}]}
    assert await err(client, "POST", "/memory/ingest", 403, json=turns) == "memory_disabled"
    assert not (memory_dir / "daily/2026-05-15.md").exists()
