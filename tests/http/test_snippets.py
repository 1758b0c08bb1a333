"""What a search hit shows: the matched terms in its snippet, and where they are."""

from __future__ import annotations

from pathlib import Path

from tests.support.memory import ClientFactory, write

DAILY = """# 2026-05-20

## Misc
Notes on the checkout service and the checkpoint format. The checker script runs nightly; the
checklist lives in the wiki. We also moved the checkout cache to redis and the checkpoint
retention to 30 days. Several other things happened this week that matter to nobody here.
The zebra-crossing token is checkx-7781, which unlocks the staging bucket.
"""


async def test_the_matched_token_is_in_the_snippet_with_its_offsets(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    write(tmp_path / "memory", "daily/2026-05-20.md", DAILY)
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "checkx-7781"})
    assert resp.status == 200
    first = (await resp.json())["results"][0]
    assert first["path"] == "daily/2026-05-20.md"
    assert "checkx-7781" in first["snippet"]
    assert [first["snippet"][a:b] for a, b in first["highlights"]] == ["checkx", "7781"]


async def test_markdown_highlight_wraps_the_terms_and_bad_values_are_400(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    write(tmp_path / "memory", "daily/2026-05-20.md", DAILY)
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "checkx-7781", "highlight": "markdown"})
    first = (await resp.json())["results"][0]
    assert "**checkx**-**7781**" in first["snippet"]
    assert [first["snippet"][a:b] for a, b in first["highlights"]] == ["checkx", "7781"]
    bad = await client.post("/memory/search", json={"query": "checkx", "highlight": "bold"})
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_highlight"
