"""Changed values found by what the newer line says ("replaced ... with", "now", "instead of",
"moved from"), kept under ``## Superseded`` with their dates, and the current value ranked first;
the recency prior that ranks newer dated notes first on the same match."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from sidecar.clock import utcnow
from sidecar.consolidate.changes import changed_by_signal
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import Said, claim
from sidecar.retrieval.standing import standing
from sidecar.server.app import create_app
from sidecar.settings import load_settings

START = date(2026, 1, 5)


def _said(*lines: tuple[int, str]) -> list[Said]:
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), 0), claim(text))
        for d, text in lines
    ]


def test_a_signalled_change_supersedes_the_older_value_and_nothing_else() -> None:
    said = _said(
        (0, "We use Jenkins for continuous integration."),
        (1, "The nightly backup job runs at 01:00 UTC."),
        (2, "Postgres on the primary is version 14.9."),
        (3, "Reviewed the continuous integration dashboard with Priya."),
        (4, "The billing service listens on port 8080."),
        (40, "We replaced Jenkins with Buildkite for continuous integration."),
        (41, "The nightly backup job now runs at 03:00 UTC instead of 01:00."),
        (42, "Postgres on the primary was upgraded to version 16.2."),
        (43, "The billing team now meets on Tuesdays."),
    )
    stale = changed_by_signal(said)
    assert stale[normalised("We use Jenkins for continuous integration.")].text.startswith("We replaced Jenkins")
    assert stale[normalised("The nightly backup job runs at 01:00 UTC.")].text.startswith("The nightly backup job now")
    assert stale[normalised("Postgres on the primary is version 14.9.")].text.startswith("Postgres on the primary was")
    assert normalised("Reviewed the continuous integration dashboard with Priya.") not in stale  # an event
    assert normalised("The billing service listens on port 8080.") not in stale  # another subject
    assert len(stale) == 3


def test_a_value_said_again_after_the_change_stays_current() -> None:
    said = _said(
        (0, "We use Jenkins for continuous integration."),
        (40, "We replaced Jenkins with Buildkite for continuous integration."),
        (50, "We use Jenkins for continuous integration."),
    )
    assert normalised("We use Jenkins for continuous integration.") not in changed_by_signal(said)


def test_newer_dated_notes_rank_first_on_the_same_match() -> None:
    today = date(2026, 6, 1)
    newer = standing("daily/2026-05-30.md", "Log", today)
    older = standing("daily/2026-01-30.md", "Log", today)
    assert 0.8 <= older < newer <= 1.0
    assert standing("archive/daily/2026-05-30.md", "Log", today) < newer
    assert standing("daily/summaries/2026-W20.md", "Ops", today) > standing("daily/summaries/2026-W02.md", "Ops", today)
    assert standing("AGENT.md", "Consolidated", today) == 1.0
    assert standing("daily/2026-06-09.md", "Log", today) == 1.0  # a day ahead is not above today
    assert standing("daily/summaries/2026-W99.md", "Ops", today) == 1.0  # no such week: undated


async def test_after_a_run_search_ranks_the_changed_value_first(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    monday = utcnow().date() - timedelta(days=70 + utcnow().date().weekday())
    notes = {0: "We use Jenkins for continuous integration.", 3: "We use Jenkins for continuous integration."}
    notes |= {
        9: "We use Jenkins for continuous integration.",
        40: "We replaced Jenkins with Buildkite for continuous integration.",
    }
    for offset, line in notes.items():
        note = root / "daily" / f"{(monday + timedelta(days=offset)).isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"## Ops\n- {line}\n- Rotated log shard {offset} by hand.\n")
    report = await consolidate(
        root, since=None, until=utcnow().date(), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert {s.line.lstrip("- ") for s in report.superseded} >= {"We use Jenkins for continuous integration."}
    summaries = "\n".join(p.read_text() for p in sorted((root / "daily" / "summaries").glob("*.md")))
    assert "## Superseded\n- We use Jenkins for continuous integration. <!-- superseded" in summaries
    settings = load_settings(
        {"memory_dir": str(root), "crew_dir": str(tmp_path / "crew"), "embedder": "none", "watch": "false"}, environ={}
    )
    async with TestClient(TestServer(create_app(settings))) as client:
        body = {"query": "what do we use for continuous integration", "limit": 10}
        hits = (await (await client.post("/memory/search", json=body)).json())["results"]
    assert "Buildkite" in hits[0]["snippet"]
