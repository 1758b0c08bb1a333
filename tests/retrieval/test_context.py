"""``"context": "section"``: a hit carries its whole heading section, read from its file."""

from __future__ import annotations

from pathlib import Path

from sidecar.index.chunker import section_lines
from sidecar.retrieval.context import with_section
from tests.support.memory import ClientFactory, write

DAILY = """# 2026-05-21

## Deploy
We rolled the api back at 14:02 after the canary failed.
The cause was a missing index on orders.

```
## not a heading: inside a fence
```

## Lunch
Tacos again.
"""


def test_section_lines_follow_headings_and_keep_fences_whole() -> None:
    assert section_lines(DAILY, 4) == (3, 10)  # "## Deploy" to the line before "## Lunch"
    assert section_lines(DAILY, 8) == (3, 10)  # the fenced "## ..." line is not a heading
    assert section_lines(DAILY, 12) == (11, 12)
    assert section_lines("no heading\nat all\n", 2) == (1, 2)
    assert section_lines(DAILY, 1) == (1, 2)


async def test_search_with_section_context_returns_the_section(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    write(tmp_path / "memory", "daily/2026-05-21.md", DAILY)
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "canary", "context": "section"})
    assert resp.status == 200
    hit = (await resp.json())["results"][0]
    assert hit["path"] == "daily/2026-05-21.md"
    assert hit["snippet"].startswith("## Deploy\nWe rolled the api back")
    assert "missing index on orders" in hit["snippet"] and "Tacos" not in hit["snippet"]
    assert hit["section"] == {"line_start": 3, "line_end": 10, "cut": False}
    assert [hit["snippet"][a:b] for a, b in hit["highlights"]] == ["canary"]
    bad = await client.post("/memory/search", json={"query": "canary", "context": "file"})
    assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_context"


def test_a_long_section_is_cut_with_a_marker_saying_what_to_read(tmp_path: Path) -> None:
    body = "\n".join(f"line {n} about the canary rollout" for n in range(400))
    write(tmp_path, "topics/long.md", "## Long\n" + body + "\n## Next\nshort\n")
    hit = {"path": "topics/long.md", "line_start": 5, "snippet": "x", "highlights": []}
    out = with_section(tmp_path, hit, ["canary"], cap=1024)
    assert out["section"] == {"line_start": 1, "line_end": 401, "cut": True}
    shown, marker = out["snippet"].rsplit("\n", 1)
    assert len(shown.encode()) <= 1024
    assert marker.startswith("[section cut at 1024 bytes: lines ") and "memory_read" in marker
    assert all(out["snippet"][a:b] == "canary" for a, b in out["highlights"])


def test_an_unreadable_file_leaves_the_hit_as_it_was(tmp_path: Path) -> None:
    hit = {"path": "gone.md", "line_start": 1, "snippet": "x", "highlights": []}
    assert with_section(tmp_path, hit, ["x"]) is hit


async def test_read_takes_a_line_range(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    write(tmp_path / "memory", "daily/2026-05-21.md", DAILY)
    client = await sidecar_client()
    resp = await client.get("/memory/read", params={"path": "daily/2026-05-21.md", "line_start": "3", "line_end": "4"})
    body = await resp.json()
    assert resp.status == 200, body
    assert body["content"] == "## Deploy\nWe rolled the api back at 14:02 after the canary failed.\n"
    assert (body["line_start"], body["line_end"], body["total_lines"]) == (3, 4, 12)
    tail = await (await client.get("/memory/read", params={"path": "daily/2026-05-21.md", "line_start": "11"})).json()
    assert tail["content"] == "## Lunch\nTacos again.\n"
    whole = await (await client.get("/memory/read", params={"path": "daily/2026-05-21.md"})).json()
    assert whole["content"] == DAILY and "line_start" not in whole
    for params in ({"line_start": "0"}, {"line_start": "x"}, {"line_start": "5", "line_end": "2"}):
        bad = await client.get("/memory/read", params={"path": "daily/2026-05-21.md", **params})
        assert bad.status == 400 and (await bad.json())["error"]["code"] == "invalid_line_range", params
