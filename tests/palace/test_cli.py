"""``memory-sidecar palace ...`` on real files, no server: the same operations as the routes.

The first command runs in a process of its own, as it is used (it configures logging for the
process); the rest run through the same entry point in this process (``sidecar.cli.main``), which
spares a Python start-up each."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from sidecar.cli import main
from tests.support.memory import write
from tests.support.palace import load_conversation
from tests.support.procs import run_sidecar


def process(*argv: str) -> tuple[int, str]:
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("MEMORY_SIDECAR_")}
    proc = run_sidecar(*argv, env=env, timeout=60)
    return proc.returncode, proc.stdout


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(list(argv), out=out, err=io.StringIO()), out.getvalue()


def test_palace_commands_work_on_the_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("MEMORY_SIDECAR_")]:
        monkeypatch.delenv(name)  # as the process's environment is
    mem = tmp_path / "memory"
    write(mem, "AGENT.md", "# Notes\nUse PostgreSQL 16.\n\n## Old\nobsolete advice\n")
    where = ("--memory-dir", str(mem))
    code, out = process("palace", "list", *where, "-F", "json")
    assert code == 0 and [f["path"] for f in json.loads(out)["files"]] == ["AGENT.md"]
    code, out = run("palace", "taxonomy", *where)
    assert code == 0 and out.strip() == "agent: evergreen (1 files)"
    code, out = run("palace", "delete", "AGENT.md", "--heading", "Old", *where)
    assert code == 0 and (mem / "AGENT.md").read_text() == "# Notes\nUse PostgreSQL 16.\n\n"
    code, out = run("palace", "identity", "I am the billing agent.", *where)
    assert code == 0 and (mem / "identity.md").read_text() == "I am the billing agent.\n"
    assert run("palace", "diary", "write", "Fixed the export.", *where)[0] == 0
    code, out = run("palace", "diary", "read", *where, "-F", "json")
    assert code == 0 and [e["content"] for e in json.loads(out)["entries"]] == ["Fixed the export."]
    turns = tmp_path / "turns.jsonl"
    turns.write_text("\n".join(json.dumps({"role": t.role, "content": t.content}) for t in load_conversation()))
    code, out = run("palace", "ingest", str(turns), "--dry-run", *where, "-F", "json")
    assert code == 0 and json.loads(out)["dry_run"] is True and json.loads(out)["counts"]["kept"] > 60
    (mem / "memory.toml").write_text("budget = 'big'\n")
    code, out = run("palace", "settings", *where)
    assert code == 0 and "budget must be an integer" in out
    code, out = run("palace", "delete", "nope.md", *where, "--json")
    assert code == 2 and json.loads(out)["error"]["code"] == "file_not_found"
