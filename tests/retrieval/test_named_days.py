"""A promoted line's provenance comment may name a note for a day that does not exist (a hand
edit of ``AGENT.md``: ``daily/2026-02-30.md``). Search reads such a name as no day: the line is
as new as the days it names that are days, and a query that reads it is answered, not failed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.memory import write

TODAY = datetime.now(UTC).date()


async def test_a_search_reading_a_line_that_names_no_day_is_answered(sidecar_client: Any, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    write(
        root,
        "AGENT.md",
        "# Agent\n\n## Consolidated\n- Our flour comes from Millbrook Mills <!-- from daily/2026-02-30.md -->\n",
    )
    day = TODAY - timedelta(days=3)
    write(root, f"daily/{day}.md", f"# {day}\n\n## Log\n- The flour invoices say Harvest Grain Co from now on.\n")
    client = await sidecar_client()
    resp = await client.post("/memory/search", json={"query": "who supplies our flour", "limit": 10})
    assert resp.status == 200, await resp.text()
    paths = [hit["path"] for hit in (await resp.json())["results"]]
    assert "AGENT.md" in paths and f"daily/{day}.md" in paths
