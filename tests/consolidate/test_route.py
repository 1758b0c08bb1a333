"""POST /memory/consolidate on a real app over a real tier: a dry run writes nothing, a run rolls
old daily notes up into weekly summaries and the archive, bad bodies are 400s naming the field."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.episodic.clock import utcnow
from sidecar.server.app import create_app
from sidecar.settings import Settings

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
        ({"colour": "red"}, "invalid_colour"),
    ]:
        resp = await client.post("/memory/consolidate", json=body)
        assert resp.status == 400, body
        assert (await resp.json())["error"]["code"] == code, body


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


async def test_a_stated_preference_is_promoted_the_first_week_it_is_said(tmp_path: Path) -> None:
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    root = tmp_path / "memory"
    names = old_notes(root)
    with (root / names[1]).open("a") as note:
        note.write("- The user prefers short answers.\n- The user wants tables rather than long lists.\n")
        note.write("- Should we always squash commits?\n")  # a question: no preference
    await consolidate(root, since=None, until=utcnow().date(), summariser=ExtractiveSummariser(), dry_run=False)
    agent = (root / "AGENT.md").read_text()
    assert "The user prefers short answers." in agent and "rather than long lists" in agent
    assert "squash" not in agent
