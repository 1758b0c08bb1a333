"""The layered memory block over HTTP on real files and a real journal: L0 identity and pins first,
L1 essentials (files and the journal's top memories), L2 a room, L3 recall gated by relevance;
trivial messages recall nothing and the threshold keeps unrelated chunks out."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.palace.relevance import Relevance, is_trivial
from sidecar.settings import Settings
from tests.support.block import Start, block, layers_of
from tests.support.memory import write

TOPIC = "# Kafka\n## Partitions\nThe orders topic has 12 partitions keyed by customer id.\n"
COOKING = "# Cooking\n## Bread\nProof the dough overnight in the fridge before baking it.\n"


async def test_default_block_is_l0_then_l1_and_says_so(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "pins.md", "Always answer in English.\n")
    client = await start()
    await client.post("/memory/identity", json={"identity": "I am Ledger, the billing agent."})
    for text, kind in (("Invoices are kept for ten years", "fact"), ("We chose Stripe for payments", "decision")):
        assert (await client.post("/memory/remember", json={"content": text, "memory_type": kind})).status == 201
    out = await block(client)
    text = out["text"]
    order = ["[IDENTITY]", "I am Ledger", "[PINNED MEMORY]", "[ESSENTIAL MEMORIES]", "[AGENT MEMORY]"]
    assert [text.index(m) for m in order] == sorted(text.index(m) for m in order)
    assert "- (decision) We chose Stripe for payments" in text and "- (fact) Invoices are kept" in text
    layers = layers_of(out)
    assert layers[("identity", "agent/identity.md")] == "L0" and layers[("pins", "agent/pins.md")] == "L0"
    assert layers[("agent", "agent/AGENT.md")] == "L1" and layers[("agent", "agent/daily/2026-05-14.md")] == "L1"
    assert layers[("essentials", "journal")] == "L1"
    assert {p["chunks"] for p in out["layers"] if p["part"] == "essentials"} == {2}
    assert out["match_count"] == 0 and out["top_score"] is None
    only_l0 = await block(client, layers=["L0"])
    assert "I am Ledger" in only_l0["text"] and "[AGENT MEMORY]" not in only_l0["text"]
    assert "[ESSENTIAL MEMORIES]" not in only_l0["text"]


async def test_identity_is_never_cut_even_when_the_rest_is(start: Start) -> None:
    client = await start()
    identity = "I am Ledger. " + "Careful with money. " * 40
    await client.post("/memory/identity", json={"identity": identity})
    out = await block(client, budget=1200)
    assert identity.strip() in out["text"] and out["omitted"]  # the files were cut, the identity was not


async def test_l3_recalls_only_above_the_threshold(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/kafka.md", TOPIC)
    write(memory_dir, "topics/cooking.md", COOKING)
    client = await start()
    related = await block(client, query="how many partitions does the orders topic have?", layers=["L3"])
    assert "12 partitions keyed by customer id" in related["text"] and "dough" not in related["text"]
    assert related["match_count"] >= 1 and related["top_score"] == 1.0
    assert layers_of(related) == {("agent", "agent/topics/kafka.md"): "L3"}
    # "orders" is the only word this query shares with memory (the invoices daily note and the
    # orders topic): a weak match the threshold keeps out.
    unrelated = await block(client, query="when is the team dinner for the new orders people?", layers=["L3"])
    assert unrelated["text"] == "" and unrelated["match_count"] == 0
    assert unrelated["top_score"] is not None and 0 < unrelated["top_score"] < Settings().inject_threshold
    nothing = await block(client, query="quantum chromodynamics lattice", layers=["L3"])
    assert nothing["text"] == "" and nothing["match_count"] == 0 and nothing["top_score"] is None
    # With L1 as well, an unrelated query's block is the wake-up block: nothing injected for it.
    assert (await block(client, query="when is the team dinner for the new orders people?"))["text"] == (
        (await block(client))["text"]
    )


async def test_the_threshold_is_a_setting(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/kafka.md", TOPIC)
    query = "when is the team dinner for the new orders people?"
    permissive = await block(await start(inject_threshold=0.0), query=query, layers=["L3"])
    assert permissive["match_count"] >= 1 and "12 partitions" in permissive["text"]


async def test_the_agents_settings_file_sets_the_threshold(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/kafka.md", TOPIC)
    (memory_dir / "memory.toml").write_text("threshold = 0.0\n")
    query = "when is the team dinner for the new orders people?"
    out = await block(await start(), query=query, layers=["L3"])
    assert out["match_count"] >= 1 and "12 partitions" in out["text"]


@pytest.mark.parametrize("message", ["ok", "thanks!", "Thanks a lot", "sounds good", "hi", "👍", "OK, great."])
async def test_trivial_messages_inject_nothing(start: Start, memory_dir: Path, message: str) -> None:
    write(memory_dir, "topics/ok.md", "# OK\nok thanks great sounds good hi\n")  # would match word for word
    client = await start(inject_threshold=0.0)
    assert is_trivial(message)
    only = await block(client, query=message, layers=["L3"])
    assert only["text"] == "" and only["match_count"] == 0 and only["top_score"] is None
    full = await block(client, query=message, recall=True)
    assert full["text"] == (await block(client))["text"] and full["recalled"] == []


async def test_l2_adds_a_room_after_recall_and_before_the_rest(start: Start, memory_dir: Path) -> None:
    write(memory_dir, "topics/kafka.md", TOPIC)
    write(memory_dir, "topics/cooking.md", COOKING)
    client = await start()
    plain = await block(client)
    assert "12 partitions" not in plain["text"]
    room = await block(client, layers=["L0", "L1", "L2"], room="topics")
    assert "12 partitions" in room["text"] and "Proof the dough" in room["text"]
    layers = layers_of(room)
    assert layers[("agent", "agent/topics/kafka.md")] == "L2" and layers[("agent", "agent/AGENT.md")] == "L1"
    small = await block(client, layers=["L0", "L1", "L2"], room="topics", budget=700)
    assert "12 partitions" in small["text"]  # the room comes before the rest of L1
    resp = await client.post("/memory/block", json={"layers": ["L9"]})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_layers"
    resp = await client.post("/memory/block", json={"room": "../x"})
    assert resp.status == 400 and (await resp.json())["error"]["code"] == "invalid_room"


def test_relevance_weighs_rare_words_over_common_ones() -> None:
    chunks = ["the export job runs nightly", "the export failed", "kafka partitions", "export export export"]
    rel = Relevance("why did the kafka export fail?", chunks)
    assert rel.score("kafka partitions") > rel.score("the export job runs nightly")
    assert rel.score("the kafka export failed") == 1.0  # fail/failed fold together
    assert rel.score("bread") == 0.0
    assert Relevance("the", chunks).score("the") == 0.0  # no content word: nothing is relevant
