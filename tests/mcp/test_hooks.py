"""The Claude Code hook command driven as Claude Code drives it (the event as JSON on stdin, a real
process) against a real sidecar, with a recorded Claude Code transcript: the session's memories are
written at its end, and the next session's start receives them in the block. The sidecar is the
whole application on a loopback port, served from a thread of the test process
(``tests/support/served.py``): these tests are about the hook's process, not the sidecar's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.procs import free_port
from tests.support.served import ServedApp, served_app

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPT = ROOT / "tests" / "data" / "claude_code_session.jsonl"
SESSION = "3f2b9c1e-7d4a-4e8b-9a61-2c5d8e0f1a73"


@pytest.fixture
def sidecar(memory_dir: Path) -> Iterator[ServedApp]:
    with served_app(memory_dir) as side:
        yield side


def hook(url: str, event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar.mcp.hooks", "--url", url],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        timeout=60,
    )


def event(name: str, tmp_path: Path, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(tmp_path / "session.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": name,
        **fields,
    }


def memories(url: str) -> list[str]:
    found = httpx.get(f"{url}/memory/memories", params={"workspace_id": "default", "limit": 100}).json()
    return sorted(m["summary"] for m in found["memories"])


def test_a_session_is_ingested_at_its_end_and_the_next_one_starts_with_it(
    sidecar: ServedApp, memory_dir: Path, tmp_path: Path
) -> None:
    shutil.copy(TRANSCRIPT, tmp_path / "session.jsonl")
    ended = hook(sidecar.url, event("SessionEnd", tmp_path, reason="exit"))
    assert ended.returncode == 0 and ended.stdout == "", ended.stderr
    kept = memories(sidecar.url)
    assert any("billing-stg-2" in m for m in kept), kept
    assert any("imperative mood" in m for m in kept) and any("CSV format" in m for m in kept)
    assert not any(
        "Subagent" in m or "ok thanks" in m or "cron.yaml'" in m for m in kept
    )  # side chains, chatter, tool output
    daily = memory_dir / "daily" / f"{datetime.now(UTC).date().isoformat()}.md"
    assert "nightly job at 02:00 UTC" in daily.read_text()

    again = hook(sidecar.url, event("PreCompact", tmp_path, trigger="auto", custom_instructions=""))
    assert again.returncode == 0, again.stderr
    assert memories(sidecar.url) == kept  # the same turns a second time keep nothing twice
    assert daily.read_text().count("nightly job at 02:00 UTC") == 1

    started = hook(sidecar.url, event("SessionStart", tmp_path, session_id="next-session", source="startup"))
    assert started.returncode == 0, started.stderr
    assert "[AGENT MEMORY]" in started.stdout and "billing-stg-2" in started.stdout, started.stdout

    asked = hook(sidecar.url, event("UserPromptSubmit", tmp_path, prompt="Which database do staging tests use?"))
    assert asked.returncode == 0 and "billing-stg-2" in asked.stdout, asked.stdout
    assert "[ESSENTIAL MEMORIES]" not in asked.stdout  # what the prompt recalls, not the whole block again
    long = "Which database do staging tests use? " + "Also consider the rest of the plan. " * 400
    asked_long = hook(sidecar.url, event("UserPromptSubmit", tmp_path, prompt=long))
    assert asked_long.returncode == 0 and "billing-stg-2" in asked_long.stdout, asked_long.stderr
    trivial = hook(sidecar.url, event("UserPromptSubmit", tmp_path, prompt="ok"))
    assert trivial.returncode == 0 and trivial.stdout == ""


def test_a_sidecar_that_is_down_never_breaks_the_session(tmp_path: Path) -> None:
    shutil.copy(TRANSCRIPT, tmp_path / "session.jsonl")
    for name in ("SessionStart", "UserPromptSubmit", "SessionEnd"):
        done = hook(f"http://127.0.0.1:{free_port()}", event(name, tmp_path, prompt="what database?"))
        assert done.returncode == 0 and done.stdout == "", done
        assert done.stderr.startswith("memory-sidecar-hook: ")


def test_memory_off_is_said_on_stderr_and_nothing_is_kept(memory_dir: Path, tmp_path: Path) -> None:
    shutil.copy(TRANSCRIPT, tmp_path / "session.jsonl")
    with served_app(memory_dir, memory_enabled=False) as side:
        done = hook(side.url, event("SessionEnd", tmp_path, reason="exit"))
        started = hook(side.url, event("SessionStart", tmp_path, source="startup"))
    assert done.returncode == 0 and "memory_disabled" in done.stderr
    assert started.returncode == 0 and started.stdout == ""


def test_the_recipe_runs_the_shipped_command_for_every_event() -> None:
    recipe = json.loads((ROOT / "examples" / "claude-code" / "settings.json").read_text())
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["memory-sidecar-hook"] == "sidecar.mcp.hooks:main"
    assert set(recipe["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd"}
    for entries in recipe["hooks"].values():
        assert [h["command"] for e in entries for h in e["hooks"]] == ["memory-sidecar-hook"]


def test_the_hook_sends_the_api_token_from_the_flag_or_the_environment(memory_dir: Path, tmp_path: Path) -> None:
    token = "hook-token"
    with served_app(memory_dir, api_token=token) as side:
        start = event("SessionStart", tmp_path, source="startup")
        refused = hook(side.url, start)
        assert refused.returncode == 0 and refused.stdout == ""  # never in the session's way
        assert "401 unauthorized" in refused.stderr
        by_flag = subprocess.run(
            [sys.executable, "-m", "sidecar.mcp.hooks", "--url", side.url, "--api-token", token],
            input=json.dumps(start),
            capture_output=True,
            text=True,
            timeout=60,
        )
        by_env = subprocess.run(
            [sys.executable, "-m", "sidecar.mcp.hooks", "--url", side.url],
            input=json.dumps(start),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "MEMORY_SIDECAR_API_TOKEN": token},
        )
    for done in (by_flag, by_env):
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert "researcher" in done.stdout  # the block, with the agent's identity from AGENT.md


def test_a_prompt_s_hook_process_loads_neither_httpx_nor_the_ingest_rules(sidecar: ServedApp, tmp_path: Path) -> None:
    # Claude Code starts the hook on every prompt: what it imports is paid each time.
    loaded = tmp_path / "modules.json"
    script = (
        "import json, sys\n"
        "from sidecar.mcp.hooks import main\n"
        "status = main(sys.argv[2:])\n"
        "open(sys.argv[1], 'w').write(json.dumps(sorted(n for n, m in sys.modules.items() if m is not None)))\n"
        "sys.exit(status)\n"
    )
    asked = subprocess.run(
        [sys.executable, "-c", script, str(loaded), "--url", sidecar.url],
        input=json.dumps(event("UserPromptSubmit", tmp_path, prompt="Which database do staging tests use?")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert asked.returncode == 0 and asked.stderr == "", asked.stderr
    modules = set(json.loads(loaded.read_text()))
    assert "sidecar.mcp.hooks" in modules
    assert not {"httpx", "ssl", "http.client", "sidecar.palace.ingest", "sidecar.palace.classify"} & modules
