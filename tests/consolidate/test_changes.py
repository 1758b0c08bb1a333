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


def _dated(*lines: tuple[int, str]) -> list[Said]:
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), 0), claim(text))
        for d, text in lines
    ]


def test_a_signalled_change_supersedes_the_older_value_and_nothing_else() -> None:
    said = _dated(
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
    said = _dated(
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


def test_log_lines_that_differ_in_a_number_are_no_changes() -> None:
    said = _dated(
        (0, "Standup: Dmitri is blocked on the inventory layer (ticket 1591)."),
        (1, "The billing canary looked solid; 12 errors in the first hour."),
        (40, "Standup: Dmitri is blocked on the inventory layer (ticket 8389)."),
        (41, "The billing canary looked solid; 30 errors in the first hour."),
    )
    assert changed_by_signal(said) == {}


def test_a_signalled_line_that_repeats_the_old_one_whole_supersedes_it() -> None:
    old = "catalog lives on ovh-gra7."
    said = _dated((0, old), (40, "catalog was migrated off ovh-gra7 and lives on gcp-europe-west4 now."))
    assert changed_by_signal(said)[normalised(old)].text.startswith("catalog was migrated off")


def test_other_subjects_are_not_changes() -> None:
    said = _dated(
        # another team: a word that differs is no value
        (0, "The platform on-call hands over on Monday at 9:00."),
        (40, "The payments on-call hands over on Friday at 10:00."),
        # subjects named by values, said side by side
        (1, "The Redis cluster runs version 6.2."),
        (2, "The Kafka cluster runs version 2.8."),
        (41, "The Redis cluster runs version 6.2."),
        (42, "The Kafka cluster runs version 2.8."),
        # a line that opens with its value: two tickets
        (3, "Ticket OPS-4411 closed after the review."),
        (43, "Ticket OPS-4412 closed after the review."),
        # a shared old value is no shared subject
        (4, "The invoice export kicks off at 03:30 UTC."),
        (44, "The search reindex kicks off at 07:00 UTC instead of 03:30."),
    )
    assert changed_by_signal(said) == {}


async def test_a_run_with_no_week_due_retires_what_a_live_note_changed(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    old, new = "The catalog service lives on ovh-gra7.", "The catalog service moved from ovh-gra7 to gcp-europe-west4."
    for d in (0, 8, 15):  # three weeks: promoted to AGENT.md
        day = START + timedelta(days=d)
        (root / "daily" / f"{day}.md").write_text(
            f"## Ops\n- {old}\n- Rotated shard {d} by hand.\n- The user prefers tables over long bullet lists.\n"
        )
    first = await consolidate(
        root, since=None, until=START + timedelta(days=40), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert first.periods and old in (root / "AGENT.md").read_text()
    preferences = (root / "AGENT.md").read_text().partition("## Consolidated")[0]
    assert "## Preferences" in preferences and "The user prefers tables over long bullet lists." in preferences
    today = START + timedelta(days=41)
    (root / "daily" / f"{today}.md").write_text(f"## Ops\n- {new}\n")
    again = await consolidate(root, since=None, until=today, summariser=ExtractiveSummariser(), dry_run=False)
    assert again.periods == [] and (root / "daily" / f"{today}.md").exists()  # nothing rolled up
    summaries = sorted((root / "daily" / "summaries").glob("*.md"))
    for summary in summaries:
        text = summary.read_text()
        head, _, superseded = text.partition("## Superseded\n")
        assert old not in head and f"- {old} <!-- superseded {today} by daily/{today}.md -->" in superseded, text
    agent = (root / "AGENT.md").read_text()
    # the current line names the line it replaced, in its words, and the last day it was said
    was = f"<!-- was until {START + timedelta(days=15)}: the catalog service lives on ovh gra7 -->"
    assert old not in agent and f"- {new} {was} <!-- from daily/{today}.md -->" in agent
    assert agent.partition("## Consolidated")[0] == preferences  # left as it was, to the byte
    assert {s.where for s in again.superseded} == {*(f"daily/summaries/{p.name}" for p in summaries), "AGENT.md"}
    third = await consolidate(root, since=None, until=today, summariser=ExtractiveSummariser(), dry_run=False)
    assert third.superseded == [] and (root / "AGENT.md").read_text() == agent  # nothing twice
