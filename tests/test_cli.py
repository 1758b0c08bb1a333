"""The CLI works on the files directly, no server needed."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from sidecar.cli import main
from sidecar.http.state import SIDECAR
from sidecar.index.tier_index import INDEX_NAME
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.onnx import MODEL_ID
from sidecar.retrieval.vectors import VectorIndex
from tests.support.corpus import make_corpus
from tests.support.embedding import needs_model
from tests.support.memory import ClientFactory, write
from tests.support.procs import run_sidecar
from tests.support.waiting import async_wait_until


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
    assert code == 0 and "files: 3" in out.splitlines() and "  count: 0" in out.splitlines()  # skipped: count
    assert "{" not in out and "[" not in out  # text for a person: no Python reprs, no JSON


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
    proc = run_sidecar("search", "x", env=env, timeout=60)
    assert proc.returncode == 2 and "no such memory dir" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_sidecar("search", "   ", "-p", str(tmp_path), timeout=60)
    assert proc.returncode == 2 and "must not be empty" in proc.stderr


def test_memory_dir_from_the_environment(memory_dir: Path) -> None:
    env = {**os.environ, "MEMORY_SIDECAR_MEMORY_DIR": str(memory_dir)}
    proc = run_sidecar("search", "invoices", "-F", "json", env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["path"] == "daily/2026-05-14.md"


def cli(*argv: str, embedder: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``memory-sidecar ARGV`` as a real process; stderr is a file there, not a terminal."""
    full = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "MEMORY_SIDECAR_EMBEDDER": embedder, **env}
    return run_sidecar(*argv, env=full, timeout=600)


@pytest.mark.slow  # a whole tier embedded, then a sidecar started over it: ~3.2 s of CPU
@needs_model
async def test_reindex_embed_stores_every_vector_where_the_server_finds_it(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    make_corpus(root, 40, para_chars=200, seed=9)
    proc = await asyncio.to_thread(cli, "reindex", "--embed", "-p", str(root), "-F", "json", embedder="onnx")
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    chunks = status["chunks"]
    assert status["last_reindex"]["kind"] == "rebuild"
    assert status["embedder"] == {"model": MODEL_ID, "vectors": chunks, "backlog": 0}
    lines = proc.stderr.splitlines()
    assert re.fullmatch(r"embedding: \d+/\d+ chunks  [\d.]+ chunks/s  ETA \d+(m\d\d)?s", lines[0]), lines
    assert lines[-2].startswith(f"embedding: {chunks}/{chunks} chunks") and lines[-1].startswith(
        f"embedded {chunks} chunks in "
    )
    assert "\r" not in proc.stderr and "\x1b[" not in proc.stderr, "plain lines when stderr is not a terminal"
    stored = VectorIndex(root / INDEX_NAME, MODEL_ID, 384)
    stored.refresh()
    assert (stored.size, stored.backlog) == (chunks, 0)
    with sqlite3.connect(root / INDEX_NAME) as conn:
        hashes = [h for (h,) in conn.execute("SELECT hash FROM chunks WHERE body != ''")]
    assert hashes and sorted(stored.sentence_vectors(hashes)) == sorted(set(hashes)), "as the server stores them"
    stored.close()
    # A sidecar started afterwards serves those vectors and embeds only what is new.
    client = await sidecar_client(embedder="onnx", memory_dir=str(root))
    note = {"path": "topics/new.md", "content": "# New\nThe quokka moved to the staging cluster.\n", "mode": "replace"}
    assert (await client.post("/memory/write", json=note)).status == 201

    async def served() -> dict[str, Any] | None:
        embedder: dict[str, Any] = (await (await client.get("/memory/status")).json())["embedder"]
        return embedder if embedder["backlog"] == 0 and embedder["vectors"] > chunks else None

    after = await async_wait_until(served, timeout=120)
    batcher = client.server.app[SIDECAR].batcher
    assert batcher is not None and batcher.embedded == after["vectors"] - chunks >= 1


@needs_model
def test_reindex_embed_draws_a_bar_on_a_terminal(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "onnx")
    out, err = io.StringIO(), Terminal()
    assert main(["reindex", "--embed", "-p", str(memory_dir), "-F", "json"], out=out, err=err) == 0
    chunks = json.loads(out.getvalue())["embedder"]["vectors"]
    drawn = err.getvalue()
    assert f"\r[{'#' * 30}] {chunks}/{chunks} chunks  " in drawn and "chunks/s  ETA " in drawn
    assert drawn.endswith(f"\nembedded {chunks} chunks in " + drawn.rsplit(" in ", 1)[1])
    again = Terminal()
    assert main(["reindex", "--embed", "-p", str(memory_dir)], out=io.StringIO(), err=again) == 0
    assert again.getvalue().startswith("embedded 0 chunks"), "nothing left to embed: no bar"


def test_reindex_embed_without_an_embedder_is_one_clear_line(memory_dir: Path) -> None:
    proc = cli("reindex", "--embed", "-p", str(memory_dir), embedder="none")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "memory-sidecar: reindex --embed needs an embedder, and MEMORY_SIDECAR_EMBEDDER is none (no_embedder)\n"
    )
    assert not (memory_dir / INDEX_NAME).exists(), "refused before touching the index"


def test_reindex_embed_without_the_model_installed(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Stands in for an install without [embed], which this virtualenv cannot be.
    monkeypatch.setattr(OnnxEmbedder, "available", staticmethod(lambda: False))
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "auto")
    err = io.StringIO()
    assert main(["reindex", "--embed", "-p", str(memory_dir)], out=io.StringIO(), err=err) == 2
    assert err.getvalue().count("\n") == 1 and "pip install 'memory-sidecar[embed]'" in err.getvalue()
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "onnx")
    err = io.StringIO()
    assert main(["reindex", "--embed", "-p", str(memory_dir)], out=io.StringIO(), err=err) == 2
    assert err.getvalue().startswith("memory-sidecar: --embedder onnx needs the in-process model")
    assert run("reindex", "-p", str(memory_dir))[0] == 0, "the tier's lock was let go"


def test_reindex_embed_refuses_a_tier_a_sidecar_serves(memory_dir: Path) -> None:
    from sidecar.server.lock import TierLock

    held = TierLock.take(memory_dir)
    try:
        err = io.StringIO()
        assert main(["reindex", "--embed", "-p", str(memory_dir)], out=io.StringIO(), err=err) == 2
        assert "POST /memory/reindex" in err.getvalue()
    finally:
        held.release()


class FakeOllama:
    """A real HTTP server answering like Ollama's /api/embed, with 8-wide vectors made from each text
    (a remote embedder: Ollama itself cannot run here)."""

    def __init__(self) -> None:
        self.inputs: list[str] = []

    async def embed(self, request: web.Request) -> web.Response:
        texts = (await request.json())["input"]
        self.inputs += texts
        rows = [[float(b) + 1 for b in hashlib.sha256(t.encode()).digest()[:8]] for t in texts]
        return web.json_response({"embeddings": rows})


async def test_reindex_embed_through_a_remote_embedder(aiohttp_server: Any, memory_dir: Path) -> None:
    fake = FakeOllama()
    app = web.Application()
    app.router.add_post("/api/embed", fake.embed)
    server = await aiohttp_server(app)
    host = f"http://127.0.0.1:{server.port}"
    proc = await asyncio.to_thread(
        cli, "reindex", "--embed", "-p", str(memory_dir), "-F", "json", embedder="ollama",
        MEMORY_SIDECAR_OLLAMA_HOST=host, MEMORY_SIDECAR_OLLAMA_MODEL="fake",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["embedder"] == {"model": "ollama:fake", "vectors": status["chunks"], "backlog": 0}
    assert len(fake.inputs) == status["chunks"]
    stored = VectorIndex(memory_dir / INDEX_NAME, "ollama:fake")
    stored.refresh()
    assert (stored.size, stored.dim, stored.backlog) == (status["chunks"], 8, 0)
    stored.close()


def test_version_names_the_installed_package() -> None:
    from importlib.metadata import version

    out = subprocess.run(
        [sys.executable, "-m", "sidecar", "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == f"memory-sidecar {version('memory-sidecar')}"


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "postgres", "-p", "{dir}"],
        ["remember", "Using Go for the API", "--memory-dir", "{dir}"],
        ["recall", "API", "--memory-dir", "{dir}"],
        ["consolidate", "run", "--memory-dir", "{dir}"],
    ],
    ids=lambda argv: argv[0],
)
def test_memory_off_refuses_every_memory_command(memory_dir: Path, argv: list[str]) -> None:
    (memory_dir / "memory.toml").write_text("memory = false\n")
    before = sorted(p.name for p in memory_dir.rglob("*"))
    out, err = io.StringIO(), io.StringIO()
    assert main([a.replace("{dir}", str(memory_dir)) for a in argv], out=out, err=err) == 2
    assert "memory is off" in err.getvalue() and out.getvalue() == ""
    assert sorted(p.name for p in memory_dir.rglob("*")) == before  # nothing indexed, nothing written


def test_a_full_disk_is_one_line_not_a_traceback(memory_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk cannot be made here for one command, so the consolidation's run raises what the
    kernel would (ENOSPC): a stand-in for that fault only."""
    import errno

    from sidecar.consolidate import runner

    async def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(memory_dir / "daily"))

    monkeypatch.setattr(runner, "run_consolidation", full)
    out, err = io.StringIO(), io.StringIO()
    assert main(["consolidate", "run", "--memory-dir", str(memory_dir)], out=out, err=err) == 1  # a failure
    assert err.getvalue().startswith("memory-sidecar: No space left on device") and "Traceback" not in err.getvalue()


# -- one output convention -------------------------------------------------------------------------
#: Every command but serve and mcp (which speak protocols): what to set up, a run that answers, and a
#: request with a mistake in it with the code the API gives it. {dir} is the agent's memory dir,
#: {crew} a crew dir, {turns} a file of conversation turns, {fact} the id of a fact in the graph.
VERBS: dict[str, tuple[list[str], list[str], list[str] | None, str | None]] = {
    "search": ([], ["search", "postgres", "-p", "{dir}"], ["search", "   ", "-p", "{dir}"], "empty_query"),
    "reindex": ([], ["reindex", "-p", "{dir}"], ["reindex", "-p", "{dir}/nowhere"], "tier_missing"),
    "status": ([], ["status", "-p", "{dir}"], ["status", "-p", "{dir}/nowhere"], "tier_missing"),
    "health": (
        [],
        ["health", "--workspace-id", "default", "--recompute", "--memory-dir", "{dir}"],
        ["health", "--workspace-id", "no spaces", "--memory-dir", "{dir}"],
        "invalid_workspace_id",
    ),
    "remember": (
        [],
        ["remember", "Deploys go out on Tuesdays", "--memory-dir", "{dir}"],
        ["remember", "x", "--priority", "99", "--memory-dir", "{dir}"],
        "invalid_priority",
    ),
    "recall": (
        ["remember", "Deploys go out on Tuesdays", "--memory-dir", "{dir}"],
        ["recall", "deploys", "--memory-dir", "{dir}"],
        ["recall", "deploys", "--k", "0", "--memory-dir", "{dir}"],
        "invalid_k",
    ),
    "forget": (
        ["remember", "Sprint 43", "--topic-key", "sprint", "--memory-dir", "{dir}"],
        ["forget", "--topic-key", "sprint", "--memory-dir", "{dir}"],
        ["forget", "--id", "not an id", "--memory-dir", "{dir}"],
        "invalid_id",
    ),
    "decay": (
        ["remember", "Deploys go out on Tuesdays", "--memory-dir", "{dir}"],
        ["decay", "--memory-dir", "{dir}"],
        ["decay", "--limit", "0", "--memory-dir", "{dir}"],
        "invalid_limit",
    ),
    "consolidate run": (
        [],
        ["consolidate", "run", "--memory-dir", "{dir}", "--crew-dir", "{crew}", "--dry-run"],
        ["consolidate", "run", "--memory-dir", "{dir}", "--since", "last week"],
        "invalid_since",
    ),
    "kg read": ([], ["kg", "read", "--memory-dir", "{dir}"], None, None),
    "kg add": (
        [],
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", "{dir}"],
        ["kg", "add", "--subject", "we", "--predicate", "use", "--memory-dir", "{dir}"],
        "missing_object",
    ),
    "kg query": (
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", "{dir}"],
        ["kg", "query", "--entity", "we", "--memory-dir", "{dir}"],
        ["kg", "query", "--entity", "we", "--as-of", "someday!!", "--memory-dir", "{dir}"],
        "invalid_as_of",
    ),
    "kg invalidate": (
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", "{dir}"],
        ["kg", "invalidate", "--fact-id", "{fact}", "--memory-dir", "{dir}"],
        ["kg", "invalidate", "--memory-dir", "{dir}"],
        None,
    ),
    "kg timeline": (
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", "{dir}"],
        ["kg", "timeline", "--entity", "we", "--memory-dir", "{dir}"],
        ["kg", "timeline", "--entity", "nobody", "--memory-dir", "{dir}"],
        "unknown_entity",
    ),
    "kg traverse": (
        ["kg", "add", "--subject", "we", "--predicate", "use", "--object", "Go", "--memory-dir", "{dir}"],
        ["kg", "traverse", "--entity", "we", "--memory-dir", "{dir}"],
        ["kg", "traverse", "--entity", "nobody", "--memory-dir", "{dir}"],
        "unknown_entity",
    ),
    "kg tunnels": (
        [],
        ["kg", "tunnels", "--memory-dir", "{dir}"],
        ["kg", "tunnels", "--limit", "0", "--memory-dir", "{dir}"],
        "invalid_limit",
    ),
    "kg stats": ([], ["kg", "stats", "--memory-dir", "{dir}"], None, None),
    "palace list": (
        [],
        ["palace", "list", "--memory-dir", "{dir}"],
        ["palace", "list", "--memory-dir", "{dir}/nowhere"],
        "tier_missing",
    ),
    "palace taxonomy": ([], ["palace", "taxonomy", "--memory-dir", "{dir}"], None, None),
    "palace delete": (
        [],
        ["palace", "delete", "daily/2026-05-14.md", "--memory-dir", "{dir}"],
        ["palace", "delete", "nope.md", "--memory-dir", "{dir}"],
        "file_not_found",
    ),
    "palace identity": (
        [],
        ["palace", "identity", "I am Ledger, the billing agent.", "--memory-dir", "{dir}"],
        ["palace", "identity", "x" * 3000, "--memory-dir", "{dir}"],
        "identity_too_long",
    ),
    "palace diary write": (
        [],
        ["palace", "diary", "write", "Moved the export to 02:00 UTC.", "--memory-dir", "{dir}"],
        ["palace", "diary", "write", "   ", "--memory-dir", "{dir}"],
        None,
    ),
    "palace diary read": (
        ["palace", "diary", "write", "Moved the export to 02:00 UTC.", "--memory-dir", "{dir}"],
        ["palace", "diary", "read", "--memory-dir", "{dir}"],
        ["palace", "diary", "read", "--limit", "0", "--memory-dir", "{dir}"],
        None,
    ),
    "palace ingest": (
        [],
        ["palace", "ingest", "{turns}", "--memory-dir", "{dir}"],
        ["palace", "ingest", "{dir}/AGENT.md", "--memory-dir", "{dir}"],
        "invalid_turns",
    ),
    "palace settings": ([], ["palace", "settings", "--memory-dir", "{dir}"], None, None),
    # A run that copies into a store needs a PostgreSQL: tests/store/test_migrate.py does that one.
    "store migrate": ([], [], ["store", "migrate", "--from", "{dir}", "--to", "postgres://nowhere/x"], "invalid_from"),
}


def leaf_commands() -> set[str]:
    """Every command the parser has, steps spelled out (``palace diary read``)."""
    from sidecar.cli import build_parser

    def walk(parser: Any, prefix: str) -> set[str]:
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            return {prefix}
        return set().union(*(walk(p, f"{prefix} {name}".strip()) for name, p in subs[0].choices.items()))

    return walk(build_parser(), "")


def test_every_command_is_held_to_the_convention() -> None:
    assert leaf_commands() - {"serve", "mcp"} == set(VERBS)


def fill(argv: list[str], memory_dir: Path, fact: str = "") -> list[str]:
    turns = memory_dir.parent / "turns.jsonl"
    if not turns.exists():
        lines = [{"role": "user", "content": "We decided to ship on Fridays from now on."}]
        turns.write_text("\n".join(json.dumps(t) for t in lines) + "\n")
    crew = memory_dir.parent / "crew"
    crew.mkdir(exist_ok=True)
    where = {"{dir}": str(memory_dir), "{crew}": str(crew), "{turns}": str(turns), "{fact}": fact}
    out = []
    for arg in argv:
        for key, value in where.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def three(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_text_by_default_json_with_json_and_one_line_errors(verb: str, memory_dir: Path) -> None:
    setup, good, bad, code = VERBS[verb]
    fact = ""
    if setup:
        status, printed, _ = three([*fill(setup, memory_dir), "--json"])
        assert status == 0
        fact = str(json.loads(printed).get("fact", {}).get("id", ""))
    if good:
        status, text, err = three(fill(good, memory_dir, fact))
        assert status == 0, err
        assert text.strip() and not text.lstrip().startswith(("{", "[")), text  # for a person
        assert "': " not in text and "{'" not in text, text  # never a Python repr
        if verb == "palace delete":
            write(memory_dir, "daily/2026-05-14.md", "# Again\n- back\n")
        if verb in ("forget", "kg invalidate"):  # done once: set up again for the JSON run
            status, printed, _ = three([*fill(setup, memory_dir), "--json"])
            fact = str(json.loads(printed).get("fact", {}).get("id", ""))
        status, printed, err = three([*fill(good, memory_dir, fact), "--json"])
        assert status == 0, err
        assert isinstance(json.loads(printed), dict)  # the API's answer
    if bad is None:
        return
    status, printed, err = three(fill(bad, memory_dir))
    assert status == 2 and printed == "", (printed, err)
    assert err.count("\n") == 1 and err.startswith("memory-sidecar: ") and "Traceback" not in err, err
    found = re.search(r"\(([a-z_]+)\)\n$", err)
    assert found is not None, err
    if code is not None:
        assert found.group(1) == code, err
    status, printed, err_again = three([*fill(bad, memory_dir), "--json"])
    assert status == 2 and err_again == err
    assert json.loads(printed)["error"]["code"] == found.group(1)  # the API's error body too
