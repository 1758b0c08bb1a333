"""The knowledge graph through a real sidecar: facts read from memory written over HTTP and from
journal entries, as-of questions, timelines, dedup, workspaces, tunnels, the search lift."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sidecar.http.state import SIDECAR
from tests.support.kg import kg, objects, remember_file
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until


async def test_postgres_to_cockroach_as_of_timeline_and_before(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(client, "daily/2026-01-10.md", "## Database\nPostgreSQL 16 is the baseline.\n")
    await remember_file(
        client, "daily/2026-03-02.md", "## Migration\nWe moved from PostgreSQL to CockroachDB on 2026-03-01.\n"
    )
    before = await kg(client, "query", {"entity": "we", "as_of": "2026-02-15", "predicate": "uses"})
    assert objects(before) == ["PostgreSQL"]
    after = await kg(client, "query", {"entity": "we", "as_of": "2026-03-15", "predicate": "uses"})
    assert objects(after) == ["CockroachDB"]
    current = await kg(client, "query", {"entity": "we", "predicate": "uses"})
    assert objects(current) == ["CockroachDB"]
    # The old fact is ended, not deleted: it is in the timeline, in order, with its window closed.
    timeline = await kg(client, "timeline", {"entity": "we"})
    uses = [f for f in timeline["facts"] if f["predicate"] == "uses"]
    assert [(f["object"], f["valid_from"][:10], (f["valid_to"] or "")[:10]) for f in uses] == [
        ("PostgreSQL", "2026-01-10", "2026-03-01"),
        ("CockroachDB", "2026-03-01", ""),
    ]
    assert uses[0]["current"] is False and uses[0]["invalidated_by"] == uses[1]["id"]
    assert uses[0]["source"] == "file:agent:daily/2026-01-10.md#2"
    assert uses[0]["text"] == "PostgreSQL 16 is the baseline."
    everything = await kg(client, "query", {"entity": "we", "include_invalid": True})
    assert {"PostgreSQL", "CockroachDB"} <= set(objects(everything))
    # "What did we use before CockroachDB?"
    earlier = await kg(client, "query", {"entity": "we", "predicate": "uses", "before": "CockroachDB"})
    assert objects(earlier) == ["PostgreSQL"]
    # The replacement is a fact of its own, and the database's timeline shows both sides.
    replaced = await kg(client, "query", {"entity": "CockroachDB", "direction": "out"})
    assert ("replaced", "PostgreSQL") in [(f["predicate"], f["object"]) for f in replaced["facts"]]


async def test_out_of_order_files_give_the_same_windows(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    """The move is read before the baseline (as a reindex may): the baseline still ends at the move."""
    client = await sidecar_client()
    await remember_file(client, "daily/2026-03-02.md", "We moved from PostgreSQL to CockroachDB on 2026-03-01.\n")
    await remember_file(client, "daily/2026-01-10.md", "PostgreSQL 16 is the baseline.\n")
    assert objects(await kg(client, "query", {"entity": "we", "as_of": "2026-02-01", "predicate": "uses"})) == [
        "PostgreSQL"
    ]
    assert objects(await kg(client, "query", {"entity": "we", "predicate": "uses"})) == ["CockroachDB"]


async def test_postgres_and_postgresql_are_one_entity(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(client, "topics/billing.md", "# Billing\nThe billing service uses Postgres.\n")
    await remember_file(client, "topics/reports.md", "# Reports\nThe reports job relies on PostgreSQL 15.\n")
    for name in ("Postgres", "PostgreSQL", "postgresql 16", "pg"):
        answer = await kg(client, "query", {"entity": name, "direction": "in"})
        assert answer["entity"]["name"] == "Postgres"
        assert sorted(f["subject"] for f in answer["facts"]) == ["billing service", "reports job"]
    # A learnt alias: memory says another name of an entity the graph knows.
    await kg(client, "add", {"subject": "ledger", "predicate": "stored in", "object": "CockroachDB"}, 201)
    await remember_file(client, "topics/db.md", "CockroachDB, also known as crdb-prod, holds the ledger.\n")
    found = await kg(client, "query", {"entity": "crdb-prod"})
    assert found["entity"]["name"] == "CockroachDB"


async def test_workspaces_are_isolated(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await kg(client, "add", {"workspace_id": "acme", "subject": "api", "predicate": "uses", "object": "Redis"}, 201)
    await kg(client, "add", {"workspace_id": "globex", "subject": "api", "predicate": "uses", "object": "Kafka"}, 201)
    assert objects(await kg(client, "query", {"workspace_id": "acme", "entity": "api"})) == ["Redis"]
    assert objects(await kg(client, "query", {"workspace_id": "globex", "entity": "api"})) == ["Kafka"]
    missing = await kg(client, "query", {"workspace_id": "initech", "entity": "api"}, 404)
    assert missing["error"]["code"] == "unknown_entity"
    # Journal entries feed the graph of their own workspace.
    entry = {
        "workspace_id": "acme",
        "agent_id": "researcher",
        "entry_type": "peer.escalation",
        "severity": "info",
        "summary": "Dana owns the invoice export.",
    }
    resp = await client.post("/journal", json=entry)
    assert resp.status == 201, await resp.text()
    owner = await kg(client, "query", {"workspace_id": "acme", "entity": "invoice export"})
    assert [(f["predicate"], f["object"], f["room"]) for f in owner["facts"]] == [
        ("owner", "Dana", "journal/peer.escalation")
    ]
    await kg(client, "query", {"workspace_id": "globex", "entity": "invoice export"}, 404)
    stats = await (await client.get("/kg/stats", params={"workspace_id": "globex"})).json()
    assert stats["entities"] == 2 and stats["facts"] == 1


async def test_invalidate_keeps_the_fact(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    added = await kg(client, "add", {"subject": "Alice", "predicate": "owner of", "object": "auth module",
                                     "valid_from": "2026-01-01"}, 201)  # fmt: skip
    fact_id = added["fact"]["id"]
    ended = await kg(client, "invalidate", {"fact_id": fact_id, "valid_to": "2026-04-01"})
    assert ended["facts"][0]["valid_to"].startswith("2026-04-01") and ended["facts"][0]["current"] is False
    assert objects(await kg(client, "query", {"entity": "Alice"})) == []
    assert objects(await kg(client, "query", {"entity": "Alice", "as_of": "2026-02-01"})) == ["auth module"]
    assert len((await kg(client, "timeline", {"entity": "Alice"}))["facts"]) == 1
    by_triple = await kg(client, "add", {"subject": "Bob", "predicate": "uses", "object": "vim"}, 201)
    done = await kg(client, "invalidate", {"subject": "Bob", "predicate": "uses", "object": "vim"})
    assert [f["id"] for f in done["facts"]] == [by_triple["fact"]["id"]]
    await kg(client, "invalidate", {"fact_id": 999999}, 404)
    await kg(client, "invalidate", {"subject": "Bob"}, 400)


async def test_tunnels_and_traverse(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(client, "topics/billing.md", "# Billing\nThe billing service uses PostgreSQL.\nCarol owns the billing service.\n")  # fmt: skip
    await remember_file(client, "topics/search.md", "# Search\nThe search service uses PostgreSQL.\nThe search service uses Redis.\n")  # fmt: skip
    found = await kg(client, "tunnels", {"room_a": "topics/billing", "room_b": "topics/search"})
    assert [t["name"] for t in found["tunnels"]] == ["PostgreSQL"]
    assert found["tunnels"][0]["rooms"] == ["topics/billing", "topics/search"]
    everywhere = await kg(client, "tunnels", {"room_a": "topics"})
    assert "PostgreSQL" in [t["name"] for t in everywhere["tunnels"]]
    one = await kg(client, "traverse", {"entity": "Carol", "hops": 1})
    assert sorted(n["name"] for n in one["nodes"]) == ["Carol", "billing service"]
    two = await kg(client, "traverse", {"entity": "Carol", "hops": 2})
    assert {n["name"]: n["hops"] for n in two["nodes"]} == {"Carol": 0, "billing service": 1, "PostgreSQL": 2}
    stats = await (await client.get("/kg/stats")).json()
    assert stats["tunnels"] >= 1 and stats["rooms"] == 2 and stats["predicates"]["uses"] == 3


async def test_search_lift_is_explained(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(
        client,
        "topics/stack.md",
        "# Stack\n\n## Ledger\nThe ledger service uses CockroachDB.\n\n## Notes\nThe ledger team met on Tuesday.\n",
    )
    resp = await client.post("/memory/search", json={"query": "what does the ledger service use", "explain": True})
    hits = (await resp.json())["results"]
    assert hits[0]["heading"] == "Stack > Ledger"
    lift = hits[0]["explain"]["kg"]
    assert "ledger service" in lift["entities"] and lift["facts"] and lift["factor"] > 1
    assert all("kg" in h["explain"] for h in hits)
    plain = await client.post("/memory/search", json={"query": "Tuesday", "explain": True})
    assert all("kg" not in h["explain"] for h in (await plain.json())["results"])  # no entity named: no lift


async def test_the_lift_reads_the_whole_chunk_not_only_its_snippet(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    await remember_file(client, "topics/stack.md", "# Stack\nThe ledger service uses CockroachDB.\n")
    filler = "Nothing else of note happened in the long review that followed, item after item. " * 5
    await remember_file(
        client,
        "topics/freeze.md",
        f"# Freeze\nThe deploy freeze starts Friday. {filler}It was asked for by the ledger service.\n",
    )
    resp = await client.post("/memory/search", json={"query": "deploy freeze ledger service", "explain": True})
    hit = next(h for h in (await resp.json())["results"] if h["path"] == "topics/freeze.md")
    assert "deploy freeze" in hit["snippet"] and "ledger" not in hit["snippet"]  # the window is the first cluster
    assert hit["explain"]["kg"]["mentions"] == ["ledger service"]  # named further on in the chunk


async def test_a_changed_file_whose_reading_failed_is_read_again(
    sidecar_client: ClientFactory, memory_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph's write of the file's facts fails once, as on a full disk. Made to fail by a
    stand-in for ``graph.add``: a real full disk cannot be aimed at the graph alone, since the
    write and its index share the filesystem (tests/server/test_faults.py fills it under the
    first reading of the files instead)."""
    client = await sidecar_client()
    graph = client.server.app[SIDECAR].kg.graph
    add = graph.add
    failed: list[str] = []

    async def full_disk_once(*args: Any, **kwargs: Any) -> Any:
        file = kwargs.get("file")
        if file is not None and file[1] == "topics/stack.md" and not failed:
            failed.append(file[1])
            raise sqlite3.OperationalError("database or disk is full")
        return await add(*args, **kwargs)

    monkeypatch.setattr(graph, "add", full_disk_once)
    await remember_file(client, "topics/stack.md", "# Stack\nThe ledger service uses CockroachDB.\n")
    assert failed == ["topics/stack.md"]

    async def known() -> bool:
        resp = await client.post("/kg/query", json={"entity": "ledger service", "predicate": "uses"})
        return resp.status == 200 and objects(await resp.json()) == ["CockroachDB"]

    await async_wait_until(known, timeout=60, message="the graph to read topics/stack.md again")


async def test_bad_requests_are_400s(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    cases = [
        ("add", {"subject": "a", "predicate": "uses"}, "missing_object"),
        ("add", {"subject": "a", "predicate": "uses", "object": "b", "valid_from": "soon"}, "invalid_valid_from"),
        ("add", {"subject": "a\ud800", "predicate": "uses", "object": "b"}, "invalid_subject"),
        ("query", {"entity": "a", "as_of": "yesterday"}, "invalid_as_of"),
        ("query", {"entity": "a", "bogus": 1}, "unknown_field"),
        ("query", {"entity": "a", "scope": "crew"}, "invalid_scope"),
        ("traverse", {"entity": "a", "hops": 3}, "invalid_hops"),
        ("tunnels", {"limit": 0}, "invalid_limit"),
    ]
    for op, body, code in cases:
        resp = await client.post(f"/kg/{op}", data=__import__("json").dumps(body, ensure_ascii=True))
        assert resp.status == 400, (op, body, await resp.text())
        assert (await resp.json())["error"]["code"] == code


async def test_files_written_before_start_are_read(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    (memory_dir / "topics").mkdir(exist_ok=True)
    (memory_dir / "topics" / "infra.md").write_text("# Infra\nThe deploy pipeline runs on Kubernetes.\n")
    client = await sidecar_client()

    async def read() -> dict[str, Any] | None:
        resp = await client.post("/kg/query", json={"entity": "k8s"})
        return await resp.json() if resp.status == 200 else None  # the graph's first reading is under way

    answer = await async_wait_until(read, interval=0.05, message="the graph to answer after its first reading")
    assert [(f["subject"], f["predicate"]) for f in answer["facts"]] == [("deploy pipeline", "uses")]


async def test_block_holds_the_current_facts_of_the_querys_entities(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    client = await sidecar_client()
    await remember_file(client, "daily/2026-01-10.md", "PostgreSQL 16 is the baseline.\n")
    await remember_file(client, "daily/2026-03-02.md", "We moved from PostgreSQL to CockroachDB on 2026-03-01.\n")
    resp = await client.post("/memory/block", json={"budget": 4000, "query": "which database do we run on?"})
    text = (await resp.json())["text"]
    assert "[CURRENT FACTS]\n- we uses CockroachDB (since 2026-03-01)\n[END CURRENT FACTS]" in text
    assert "we uses PostgreSQL" not in text  # ended: not a current fact
    plain = await client.post("/memory/block", json={"budget": 4000, "query": "rollback"})
    assert "[CURRENT FACTS]" not in (await plain.json())["text"]


async def test_typed_memories_feed_the_graph(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    body = {"content": "The deploy pipeline runs on Kubernetes.", "memory_type": "fact", "topic_key": "deploy"}
    resp = await client.post("/memory/remember", json=body)
    assert resp.status == 201, await resp.text()
    found = await kg(client, "query", {"entity": "k8s", "direction": "in"})
    assert [(f["subject"], f["predicate"]) for f in found["facts"]] == [("deploy pipeline", "uses")]
    assert found["facts"][0]["source"] == f"journal:{(await resp.json())['id']}"
    assert found["facts"][0]["room"].startswith("journal/")


async def test_idle_release_hands_back_the_graphs_page_caches(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    from sidecar.server.app import IDLE_RELEASE

    client = await sidecar_client()
    app = client.server.app
    store = app[SIDECAR].kg.graph.store
    assert any(getattr(fn, "__self__", None) is store for fn in app[IDLE_RELEASE].others)
    await kg(client, "add", {"subject": "api", "predicate": "uses", "object": "Redis"}, 201)
    for fn in app[IDLE_RELEASE].others:
        await fn()
    assert objects(await kg(client, "query", {"entity": "api"})) == ["Redis"]  # still answers after
