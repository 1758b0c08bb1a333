"""A write refused because the tier is full says where the room is (the largest files), and the
way it names works: rewrite one of them shorter, then the refused write lands."""

from __future__ import annotations

from pathlib import Path

from tests.support.memory import ClientFactory, write


async def test_a_new_file_refused_for_the_tier_cap_names_the_files_holding_the_space(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    write(root, "AGENT.md", "# Identity\nI am a test agent.\n")
    write(root, "topics/big.md", "# Big\n" + "A line of an old note that nobody needs any more.\n" * 60)
    write(root, "topics/small.md", "# Small\nOne fact.\n")
    client = await sidecar_client(tier_cap_bytes=3300)
    new = {"path": "topics/new.md", "content": "# New\n" + "A fresh fact worth keeping.\n" * 20}
    refused = await client.post("/memory/write", json=new)
    error = (await refused.json())["error"]
    assert refused.status == 413 and error["cap_scope"] == "tier", error
    assert [f["path"] for f in error["largest_files"]][:1] == ["topics/big.md"]
    assert "topics/big.md" in error["message"] and "replace" in error["message"]
    shorter = {"path": "topics/big.md", "mode": "replace", "content": "# Big\nThe one line still needed.\n"}
    assert (await client.post("/memory/write", json=shorter)).status == 201
    assert (await client.post("/memory/write", json=new)).status == 201
