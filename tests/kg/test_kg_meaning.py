"""The graph says what memory says, over HTTP: a deleted file or a forgotten memory no longer
states its facts, "moved from A to B on D" ends A at D even when A was never stated, names come
without their neighbours, "is working on" is a fact, a name of punctuation alone is refused, and a
year before 1000 is written so that it sorts before the others."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from sidecar.http.state import SIDECAR
from tests.support.kg import Client, kg, objects, remember_file
from tests.support.memory import ClientFactory


async def _current_facts(client: Client, query: str) -> str:
    resp = await client.post("/memory/block", json={"query": query, "budget": 6000, "layers": ["L3"]})
    assert resp.status == 200, await resp.text()
    text: str = (await resp.json())["text"]
    return (
        text.split("[CURRENT FACTS]")[1].split("[END CURRENT FACTS]", maxsplit=1)[0]
        if "[CURRENT FACTS]" in text
        else ""
    )


async def test_deleting_a_file_ends_the_facts_it_stated(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(client, "topics/vendors.md", "## Vendors\nThe billing service currently uses Stripe.\n")
    assert "Stripe" in await _current_facts(client, "what does the billing service use")
    resp = await client.post("/memory/delete", json={"path": "topics/vendors.md"})
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["facts_ended"] == 1
    assert "Stripe" not in await _current_facts(client, "what does the billing service use")
    assert objects(await kg(client, "query", {"entity": "billing service"})) == []
    ended = (await kg(client, "query", {"entity": "billing service", "include_invalid": True}))["facts"]
    assert [(f["object"], f["current"]) for f in ended] == [("Stripe", False)]
    # Written again, the file states it again.
    await remember_file(client, "topics/vendors.md", "## Vendors\nThe billing service currently uses Stripe.\n")
    assert objects(await kg(client, "query", {"entity": "billing service"})) == ["Stripe"]


async def test_a_file_written_again_within_the_clocks_grain_of_its_delete_states_its_facts_again(
    sidecar_client: ClientFactory, memory_dir: Path
) -> None:
    """A file's modification time comes from the kernel's coarse clock, a few ms behind the clock
    that dates a delete: a file written again within that grain of its delete has an mtime before
    the end of the facts it states. Those facts are current again all the same."""
    client = await sidecar_client()
    text = "## Vendors\nThe billing service currently uses Stripe.\n"
    await remember_file(client, "topics/vendors.md", text)
    deleted_at = time.time()
    resp = await client.post("/memory/delete", json={"path": "topics/vendors.md"})
    deleted = await resp.json()
    assert deleted["facts_ended"] == 1
    queue = client.app[SIDECAR].queue
    assert await queue.wait_hooked(deleted["seq"], 60.0)  # the index and the graph saw the file go
    path = memory_dir / "topics" / "vendors.md"
    path.write_text(text, encoding="utf-8")
    os.utime(path, (deleted_at, deleted_at))  # as the coarse clock may date it: before the delete's end
    assert await queue.wait_hooked(queue.put("agent", "topics/vendors.md", "write"), 60.0)
    assert objects(await kg(client, "query", {"entity": "billing service"})) == ["Stripe"]


async def test_deleting_a_section_ends_only_its_facts(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    text = "## Billing\nThe billing service uses Stripe.\n\n## Search\nThe search service uses Meilisearch.\n"
    await remember_file(client, "topics/vendors.md", text)
    resp = await client.post("/memory/delete", json={"path": "topics/vendors.md", "heading": "Billing"})
    assert resp.status == 200 and (await resp.json())["facts_ended"] == 1
    assert objects(await kg(client, "query", {"entity": "billing service"})) == []
    assert objects(await kg(client, "query", {"entity": "search service"})) == ["Meilisearch"]


async def test_forgetting_a_memory_ends_its_facts(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    resp = await client.post("/memory/remember", json={"content": "The ledger service uses Adyen for payouts."})
    memory_id = (await resp.json())["id"]
    assert objects(await kg(client, "query", {"entity": "ledger service"})) == ["Adyen"]
    assert "Adyen" in await _current_facts(client, "what does the ledger service use")
    gone = await (await client.post("/memory/forget", json={"id": memory_id})).json()
    assert gone["forgotten"] == [memory_id] and gone["facts_ended"] == 1
    assert objects(await kg(client, "query", {"entity": "ledger service"})) == []
    assert "Adyen" not in await _current_facts(client, "what does the ledger service use")


async def test_moved_from_ends_the_old_value_at_the_date(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(client, "topics/db.md", "## Database\nWe moved from PostgreSQL to CockroachDB on 2026-03-01.\n")
    assert objects(await kg(client, "query", {"entity": "we", "predicate": "uses", "as_of": "2026-02-15"})) == [
        "PostgreSQL"
    ]
    assert objects(await kg(client, "query", {"entity": "we", "predicate": "uses", "before": "CockroachDB"})) == [
        "PostgreSQL"
    ]
    assert objects(await kg(client, "query", {"entity": "we", "predicate": "uses"})) == ["CockroachDB"]
    timeline = [f for f in (await kg(client, "timeline", {"entity": "we"}))["facts"] if f["predicate"] == "uses"]
    assert [(f["object"], (f["valid_to"] or "")[:10]) for f in timeline] == [
        ("PostgreSQL", "2026-03-01"),
        ("CockroachDB", ""),
    ]


async def test_names_come_without_their_neighbours(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    await remember_file(
        client,
        "topics/team.md",
        "## Team\nThe billing service currently uses Stripe.\nOur designer Zoe owns the landing page.\n"
        "Alice is working on the payments API rewrite.\n",
    )
    assert objects(await kg(client, "query", {"entity": "billing service"})) == ["Stripe"]
    zoe = (await kg(client, "query", {"entity": "Zoe"}))["facts"]
    assert [(f["subject"], f["predicate"]) for f in zoe] == [("landing page", "owner")]
    alice = (await kg(client, "query", {"entity": "Alice"}))["facts"]
    assert [(f["predicate"], f["object"]) for f in alice] == [("works on", "payments API rewrite")]


async def test_a_name_of_punctuation_alone_is_refused(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    for body in (
        {"subject": "!!!", "predicate": "uses", "object": "Redis"},
        {"subject": "api", "predicate": "uses", "object": "---"},
    ):
        answer: dict[str, Any] = await kg(client, "add", body, status=400)
        assert answer["error"]["code"] in ("invalid_subject", "invalid_object")


async def test_years_before_1000_sort_before_later_ones(sidecar_client: ClientFactory, memory_dir: Path) -> None:
    client = await sidecar_client()
    old = await kg(
        client,
        "add",
        {"subject": "Lindisfarne", "predicate": "located in", "object": "Northumbria", "valid_from": "0793-06-08"},
        status=201,
    )
    assert old["fact"]["valid_from"] == "0793-06-08T00:00:00.000000Z"
    await kg(
        client,
        "add",
        {"subject": "Lindisfarne", "predicate": "located in", "object": "England", "valid_from": "1974-04-01"},
        status=201,
    )
    assert objects(await kg(client, "query", {"entity": "Lindisfarne", "as_of": "1500-01-01"})) == ["Northumbria"]
    assert objects(await kg(client, "query", {"entity": "Lindisfarne"})) == ["England"]
