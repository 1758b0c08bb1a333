"""The CLI works on the files directly, no server needed."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sidecar.cli import main
from tests.support.memory import write


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def test_search_json_format(memory_dir: Path) -> None:
    code, out = run("search", "invoices", "-p", str(memory_dir), "-F", "json")
    assert code == 0
    results = json.loads(out)["results"]
    assert results[0]["path"] == "daily/2026-05-14.md" and results[0]["source"] == "agent"


def test_search_table_format(memory_dir: Path) -> None:
    code, out = run("search", "screenshot", "--path", str(memory_dir), "--limit", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["score", "where", "snippet"]
    assert len(lines) == 2 and "AGENT.md:5-6" in lines[1]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_search_table_shows_the_match_in_bold_on_a_terminal(memory_dir: Path) -> None:
    write(memory_dir, "topics/long.md", "# Long\n" + "filler words " * 40 + "the quokka lives here " + "more " * 40)
    out = Terminal()
    assert main(["search", "quokka", "-p", str(memory_dir)], out=out) == 0
    row = out.getvalue().splitlines()[1]
    assert "\x1b[1mquokka\x1b[0m" in row and "topics/long.md" in row
    code, plain = run("search", "quokka", "-p", str(memory_dir))
    assert code == 0 and "quokka" in plain and "\x1b[" not in plain


def test_search_with_no_hits_says_so(memory_dir: Path) -> None:
    assert run("search", "zzzzqqq", "-p", str(memory_dir)) == (0, "no results\n")


def test_status_and_reindex(memory_dir: Path) -> None:
    code, out = run("status", "-p", str(memory_dir), "-F", "json")
    assert code == 0 and json.loads(out)["files"] == 2
    write(memory_dir, "topics/x.md", "# X\nquokka\n")
    code, out = run("reindex", "-p", str(memory_dir), "-F", "json")
    status = json.loads(out)
    assert status["files"] == 3 and status["last_reindex"]["kind"] == "rebuild"
    code, out = run("status", "-p", str(memory_dir))
    assert "files          3" in out


def test_reindex_refuses_a_tier_a_sidecar_serves(memory_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from sidecar.server.lock import TierLock

    held = TierLock.take(memory_dir)  # what a running sidecar holds, taken in this process
    try:
        assert run("reindex", "-p", str(memory_dir)) == (2, "")
        assert "POST /memory/reindex" in capsys.readouterr().err
    finally:
        held.release()
    assert run("reindex", "-p", str(memory_dir), "-F", "json")[0] == 0


def test_crew_scope_uses_the_given_path(tmp_path: Path) -> None:
    crew = tmp_path / "crew"
    write(crew, "CREW.md", "# Conventions\nTailwind only, never inline styles.\n")
    code, out = run("search", "tailwind", "-S", "crew", "-p", str(crew), "-F", "json")
    assert code == 0
    assert json.loads(out)["results"][0]["source"] == "crew"


def test_bad_input_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "MEMORY_SIDECAR_MEMORY_DIR": str(tmp_path / "nope")}
    proc = subprocess.run(
        [sys.executable, "-m", "sidecar", "search", "x"], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 2 and "no such memory dir" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "sidecar", "search", "   ", "-p", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "must not be empty" in proc.stderr


def test_memory_dir_from_the_environment(memory_dir: Path) -> None:
    env = {**os.environ, "MEMORY_SIDECAR_MEMORY_DIR": str(memory_dir)}
    proc = subprocess.run(
        [sys.executable, "-m", "sidecar", "search", "invoices", "-F", "json"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["path"] == "daily/2026-05-14.md"
