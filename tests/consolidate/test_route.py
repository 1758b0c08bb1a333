"""POST /memory/consolidate on a real app over a real tier: a dry run writes nothing, a run rolls
old daily notes up into weekly summaries and the archive, bad bodies are 400s naming the field."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.clock import utcnow
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.waiting import async_wait_until

Client = TestClient[Any, Any]


def old_notes(root: Path) -> list[str]:
    """Three notes of a week five weeks ago, each repeating one fact."""
    monday = utcnow().date() - timedelta(days=35 + utcnow().date().weekday())
    names = []
    for n in range(3):
        day = monday + timedelta(days=n)
        name = f"daily/{day.isoformat()}.md"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(f"## Ops\n- The staging database is db-stage-3.\n- Rotated log shard {n} by hand.\n")
        names.append(name)
    return names


@pytest.mark.slow
async def test_dry_run_then_run(aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path) -> None:
    names = old_notes(memory_dir)
    client: Client = await aiohttp_client(create_app(make_settings()))
    resp = await client.post("/memory/consolidate", json={"dry_run": True})
    dry = await resp.json()
    year, week, _ = (utcnow().date() - timedelta(days=35)).isocalendar()
    assert resp.status == 200 and dry["dry_run"] is True and f"{year}-W{week:02d}" in dry["periods"]
    assert all((memory_dir / name).exists() for name in names)
    resp = await client.post("/memory/consolidate", json={})
    done = await resp.json()
    assert resp.status == 200 and done["dry_run"] is False
    assert not any((memory_dir / name).exists() for name in names)
    assert all((memory_dir / "archive" / name).read_text().startswith("## Ops") for name in names)
    summary = memory_dir / "daily" / "summaries" / f"{year}-W{week:02d}.md"
    assert "db-stage-3" in summary.read_text()
    assert "db-stage-3" in (memory_dir / "AGENT.md").read_text()  # seen on three days: promoted
    again = await (await client.post("/memory/consolidate", json={})).json()
    assert again["periods"] == []


async def test_bad_bodies_are_400s(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    client: Client = await aiohttp_client(create_app(make_settings()))
    for body, code in [
        ({"tier": "crew"}, "invalid_tier"),
        ({"since": "last week"}, "invalid_since"),
        ({"since": 20260101}, "invalid_since"),
        ({"dry_run": "yes"}, "invalid_dry_run"),
        ({"colour": "red"}, "unknown_field"),
    ]:
        resp = await client.post("/memory/consolidate", json=body)
        assert resp.status == 400, body
        assert (await resp.json())["error"]["code"] == code, body


@pytest.mark.slow
def test_the_cli_runs_it_and_refuses_a_dir_a_sidecar_serves(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from sidecar.server.lock import TierLock

    root = tmp_path / "memory"
    names = old_notes(root)
    env = {"MEMORY_SIDECAR_EMBEDDER": "none", "PATH": "/usr/bin:/bin"}

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "sidecar", "consolidate", "run", "--memory-dir", str(root), *extra]
        return subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)

    dry = run("--dry-run", "--format", "json")
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["dry_run"] is True and all((root / n).exists() for n in names)
    lock = TierLock.take(root)
    try:
        refused = run()
        assert refused.returncode == 2 and "POST /memory/consolidate" in refused.stderr
    finally:
        lock.release()
    done = run()
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert not any((root / n).exists() for n in names)
    bad = run("--since", "yesterday")
    assert bad.returncode == 2 and "--since" in bad.stderr


async def test_a_write_to_a_note_being_archived_is_not_lost(tmp_path: Path) -> None:
    """A note is taken out of daily/ in one rename before it is archived: a write to that day in
    the meantime makes a new note, which survives the run (here the claim a killed run left)."""
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.periods import claimed_rel
    from sidecar.consolidate.state import rename_durably
    from sidecar.consolidate.summarise import ExtractiveSummariser

    root = tmp_path / "memory"
    names = old_notes(root)
    rename_durably(root, names[0], claimed_rel(names[0]))  # claimed, then the run was killed
    (root / names[0]).write_text("## Late\n- A fact written while the note was being archived.\n")
    await consolidate(root, since=None, until=utcnow().date(), summariser=ExtractiveSummariser(), dry_run=False)
    kept = [p.read_text() for p in root.rglob("*.md")]
    assert any("written while the note was being archived" in text for text in kept)
    assert "Rotated log shard 0" in (root / "archive" / names[0]).read_text()
    assert not (root / claimed_rel(names[0])).exists()


async def test_a_preference_is_promoted_once_stated_in_several_notes_never_from_one(tmp_path: Path) -> None:
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    root = tmp_path / "memory"
    names = old_notes(root)
    with (root / names[1]).open("a") as note:
        note.write("- The user wants tables rather than long lists.\n")  # one note: not a standing preference
        note.write("- Should we always squash commits?\n")  # a question: no preference
    for name in names[:3]:
        with (root / name).open("a") as note:
            note.write("- The user prefers short answers.\n")
    await consolidate(root, since=None, until=utcnow().date(), summariser=ExtractiveSummariser(), dry_run=False)
    agent = (root / "AGENT.md").read_text()
    assert "## Preferences" in agent and "The user prefers short answers." in agent
    assert "rather than long lists" not in agent
    assert "squash" not in agent


async def test_a_lead_distils_the_operator_model_the_block_then_shows(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, tmp_path: Path
) -> None:
    from sidecar.prompt.block import user_slug

    monday = utcnow().date() - timedelta(days=35 + utcnow().date().weekday())
    lines = ["- The user prefers short answers.", "- User: always give times in UTC.", "- Rotated the logs."]
    for n, line in enumerate(lines):
        (memory_dir / "daily" / f"{(monday + timedelta(days=n)).isoformat()}.md").write_text(f"## Notes\n{line}\n")
    (tmp_path / "crew").mkdir()
    settings = make_settings(role="lead", operator_id="ana", workspace_id="ws1")
    client: Client = await aiohttp_client(create_app(settings))
    done = await (await client.post("/memory/consolidate", json={})).json()
    model = done["operator_model"]
    path = f"operators/{user_slug('ana', 'ws1')}.md"
    assert model["path"] == path and model["changed"] is True
    assert model["added"] == ["Prefer short answers.", "Always give times in UTC."]
    text = (tmp_path / "crew" / path).read_text()
    assert "## Preferences" in text and "Prefer short answers." in text and "Rotated" not in text
    again = await (await client.post("/memory/consolidate", json={})).json()
    assert again["operator_model"] is None  # nothing left to roll up: the file is as it was
    assert (tmp_path / "crew" / path).read_text() == text
    block = await (await client.post("/memory/block", json={"user_id": "ana", "workspace_id": "ws1"})).json()
    assert "Always give times in UTC." in block["text"]
    other = await (await client.post("/memory/block", json={"user_id": "bob", "workspace_id": "ws1"})).json()
    assert "Always give times in UTC." not in other["text"]
    unnamed = await (await client.post("/memory/block", json={"user_id": "ana"})).json()  # the sidecar's workspace
    assert "Always give times in UTC." in unnamed["text"]
    elsewhere = await (await client.post("/memory/block", json={"user_id": "ana", "workspace_id": "ws2"})).json()
    assert "Always give times in UTC." not in elsewhere["text"]


def test_an_operator_model_needs_a_lead(make_settings: Callable[..., Settings]) -> None:
    from sidecar.settings import ConfigError

    with pytest.raises(ConfigError, match="--operator-id needs --role lead"):
        make_settings(operator_id="ana")
    with pytest.raises(ConfigError, match="--operator-id must be"):
        make_settings(role="lead", operator_id="ana smith")


async def test_a_lead_consolidates_the_crew_tier_and_search_follows(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path, tmp_path: Path
) -> None:
    crew = tmp_path / "crew"
    names = old_notes(crew)
    client: Client = await aiohttp_client(create_app(make_settings(role="lead")))
    done = await (await client.post("/memory/consolidate", json={"tier": "crew"})).json()
    assert len(done["archived"]) == 3 and done["memories_merged"] == []
    assert "db-stage-3" in (crew / "CREW.md").read_text()
    assert not any((crew / name).exists() for name in names)
    assert not (memory_dir / "AGENT.md").read_text().count("db-stage-3")  # the agent tier is not touched
    body = {"query": "staging database", "scope": "crew", "limit": 10}

    async def reindexed() -> list[dict[str, Any]] | None:  # the reindex the run queued
        hits: list[dict[str, Any]] = (await (await client.post("/memory/search", json=body)).json())["results"]
        return hits if any(hit["path"] == "CREW.md" for hit in hits) else None

    hits = await async_wait_until(reindexed, message="the crew tier was not reindexed after the run")
    assert all(not hit["path"].startswith("daily/20") for hit in hits)


async def test_summary_names_that_are_no_week_are_refused(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """A write may not create a summary the job would read by a week that does not exist."""
    client: Client = await aiohttp_client(create_app(make_settings()))
    for name in ("2026-W99", "2026-W00", "2025-W53", "2026-W7", "2026-w07"):
        rel = f"daily/summaries/{name}.md"
        resp = await client.post("/memory/write", json={"path": rel, "content": "- x\n", "mode": "append"})
        answer = await resp.json()
        assert resp.status == 400 and answer["error"]["code"] == "invalid_path", (name, answer)
        assert not (memory_dir / rel).exists()
    for rel in ("daily/summaries/2026-W53.md", "daily/summaries/notes.md", "notes/2026-W99.md"):
        resp = await client.post("/memory/write", json={"path": rel, "content": "- kept\n", "mode": "append"})
        assert resp.status in (200, 201), await resp.text()
        assert (memory_dir / rel).read_text().endswith("- kept\n")
