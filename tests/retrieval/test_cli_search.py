"""``memory-sidecar search`` answers with the server's search: the same hits, ranks and scores as
``POST /memory/search`` over the same dir (hybrid with the real model, the archive's standing
applied), and it says which engine answered, in the answer the contract (and the OpenAPI document)
declares."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from sidecar.cli import main
from sidecar.http.openapi import DOCUMENT
from sidecar.http.state import SIDECAR
from tests.support.embedding import needs_model
from tests.support.memory import AGENT_MD, DAILY_MD, ClientFactory, write
from tests.support.waiting import async_wait_until

HOUSEHOLD = """# Household

Our feline companion Miso refuses to eat anything except salmon.

The boiler service is booked for the first Monday of every month.
"""
ARCHIVED = """# 2025-01-06

## Review
Use PostgreSQL 15 for every new database, and keep the sqlite driver name as sqlite3.
"""


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "AGENT.md", AGENT_MD)
    write(root, "daily/2026-05-14.md", DAILY_MD)
    write(root, "topics/household.md", HOUSEHOLD)
    write(root, "archive/daily/2025-01-06.md", ARCHIVED)
    return root


def declared(answer: dict[str, Any]) -> None:
    """Fail unless ``answer`` is a search answer as the OpenAPI document declares it, its engine too."""
    schema = {"$ref": "#/components/schemas/SearchAnswer", "components": DOCUMENT["components"]}
    jsonschema.Draft202012Validator(schema).validate(answer)
    assert set(answer["engine"]) <= set(DOCUMENT["components"]["schemas"]["SearchEngine"]["properties"])


def shown(results: list[dict[str, Any]]) -> list[tuple[str, int, float]]:
    return [(r["path"], r["line_start"], r["score"]) for r in results]


@needs_model
async def test_the_cli_ranks_and_scores_as_the_server_does(
    sidecar_client: ClientFactory, memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = await sidecar_client(embedder="onnx", memory_dir=str(memory))
    vectors = client.server.app[SIDECAR].hybrid.vectors["agent"]
    await async_wait_until(lambda: vectors.size > 0 and vectors.backlog == 0, timeout=60)
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "onnx")
    for query in ("postgres sqlite driver", "which pet food does the cat like", "invoices"):
        resp = await client.post("/memory/search", json={"query": query, "limit": 5})
        server = (await resp.json())["results"]
        code, out, _ = await asyncio.to_thread(cli, "search", query, "-p", str(memory), "-l", "5", "-F", "json")
        answer = json.loads(out)
        assert code == 0 and answer["engine"]["search"] == "hybrid", answer["engine"]
        assert answer["engine"]["vectors"]["backlog"] == 0
        declared(answer)
        # Same hits, same order, the same score to the answers' last decimal: the two processes each
        # embed the query, and onnxruntime's sums may differ in their last bits, which can move a
        # score rounded to six decimals by one unit.
        assert [hit[:2] for hit in shown(answer["results"])] == [hit[:2] for hit in shown(server)], query
        assert [hit[2] for hit in shown(answer["results"])] == pytest.approx(
            [hit[2] for hit in shown(server)], rel=0, abs=1.01e-6
        ), query
        assert [r["snippet"] for r in answer["results"]] == [r["snippet"] for r in server]


@needs_model
def test_archived_text_ranks_below_the_live_line_and_the_table_names_the_engine(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "onnx")
    code, out, err = cli("search", "PostgreSQL for every new database", "-p", str(memory))
    assert code == 0 and "answered by hybrid (weighted, minilm" in err, err
    rows = out.splitlines()
    assert rows[0].split() == ["score", "where", "snippet"]
    assert "AGENT.md" in rows[1] and "archive/daily/2025-01-06.md" in out
    assert out.index("AGENT.md") < out.index("archive/daily/2025-01-06.md")


def test_without_an_embedder_the_cli_says_bm25_and_applies_standing(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "none")
    code, out, _ = cli("search", "PostgreSQL for every new database", "-p", str(memory), "-F", "json")
    answer = json.loads(out)
    assert code == 0 and answer["engine"] == {"search": "bm25", "why": "the embedder setting is none"}
    declared(answer)
    paths = [r["path"] for r in answer["results"]]
    assert paths.index("AGENT.md") < paths.index("archive/daily/2025-01-06.md")
    code, out, err = cli("search", "PostgreSQL", "-p", str(memory))
    assert "answered by bm25 (the embedder setting is none)" in err


@pytest.mark.parametrize("embedder", ["none", pytest.param("onnx", marks=needs_model)])
def test_nothing_matched_is_no_results(memory: Path, monkeypatch: pytest.MonkeyPatch, embedder: str) -> None:
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", embedder)
    assert cli("search", "qwxzyv flurbinate zazzle", "-p", str(memory))[:2] == (0, "no results\n")
    code, out, _ = cli("search", "qwxzyv flurbinate zazzle", "-p", str(memory), "-F", "json")
    assert code == 0 and json.loads(out)["results"] == []


#: Each command line of its JSON argument run by the CLI's main in turn, in one process: one JSON line
#: a command, its exit code, its answer and whether onnxruntime has been imported by then.
NO_MODEL_RUN = """
import io, json, sys
from sidecar.cli import main
for argv in json.loads(sys.argv[1]):
    out = io.StringIO()
    code = main(argv, out=out)
    print(json.dumps({"code": code, "onnxruntime": "onnxruntime" in sys.modules, "out": out.getvalue()}))
"""


@needs_model
async def test_a_tier_with_no_vector_is_searched_without_loading_the_model_and_answers_the_same(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing has embedded the tier yet: the command answers what it answers with the model loaded
    and the query embedded (its dense leg is empty either way), in a process that never imports
    onnxruntime. The answer to compare with comes from this process, the model loaded up front and
    the query embedded as for a tier with vectors (the two switches set to that path)."""
    from sidecar.retrieval import offline
    from sidecar.retrieval.hybrid import HybridSearcher

    env = {**os.environ, "MEMORY_SIDECAR_EMBEDDER": "onnx", "ORT_DISABLE_TELEMETRY": "1"}
    monkeypatch.setenv("MEMORY_SIDECAR_EMBEDDER", "onnx")
    queries = ("postgres sqlite driver", "which pet food does the cat like", "invoices", "qwxzyv flurbinate")
    argvs = [["search", query, "-p", str(memory), "-l", "5", "-F", "json"] for query in queries]
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", NO_MODEL_RUN, json.dumps(argvs)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    ran = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(ran) == len(argvs), proc.stdout
    for query, argv, status in zip(queries, argvs, ran, strict=True):
        assert (status["code"], status["onnxruntime"]) == (0, False), (query, proc.stderr)
        answer = json.loads(status["out"])
        declared(answer)
        assert answer["engine"]["search"] == "hybrid" and answer["engine"]["vectors"]["chunks"] == 0

        with monkeypatch.context() as m:
            m.setattr(offline, "_stored", lambda tier: True)  # load the model up front
            m.setattr(HybridSearcher, "_has_vectors", lambda self, vectors: _true())  # embed the query
            code, out, _ = await asyncio.to_thread(cli, *argv)
        loaded = json.loads(out)
        assert code == 0 and loaded["engine"] == answer["engine"]
        assert answer["results"] == loaded["results"], query
        if query == "postgres sqlite driver":
            assert answer["results"] and answer["results"][0]["path"] == "AGENT.md"


async def _true() -> bool:
    return True
