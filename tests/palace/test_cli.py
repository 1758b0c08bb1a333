"""``memory-sidecar palace ...`` on real files, no server: the same operations as the routes.

Each command runs in its own process, as it is used (it configures logging for the process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.memory import write
from tests.support.palace import load_conversation


def run(*argv: str) -> tuple[int, str]:
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    env = {k: v for k, v in env.items() if not k.startswith("MEMORY_SIDECAR_")}
    proc = subprocess.run([sys.executable, "-m", "sidecar", *argv], capture_output=True, text=True, env=env, timeout=60)
    return proc.returncode, proc.stdout


def test_palace_commands_work_on_the_files(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    write(mem, "AGENT.md", "# Notes\nUse PostgreSQL 16.\n\n## Old\nobsolete advice\n")
    where = ("--memory-dir", str(mem))
    code, out = run("palace", "list", *where, "-F", "json")
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
