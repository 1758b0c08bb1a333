"""Conversations (transcripts of turns) in daily notes, consolidated on real tiers: the week's
summary holds one line per conversation saying where it is in full, the archive holds it whole
and a search still finds a turn there; a list of labelled values or a log with a few labelled
lines is no conversation and is summarised line by line."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.clock import utcnow
from sidecar.consolidate.conversation import conversations
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.periods import Line
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.server.app import create_app
from sidecar.settings import Settings

Client = TestClient[Any, Any]
MONDAY = date(2026, 1, 5)
TURNS = [
    "Caroline: Hey Mel! Good to see you! How have you been?",
    "Melanie: Swamped with the kids and work. What's new with you?",
    "Caroline: I went to a support group yesterday and it was so powerful.",
    "Melanie: Wow! I painted a lake sunrise last year, it is special to me.",
    "Caroline: The colours blend nicely. I am researching adoption agencies now.",
    "Melanie: Take care! I'm off to go swimming with the kids.",
]
LABELS = ["Owner: Priya", "Port: 8080", "Runbook: runbooks/billing-12.md", "Vault: secret/billing/prod-311"]
#: A session's labelled bullets: each label a field said several times in a row, not a speaker.
SESSION = [
    "Context: the nightly export skips archived tenants.",
    "Done: read `exports/nightly.py` and the tenant filter.",
    "Done: `pytest tests/exports -q` -> 42 passed.",
    "Done: added archived tenants behind a flag.",
    "Learned: the export bucket is `ex-nightly-eu`, written only by the export worker.",
    "Done: opened PR #311.",
    "Done: CI green on the second run.",
    "Learned: the export worker retries three times, then pages Ruth.",
    "Next: ask Ruth about the retention window.",
]
LOG = ["Standup: Priya is blocked on the billing schema (ticket 4411)."] + [
    f"Reviewed PR #{n} for the billing service." for n in range(4)
]


def _write(root: Path, day: date, heading: str, lines: list[str]) -> str:
    rel = f"daily/{day.isoformat()}.md"
    (root / "daily").mkdir(parents=True, exist_ok=True)
    with (root / rel).open("a", encoding="utf-8") as note:
        note.write(f"# {day}\n\n## {heading}\n" + "".join(f"- {line}\n" for line in lines))
    return rel


def test_what_is_a_conversation() -> None:
    def lines(texts: list[str]) -> list[Line]:
        return [Line(f"- {t}", "daily/2026-01-05.md", "Log") for t in texts]

    rest, talks = conversations(lines(TURNS))
    assert rest == [] and [(t.speakers, len(t.turns)) for t in talks] == [(("Caroline", "Melanie"), 6)]
    for texts in (LABELS, LOG, TURNS[:3] + LOG, SESSION):  # labels said once each; a log's odd label; fields
        rest, talks = conversations(lines(texts))
        assert talks == [] and [ln.text for ln in rest] == [f"- {t}" for t in texts]


async def test_a_conversation_becomes_a_line_and_stays_whole_in_the_archive(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    talk = _write(root, MONDAY, "Log", TURNS)
    facts = _write(root, MONDAY + timedelta(days=1), "Billing", LABELS + LOG)
    before = (root / talk).read_text()
    report = await consolidate(
        root, since=None, until=MONDAY + timedelta(days=30), summariser=ExtractiveSummariser(), dry_run=False
    )
    summary = (root / "daily/summaries/2026-W02.md").read_text()
    line = "- Conversation of Caroline and Melanie on 2026-01-05, 6 turns (in full: archive/daily/2026-01-05.md)"
    assert line in summary.splitlines()
    assert not any(turn in summary for turn in TURNS)
    assert all(label in summary for label in LABELS) and "Priya is blocked" in summary
    assert (root / "archive" / talk).read_text() == before
    assert (root / "archive" / facts).exists()
    assert [(d.text, d.sources, d.reason, d.kept_as) for d in report.dropped if d.reason == "conversation"] == [
        ("6 turns", (talk,), "conversation", line)
    ]
    assert "a conversation, as the digest" in report.to_text()


async def test_a_turn_is_found_in_the_archive_after_a_run(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    old = utcnow().date() - timedelta(days=35)
    talk = _write(memory_dir, old, "Log", TURNS)
    client: Client = await aiohttp_client(create_app(make_settings()))
    resp = await client.post("/memory/consolidate", json={})
    assert resp.status == 200, await resp.text()
    assert not (memory_dir / talk).exists()
    await client.post("/memory/reindex", json={})
    resp = await client.post("/memory/search", json={"query": "researching adoption agencies", "limit": 3})
    paths = [hit["path"] for hit in (await resp.json())["results"]]
    assert f"archive/{talk}" in paths, paths  # the turn, with the turns around it
    assert not any(p.startswith("daily/summaries/") for p in paths[: paths.index(f"archive/{talk}")]), paths
