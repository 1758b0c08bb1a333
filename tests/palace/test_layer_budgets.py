"""The layers keep their budgets, over HTTP: the identity (L0) is never dropped while lower layers
are kept, and never shown twice when a query matches it; a room (L2) gives at most 1,200
characters."""

from __future__ import annotations

from pathlib import Path

from tests.support.block import Start, block, layers_of
from tests.support.memory import write

IDENTITY = "I am Ledger, the billing agent of the finance crew. " + " ".join(
    f"Rule {i}: reconcile every payout against the bank statement before closing the day." for i in range(23)
)


async def test_a_tight_budget_cuts_the_essentials_and_files_before_the_identity(start: Start) -> None:
    assert 1900 <= len(IDENTITY) <= 2000
    client = await start()
    resp = await client.post("/memory/identity", json={"identity": IDENTITY})
    assert resp.status == 200, await resp.text()
    for i in range(12):
        await client.post(
            "/memory/remember",
            json={"content": f"Decision {i}: invoices over 10k need a second approver in region {i}.", "priority": 9},
        )
    out = await block(client, budget=2500)
    # A long paragraph is cut into chunks (the block joins them with a line break): compare without spaces.
    assert "".join(IDENTITY.split()) in "".join(out["text"].split())
    assert out["omitted"]  # the files gave way, and the essentials (L1) shrank first
    shown = layers_of(out)
    assert shown[("identity", "agent/identity.md")] == "L0"


async def test_a_query_that_matches_the_identity_does_not_show_it_twice(start: Start) -> None:
    client = await start()
    await client.post("/memory/identity", json={"identity": IDENTITY})
    out = await block(client, query="how do we reconcile every payout against the bank statement", budget=12000)
    assert out["text"].count("I am Ledger, the billing agent") == 1
    assert out["text"].count("Rule 7: reconcile every payout") == 1


async def test_a_room_gives_at_most_1200_characters(start: Start, memory_dir: Path) -> None:
    for i in range(15):
        body = " ".join(f"Vendor {i} line {j} pays net thirty in euros through the SEPA rail." for j in range(8))
        write(memory_dir, f"topics/vendor-{i:02d}.md", f"# Vendor {i}\n## Terms\n{body}\n")
    client = await start()
    out = await block(client, layers=["L2"], room="topics", budget=20000)
    room = [p for p in out["layers"] if p["layer"] == "L2"]
    assert room
    shown = out["text"].count("pays net thirty")
    assert shown > 0
    assert (
        sum(
            len(line) + 1
            for line in out["text"].splitlines()
            if "pays net thirty" in line or line.startswith("## Terms")
        )
        <= 1200
    )
