"""``memory-sidecar remember``, ``recall``, ``forget`` and ``decay``: the agent's typed memories on its
journal, with no server. The commands run through the CLI's ``main`` in this process (the same
parsing, settings from the environment, output and exit status); one test runs them as a real
``memory-sidecar`` process, and the help is read from one."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from sidecar.cli import main
from sidecar.clock import utcnow
from sidecar.episodic.entry import MEMORY_TYPES, JournalEntry
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from tests.support.embedding import needs_model


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    root.mkdir()
    return root


def environment(root: Path, embedder: str) -> dict[str, str]:
    """The environment of a command on the memory dir ``root``: only the settings given here apply."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_SIDECAR_")}
    env.update(ORT_DISABLE_TELEMETRY="1", MEMORY_SIDECAR_EMBEDDER=embedder, MEMORY_SIDECAR_MEMORY_DIR=str(root))
    return env


def with_json(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The API's JSON (``--json``) unless a format is asked for."""
    return argv if {"--format", "-F", "--help"} & set(argv) else (*argv, "--json")


def cli(root: Path, *argv: str, embedder: str = "none") -> subprocess.CompletedProcess[str]:
    """``memory-sidecar ARGV`` on the memory dir ``root``, through the CLI's ``main`` in this process:
    its exit status, and what it wrote to stdout and stderr (argparse's refusals included)."""
    argv = with_json(argv)
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.dict(os.environ, environment(root, embedder), clear=True), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv), out=out, err=err)
        except SystemExit as exit:  # argparse refusing a command line
            code = exit.code if isinstance(exit.code, int) else 2
    return subprocess.CompletedProcess(["memory-sidecar", *argv], code, out.getvalue(), err.getvalue())


def cli_process(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``memory-sidecar ARGV`` as a real process (no embedder)."""
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *with_json(argv)],
        capture_output=True, text=True, env=environment(root, "none"), timeout=300,
    )  # fmt: skip


def ok(root: Path, *argv: str, embedder: str = "none") -> dict[str, Any]:
    proc = cli(root, *argv, embedder=embedder)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


def refused(proc: subprocess.CompletedProcess[str], code: str, status: int = 2) -> dict[str, Any]:
    """The API's error shape on stdout, with ``status`` and no traceback."""
    assert proc.returncode == status, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    error: dict[str, Any] = json.loads(proc.stdout)["error"]
    assert error["code"] == code, error
    return error


def test_remember_twice_under_one_topic_key_then_recall_serves_only_the_newer(memory: Path) -> None:
    first = ok(memory, "remember", "Deploys go to staging-2 first", "--topic-key", "deploy.target", "--tag", "ops")
    assert first["supersedes"] is None and first["memory_type"] == "fact" and first["crew"] is False
    second = ok(
        memory, "remember", "Deploys go to staging-3 first", "--topic-key", "deploy.target",
        "--type", "decision", "--priority", "8", "--tag", "ops", "--ttl", "3600",
    )  # fmt: skip
    assert second["supersedes"] == first["id"] and second["memory_type"] == "decision"
    assert second["expires_at"] is not None
    answer = ok(memory, "recall", "deploys staging", "--explain")
    assert (answer["scope"], answer["dense"]) == ("own", "no_embedder")
    assert [h["id"] for h in answer["hits"]] == [second["id"]]
    hit = answer["hits"][0]
    assert hit["content"] == "Deploys go to staging-3 first" and hit["tags"] == ["ops"] and hit["priority"] == 8
    assert hit["via"] == "bm25" and hit["explain"]["similarity_source"] == "bm25_rank"
    assert ok(memory, "recall", "deploys", "--type", "fact")["hits"] == [], "only the asked types"
    assert ok(memory, "recall", "deploys", "--tag", "other")["hits"] == [], "only the asked tags"


def test_recall_prints_a_numbered_list_with_format_text(memory: Path) -> None:
    ok(memory, "remember", "The invoice export uses a server-side cursor", "--topic-key", "export")
    ok(memory, "remember", "Invoice numbers never repeat across years")
    proc = cli(memory, "recall", "invoice", "--format", "text", "--scoring", "activation")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "2 memories (activation scoring, BM25 only: no embedder)"
    assert lines[1].startswith("1. [fact] ") and lines[3].startswith("2. [fact] ")
    assert "via bm25" in lines[2] and "topic export" in proc.stdout


def test_forget_by_topic_key_removes_the_memory_and_its_history(memory: Path) -> None:
    first = ok(memory, "remember", "The build cache lives on /var/cache/build", "--topic-key", "build.cache")
    second = ok(memory, "remember", "The build cache lives on /srv/cache", "--topic-key", "build.cache")
    kept = ok(memory, "remember", "The build runs on four cores")
    forgotten = ok(memory, "forget", "--topic-key", "build.cache")["forgotten"]
    assert sorted(forgotten) == sorted([first["id"], second["id"]])
    assert [h["id"] for h in ok(memory, "recall", "build cache")["hits"]] == [kept["id"]]
    error = refused(cli(memory, "forget", "--topic-key", "build.cache"), "not_found", status=1)
    assert "build.cache" in error["message"]
    assert ok(memory, "forget", "--id", kept["id"])["forgotten"] == [kept["id"]]
    assert ok(memory, "recall", "build")["hits"] == []


def test_a_namespace_keeps_its_memories_to_itself(memory: Path) -> None:
    ok(memory, "remember", "Quarterly planning starts in March", "--namespace", "planning")
    assert ok(memory, "recall", "quarterly planning")["hits"] == []
    assert len(ok(memory, "recall", "quarterly planning", "--namespace", "planning")["hits"]) == 1
    refused(cli(memory, "forget", "--topic-key", "nothing", "--namespace", "planning"), "not_found", status=1)


async def _remember_long_ago(root: Path, content: str, days: float) -> str:
    """A memory written ``days`` ago (the commands cannot back-date one)."""
    store = await SqliteJournalStore.open(root / JOURNAL_FILE)
    try:
        entry = JournalEntry(
            workspace_id="default", agent_id="agent", entry_type="memory.fact", summary=content,
            memory_type="fact", priority=5, ts=utcnow() - timedelta(days=days),
        )  # fmt: skip
        return (await store.append(entry)).id
    finally:
        await store.aclose()


def test_decay_lists_memories_weakest_first_with_their_fields(memory: Path) -> None:
    fresh = ok(memory, "remember", "Use PostgreSQL 16 for every new database " * 5, "--priority", "9")
    old = asyncio.run(_remember_long_ago(memory, "The office wifi password changed in spring", 30))
    ok(memory, "remember", "Lint with ruff before every commit", "--ttl", "86400", "--type", "workflow")
    answer = ok(memory, "decay")
    assert answer["total"] == 3 and answer["namespace"] == "default"
    rows = answer["memories"]
    assert rows[0]["id"] == old and rows[0]["retention"] < 0.05, "a month untouched: faded the most"
    assert [r["retention"] for r in rows] == sorted(r["retention"] for r in rows)
    assert rows[0]["age_seconds"] > 29 * 86400
    for row in rows:
        assert {"id", "memory_type", "content", "importance", "retention", "frequency", "access_count"} <= set(row)
        assert {"age_seconds", "expires_at"} <= set(row) and len(row["content"]) <= 80
    long = next(r for r in rows if r["id"] == fresh["id"])
    assert long["content"].startswith("Use PostgreSQL 16") and long["content"].endswith("…")
    assert long["importance"] > rows[0]["importance"], "priority 9 seeds more importance than 5"
    timed = next(r for r in rows if r["memory_type"] == "workflow")
    assert timed["expires_at"] is not None and long["expires_at"] is None
    limited = ok(memory, "decay", "--limit", "1")
    assert (limited["total"], [r["id"] for r in limited["memories"]]) == (3, [old])
    ok(memory, "recall", "wifi password")  # a recall touches it: it is fresh again
    again = {r["id"]: r for r in ok(memory, "decay")["memories"]}
    assert again[old]["access_count"] == 1 and again[old]["retention"] > 0.99
    table = cli(memory, "decay", "-F", "text").stdout.splitlines()
    assert table[0].split()[:3] == ["retention", "importance", "freq"] and len(table) == 4
    refused(cli(memory, "decay", "--limit", "0"), "invalid_limit")


def test_decay_of_an_empty_journal(memory: Path) -> None:
    assert ok(memory, "decay")["memories"] == []
    assert cli(memory, "decay", "--format", "text").stdout == "no memories\n"


def test_bad_input_is_a_clear_error_not_a_traceback(memory: Path) -> None:
    for bad in ("11", "0", "high", "5.5"):
        error = refused(cli(memory, "remember", "x", "--priority", bad), "invalid_priority")
        assert error["message"] == "priority must be an integer from 1 to 10"
    assert not (memory / JOURNAL_FILE).exists(), "refused before the journal is touched"
    refused(cli(memory, "remember", "x", "--type", "opinion"), "invalid_memory_type")
    refused(cli(memory, "remember", "   "), "invalid_content")
    refused(cli(memory, "remember", "x", "--ttl", "soon"), "invalid_ttl_seconds")
    refused(cli(memory, "remember", "x", "--expires-at", "2001-01-01T00:00:00Z"), "invalid_expires_at")
    refused(cli(memory, "remember", "x", "--namespace", "no spaces"), "invalid_namespace")
    refused(cli(memory, "recall", "x", "--k", "0"), "invalid_k")
    refused(cli(memory, "recall", "x", "--type", "opinion"), "invalid_memory_types")
    refused(cli(memory, "forget", "--id", "not an id"), "invalid_id")
    both = cli(memory, "remember", "x", "--ttl", "60", "--expires-at", "2100-01-01T00:00:00Z")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr and "Traceback" not in both.stderr
    missing = memory.parent / "nowhere"
    error = refused(cli(missing, "remember", "x"), "tier_dir_missing")
    assert str(missing) in error["message"] and not missing.exists(), "a memory dir is never made here"


def test_recall_of_a_made_up_word_finds_nothing(memory: Path) -> None:
    ok(memory, "remember", "The staging cluster runs on three nodes")
    assert ok(memory, "recall", "zqxjvwk")["hits"] == []
    proc = cli(memory, "recall", "zqxjvwk", "--format", "text")
    assert (proc.returncode, proc.stdout) == (0, "no results\n")


@pytest.mark.slow
def test_the_commands_as_a_real_process(memory: Path) -> None:
    """What the in-process runs above cannot show: the installed entry point, its exit status and
    its stdout, with nothing else on either stream."""
    made = cli_process(memory, "remember", "The staging cluster runs on three nodes", "--topic-key", "staging")
    assert (made.returncode, made.stderr) == (0, ""), made.stderr
    memory_id = json.loads(made.stdout)["id"]
    found = cli_process(memory, "recall", "staging cluster")
    assert (found.returncode, found.stderr) == (0, ""), found.stderr
    assert [h["id"] for h in json.loads(found.stdout)["hits"]] == [memory_id]
    refused(cli_process(memory, "remember", "x", "--priority", "11"), "invalid_priority")
    missing = cli_process(memory, "forget", "--topic-key", "nothing")
    refused(missing, "not_found", status=1)
    forgotten = cli_process(memory, "forget", "--topic-key", "staging", "--format", "text")
    assert forgotten.returncode == 0 and memory_id in forgotten.stdout and "Traceback" not in forgotten.stderr


def test_help_names_every_memory_type_and_where_the_crew_memories_are() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "sidecar", "remember", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert all(t in text for t in MEMORY_TYPES), text
    assert "own memories" in text and "running sidecar" in text


@needs_model
def test_recall_with_the_in_process_model_finds_a_paraphrase(memory: Path) -> None:
    db = ok(memory, "remember", "The production database is PostgreSQL 16 on host db-7", embedder="onnx")
    ok(memory, "remember", "Team lunch is on Fridays", embedder="onnx")
    answer = ok(memory, "recall", "which postgres version do we run", "--explain", embedder="onnx")
    assert answer["dense"] == "ok"
    assert [h["id"] for h in answer["hits"]] == [db["id"]], "no word in common: the vector found it"
    assert answer["hits"][0]["via"] == "dense" and answer["hits"][0]["explain"]["similarity_source"] == "cosine"
    assert ok(memory, "recall", "which postgres version do we run")["dense"] == "no_embedder"
