"""Search, status and reindex over a real aiohttp server on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.index.query import terms
from sidecar.index.snippet import query_tokens, window
from tests.support.memory import ClientFactory, write

HOSTILE = [
    '"hello',
    "AND",
    "OR",
    "NOT",
    "hello AND",
    "*",
    "hello^",
    "(hello",
    "()",
    "multi-agent",
    "-hello",
    "col:x",
    "{a}:x",
    "GB/s",
    "don't",
    "@x",
    "#x",
    "a=b",
    "50%",
    "x\\y",
    "+x",
    "a.b",
    ":",
    "NEAR(a b)",
    "hel*",
    "🙂🚀",
    "数据库 迁移",
    "postgres\u200b",
    "' OR 1=1 --",
    "x" * 4096,
    "deploy " * 256,
]


async def post_search(client: Any, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    resp = await client.post("/memory/search", json=body)
    return resp.status, await resp.json()


async def test_search_returns_ranked_hits_with_the_contract_fields(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    status, body = await post_search(client, {"query": "postgres database"})
    assert status == 200
    assert body["scope"] == "agent" and isinstance(body["took_ms"], float)
    first = body["results"][0]
    assert set(first) == {"source", "path", "heading", "line_start", "line_end", "snippet", "highlights", "score"}
    assert first["source"] == "agent"
    shown = {first["snippet"][a:b].lower() for a, b in first["highlights"]}
    assert shown & {"postgres", "postgresql", "database"}, first
    scores = [r["score"] for r in body["results"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("query", HOSTILE, ids=range(len(HOSTILE)))
async def test_hostile_queries_are_literal_text_never_500(
    sidecar_client: ClientFactory, memory_dir: Path, query: str
) -> None:
    write(memory_dir, "topics/literal.md", "# Literal\nmulti-agent GB/s don't hello a.b NEAR 数据库 迁移\n")
    client = await sidecar_client()
    status, body = await post_search(client, {"query": query})
    assert status == 200, body
    assert isinstance(body["results"], list)


@pytest.mark.parametrize("query", ["multi-agent", "GB/s", "don't", "数据库", "NEAR(a b)", '"hello'])
async def test_literal_queries_find_the_literal_text(
    sidecar_client: ClientFactory, memory_dir: Path, query: str
) -> None:
    write(memory_dir, "topics/literal.md", "# Literal\nmulti-agent GB/s don't hello NEAR a b 数据库\n")
    client = await sidecar_client()
    _, body = await post_search(client, {"query": query})
    assert [r["path"] for r in body["results"]] == ["topics/literal.md"]


async def test_limit_is_capped_at_50(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    for i in range(60):
        write(memory_dir, f"topics/t{i}.md", f"# T{i}\nkangaroo {i}\n")
    client = await sidecar_client()
    _, body = await post_search(client, {"query": "kangaroo", "limit": 500})
    assert len(body["results"]) == 50
    _, body = await post_search(client, {"query": "kangaroo", "limit": 3})
    assert len(body["results"]) == 3


async def test_crew_scopes_on_a_solo_agent_are_503(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    for scope in ("crew", "both"):
        status, body = await post_search(client, {"query": "x", "scope": scope})
        assert status == 409 and body["error"]["code"] == "no_crew_tier"


async def test_status_and_reindex(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    resp = await client.get("/memory/status")
    status = await resp.json()
    assert (status["files"], status["integrity"]) == (2, "created")
    write(memory_dir, "topics/new.md", "# New\nwombat\n")
    resp = await client.post("/memory/reindex")
    assert resp.status == 200
    after = await resp.json()
    assert after["files"] == 3 and after["last_reindex"]["kind"] == "rebuild"
    _, body = await post_search(client, {"query": "wombat"})
    assert [r["path"] for r in body["results"]] == ["topics/new.md"]


async def test_fts5_syntax_is_opt_in(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    _, plain = await post_search(client, {"query": "screensh*"})
    _, raw = await post_search(client, {"query": "screensh*", "syntax": "fts5"})
    assert plain["results"] == [] and [r["path"] for r in raw["results"]] == ["AGENT.md"]
    status, body = await post_search(client, {"query": "(unbalanced", "syntax": "fts5"})
    assert status == 400 and body["error"]["code"] == "invalid_fts_syntax"


async def test_start_on_a_corrupt_index_rebuilds_and_says_so(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    (memory_dir / "index.sqlite").write_bytes(b"\x00garbage" * 512)
    client = await sidecar_client()
    status = await (await client.get("/memory/status")).json()
    assert status["integrity"].startswith("rebuilt") and status["files"] == 2
    _, body = await post_search(client, {"query": "invoices"})
    assert body["results"][0]["path"] == "daily/2026-05-14.md"


async def test_an_answer_shows_a_text_once_and_gives_the_copies_places_to_other_hits(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    """Consolidation keeps a fact as its own section in AGENT.md and in each weekly summary that
    rolled it up: an answer shows that text once, in its best place (AGENT.md, live and undated,
    ranks first), and the places its copies would take go to the next hits."""
    root = tmp_path / "memory"
    fact = "The kiln is fired by Okafor Ceramics on Thursdays."
    write(root, "AGENT.md", f"# Agent\n\n## Kiln\n\n{fact}\n")
    for week in ("2025-W40", "2025-W41", "2025-W42"):
        write(root, f"daily/summaries/{week}.md", f"# Week {week}\n\n## Kiln\n\n{fact}\n")  # the same text
    others = [
        "The kiln shelves were replaced with silicon carbide ones.",
        "Glaze tests go in the small kiln first.",
        "The kiln room fan is switched on before firing.",
    ]
    for n, line in enumerate(others):
        write(root, f"topics/kiln-{n}.md", f"# Kiln {n}\n\n{line}\n")
    client = await sidecar_client(consolidate_interval=0)
    _, body = await post_search(client, {"query": "kiln fired Okafor", "limit": 4})
    results = body["results"]
    assert [" ".join(r["snippet"].split()) for r in results].count(fact) == 1, results
    assert results[0]["path"] == "AGENT.md"
    assert sorted(r["path"] for r in results[1:]) == [f"topics/kiln-{n}.md" for n in range(3)]


async def test_copies_that_differ_only_in_whitespace_are_shown_once(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    """A copy of a text wrapped at another place, or holding a run of spaces, is the same text: the
    answer shows it once, whichever copy has the plain form the index marks (line breaks its only
    whitespace beyond single spaces) and whichever does not."""
    root = tmp_path / "memory"
    write(root, "AGENT.md", "# Agent\n\n## Kiln\n\nThe kiln is fired by Okafor Ceramics\non Thursdays.\n")
    write(
        root,
        "daily/summaries/2025-W40.md",
        "# Week 40\n\n## Kiln\n\nThe kiln is fired by  Okafor Ceramics on Thursdays.\n",
    )
    write(
        root,
        "daily/summaries/2025-W41.md",
        "# Week 41\n\n## Kiln\n\nThe kiln is fired by Okafor Ceramics on\nThursdays.\n",
    )
    write(root, "topics/kiln.md", "# Kiln\n\nGlaze tests go in the small kiln first.\n")
    client = await sidecar_client(consolidate_interval=0)
    _, body = await post_search(client, {"query": "kiln fired Okafor", "limit": 4})
    shown = [" ".join(r["snippet"].split()) for r in body["results"]]
    assert shown.count("The kiln is fired by Okafor Ceramics on Thursdays.") == 1, body["results"]
    assert [r["path"] for r in body["results"]] == ["AGENT.md", "topics/kiln.md"]


async def test_the_snippet_of_a_text_of_several_paragraphs_is_its_window(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    """A hit whose text holds paragraph breaks and runs of spaces shows the window of its text,
    whitespace flattened, around its best cluster of query terms, with the terms' offsets in it."""
    root = tmp_path / "memory"
    body = (
        "The kiln  was loaded on Monday with the bisque ware from the spring course.\n\n"
        "Shelves were cleaned   and the cones set for a slow glaze firing overnight.\n\n"
        "Okafor Ceramics checked the  kiln wiring before the glaze firing, as every quarter.\n\n"
        "The  studio was swept and the wedging table scraped down after the session."
    )
    write(root, "topics/kiln.md", f"# Kiln\n\n{body}\n")
    client = await sidecar_client(consolidate_interval=0)
    query = "Okafor glaze firing"
    _, answer = await post_search(client, {"query": query, "limit": 3})
    [hit] = answer["results"]
    expected = window(body, [], tokens=query_tokens(terms(query)))
    assert len(" ".join(body.split())) > 240 and hit["snippet"].startswith("…")
    assert hit["snippet"] == expected.text
    assert hit["highlights"] == [[a, b] for a, b in expected.highlights]
