"""``memory-sidecar kg``: the graph without a server, on real files and a real kg.sqlite."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from sidecar.cli import main
from tests.support.memory import write


def run(*argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    code = main([*argv, "--json"], out=out, err=io.StringIO())
    return code, json.loads(out.getvalue())


def test_read_then_ask(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(root, "daily/2026-01-10.md", "## Database\nPostgreSQL 16 is the baseline.\n")
    write(root, "daily/2026-03-02.md", "We moved from PostgreSQL to CockroachDB on 2026-03-01.\n")
    code, read = run("kg", "read", "--memory-dir", str(root))
    assert code == 0 and read["facts_from_files"] == 3 and read["invalidated"] == 1
    code, again = run("kg", "read", "--memory-dir", str(root))
    assert again["facts_from_files"] == 0 and again["facts"] == 3  # unchanged files are not read again
    code, before = run("kg", "query", "--memory-dir", str(root), "--entity", "we", "--as-of", "2026-02-01")
    assert [f["object"] for f in before["facts"]] == ["PostgreSQL"]
    code, earlier = run("kg", "query", "--memory-dir", str(root), "--entity", "we", "--before", "CockroachDB")
    assert [f["object"] for f in earlier["facts"]] == ["PostgreSQL"]
    code, added = run("kg", "add", "--memory-dir", str(root), "--subject", "we", "--predicate", "uses",
                      "--object", "Spanner", "--valid-from", "2026-09-01")  # fmt: skip
    assert code == 0 and added["fact"]["object"] == "Spanner"
    code, timeline = run("kg", "timeline", "--memory-dir", str(root), "--entity", "we")
    assert [f["object"] for f in timeline["facts"]] == ["PostgreSQL", "CockroachDB", "Spanner"]
    assert [f["current"] for f in timeline["facts"]] == [False, False, True]


def test_a_bad_value_is_the_routes_error(tmp_path: Path) -> None:
    code, answer = run("kg", "query", "--memory-dir", str(tmp_path), "--entity", "we", "--as-of", "someday!!")
    assert code == 2 and answer["error"]["code"] == "invalid_as_of"
    code, answer = run("kg", "query", "--memory-dir", str(tmp_path), "--entity", "nobody")
    assert code == 2 and answer["error"]["code"] == "unknown_entity"
