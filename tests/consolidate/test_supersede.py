"""Facts whose value changed: the parser and the rule on lines, then the job on a real tier over
weeks (the old line kept under ``## Superseded``, the new one under ``## Changed``, the evergreen
line replaced, resumable), and search through a real app ranking the current value first."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import MIN_SOURCES, Candidate, is_event, normalised, update_evergreen
from sidecar.consolidate.report import Report
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import Said, claim, contradicts, superseded
from sidecar.server.app import create_app
from sidecar.settings import load_settings

MONDAY = date(2026, 1, 5)  # ISO week 2026-W02


# -- what a line claims, and when two lines disagree -------------------------------------------
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The staging db is db-stage-3.", "The staging db moved to db-stage-9."),
        ("- The on-call lead this quarter is Priya.", "- The on-call lead this quarter is now Marcus."),
        ("The on-call lead is Priya.", "The on-call lead is Marcus."),  # two short names
        ("Billing is owned by Alice.", "Billing is owned by Bob."),  # the same relation, another value
        ("The public API rate limit is 500 requests per minute.", "The public API rate limit was raised to 1200."),
        ("The docs site is built with mkdocs.", "The docs site was switched to sphinx."),
        ("Release branches are cut as release/2026.1.", "Release branches are now cut as release/2026.2."),
        ("The cache is Redis.", "The cache was replaced by Valkey."),
    ],
)
def test_a_changed_value_contradicts_the_old_one(old: str, new: str) -> None:
    a, b = claim(old), claim(new)
    assert a is not None and b is not None
    assert a.subject == b.subject
    assert contradicts(a, b)
    assert not contradicts(a, a)  # said again is not a change


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The team is remote.", "The team is small."),  # two properties, not one value changed
        ("The billing service is deployed on Fridays.", "The billing service is deployed with helm."),
        ("The staging db is db-stage-3.", "The prod db is db-prod-1."),  # another subject
    ],
)
def test_two_things_said_of_a_subject_are_both_kept(old: str, new: str) -> None:
    a, b = claim(old), claim(new)
    assert a is not None and b is not None
    assert not contradicts(a, b)


@pytest.mark.parametrize(
    "line",
    [
        "It is done.",  # a pronoun is no subject
        "Is the staging db db-stage-3?",
        "The staging db is db-stage-3. The prod db is db-prod-1.",  # two sentences: which one?
        "Standup: nothing blocking.",
        "Deployed billing build 1a2b3c to staging.",
        "```sh\nX is y\n```",
        "Note: the staging db is db-stage-3.",  # a label, not a subject
    ],
)
def test_lines_that_state_no_single_value_make_no_claim(line: str) -> None:
    assert claim(line) is None


def _dated(text: str, day: int, where: str = "") -> Said:
    found = claim(text)
    assert found is not None
    when = MONDAY + timedelta(days=day)
    return Said(text, where or f"daily/{when.isoformat()}.md", (when, 0), found)


def test_every_older_value_is_superseded_by_the_first_change_after_it() -> None:
    a = _dated("The staging db is db-stage-3.", 0)
    b = _dated("The staging db moved to db-stage-9.", 10)
    b_again = _dated("The staging db moved to db-stage-9.", 12)
    c = _dated("The staging db moved to db-stage-12.", 20)
    stale = superseded([c, a, b_again, b])  # any order
    assert stale == {normalised(a.text): b, normalised(b.text): c}  # c is current; b changed the value first


def test_an_old_value_said_again_after_the_change_is_current_again() -> None:
    a = _dated("The on-call lead is Priya.", 0)
    b = _dated("The on-call lead is Marcus.", 5)
    a_again = _dated("The on-call lead is Priya.", 9)
    stale = superseded([a, b, a_again])
    assert normalised(a.text) not in stale
    assert stale[normalised(b.text)] is a_again


def test_past_tense_lines_are_events_not_facts() -> None:
    assert is_event("deployed billing build 1a2b to staging")
    assert is_event("ran the test suite 400 passed")
    assert not is_event("the user prefers short answers")
    assert not is_event("feed the cat twice a day")  # "-eed" is no past tense


def test_a_retired_consolidated_line_leaves_and_others_stay_byte_for_byte() -> None:
    current = (
        "# Agent\n\n- The staging db is db-stage-3.\n\n## Consolidated\n\n"
        "- The staging db is db-stage-3. <!-- from daily/2026-01-05.md -->\n"
        "- Deploys go through make ship. <!-- from daily/2026-01-06.md -->\n"
    )
    new = Candidate("The staging db moved to db-stage-9.", ("daily/2026-01-20.md",))
    update = update_evergreen(current, [new], 16_384, retire={normalised("The staging db is db-stage-3.")})
    assert update.text is not None
    assert update.removed == ("- The staging db is db-stage-3. <!-- from daily/2026-01-05.md -->",)
    assert update.text.startswith("# Agent\n\n- The staging db is db-stage-3.\n")  # written by hand: kept
    assert "- Deploys go through make ship. <!-- from daily/2026-01-06.md -->\n" in update.text
    assert "- The staging db moved to db-stage-9. <!-- from daily/2026-01-20.md -->\n" in update.text
    assert update.text.count("db-stage-3") == 1


# -- the job over weeks --------------------------------------------------------------------------
OLD = "- The staging db is db-stage-3."
NEW = "- The staging db moved to db-stage-9."
ROUTINE = "- Deployed build {n} to staging."


def _write(root: Path, day: date, *lines: str) -> None:
    (root / "daily").mkdir(parents=True, exist_ok=True)
    (root / "daily" / f"{day.isoformat()}.md").write_text(
        f"# {day.isoformat()}\n\n## Notes\n" + "\n".join(lines) + "\n"
    )


def _tier(root: Path) -> None:
    """W02: the old value on three days; W03: routine."""
    root.mkdir(parents=True)
    (root / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for n in range(3):
        _write(root, MONDAY + timedelta(days=n), OLD, ROUTINE.format(n=n), "- The ledger service listens on port 7001.")
    for n in range(3):
        _write(root, MONDAY + timedelta(days=7 + n), ROUTINE.format(n=10 + n))


def _change(root: Path) -> None:
    """W04: the value changes."""
    _write(root, MONDAY + timedelta(days=16), ROUTINE.format(n=20), NEW)
    _write(root, MONDAY + timedelta(days=17), ROUTINE.format(n=21))


async def _run(root: Path, until: date, **kwargs: Any) -> Report:
    return await consolidate(root, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, **kwargs)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


AFTER_W02 = MONDAY + timedelta(days=14)  # W02 rolled up, W03 not yet
AFTER_W04 = MONDAY + timedelta(days=28)  # W03 and W04 rolled up


async def test_a_changed_value_is_superseded_everywhere_and_the_current_one_kept(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _tier(root)
    first = await _run(root, AFTER_W02)
    assert OLD.removeprefix("- ") in (root / "AGENT.md").read_text()  # said on three days: promoted
    assert first.superseded == []
    _change(root)

    second = await _run(root, AFTER_W04)
    w02 = (root / "daily/summaries/2026-W02.md").read_text()
    w04 = (root / "daily/summaries/2026-W04.md").read_text()
    agent = (root / "AGENT.md").read_text()
    # the old line: kept, under Superseded, saying when and where it changed
    notes, _, superseded_part = w02.partition("## Superseded\n")
    assert "db-stage-3" not in notes
    assert f"{OLD} <!-- superseded 2026-01-21 by daily/2026-01-21.md -->" in superseded_part
    # the new line: first in its week, under Changed, whatever the budget
    assert w04.index("## Changed") < w04.index("## Notes")
    assert NEW in w04.split("## Notes")[0]
    # the evergreen file: the current value replaces the old one; the rest stays
    assert "db-stage-3" not in agent and NEW.removeprefix("- ") in agent
    assert "- I answer in English." in agent and "port 7001" in agent
    where = {(s.where, s.by_where) for s in second.superseded}
    assert ("daily/summaries/2026-W02.md", "daily/2026-01-21.md") in where
    assert ("AGENT.md", "daily/2026-01-21.md") in where
    assert "superseded by a newer value" in second.to_text()

    done = _snapshot(root)
    again = await _run(root, AFTER_W04)
    assert _snapshot(root) == done and again.superseded == []


async def test_a_line_written_by_hand_is_reported_never_changed(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _tier(root)
    (root / "AGENT.md").write_text("# Agent\n\n- The staging db is db-stage-3.\n")
    _change(root)
    report = await _run(root, AFTER_W04)
    agent = (root / "AGENT.md").read_text()
    assert agent.startswith("# Agent\n\n- The staging db is db-stage-3.\n")
    assert [s.where for s in report.superseded if s.where.startswith("AGENT.md")] == [
        "AGENT.md (written by hand: left as it is)"
    ]


async def test_a_run_stopped_after_the_supersede_step_is_finished_by_the_next(tmp_path: Path) -> None:
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    for root in (whole, stopped):
        _tier(root)
        await _run(root, AFTER_W02)
        _change(root)
    await _run(whole, AFTER_W04)
    await _run(stopped, AFTER_W04, stop_after="supersede")
    assert "## Superseded" in (stopped / "daily/summaries/2026-W02.md").read_text()
    resumed = await _run(stopped, AFTER_W04)
    assert resumed.resumed
    assert _snapshot(stopped) == _snapshot(whole)


async def test_a_fact_said_once_a_week_for_three_weeks_is_promoted(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    root.mkdir()
    fact = "- The ledger service listens on port 7001."
    event = "- Deployed the ledger service to staging."
    for week in range(3):
        day = MONDAY + timedelta(days=7 * week)
        _write(root, day, fact, event, ROUTINE.format(n=week))
        _write(root, day + timedelta(days=1), event)
    reports = [await _run(root, MONDAY + timedelta(days=7 * week + 14)) for week in range(3)]
    assert [len(r.promoted) for r in reports[:2]] == [0, 0]
    promoted = {p.line: p.sources for p in reports[2].promoted}
    assert set(promoted) == {fact}  # the event line was in six notes: never promoted
    assert len(promoted[fact]) == MIN_SOURCES
    assert set(promoted[fact]) == {"daily/summaries/2026-W02.md", "daily/summaries/2026-W03.md", "daily/2026-01-19.md"}


async def test_search_ranks_the_current_value_above_archived_and_superseded_text(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _tier(root)
    await _run(root, AFTER_W02)
    _change(root)
    await _run(root, AFTER_W04)
    settings = load_settings(
        {"memory_dir": str(root), "crew_dir": str(tmp_path / "crew"), "embedder": "none", "watch": "false"},
        environ={},
    )
    async with TestClient(TestServer(create_app(settings))) as client:
        answers = {}
        for limit in (5, 30):  # five: what an agent reads; thirty: every hit the query earns
            resp = await client.post("/memory/search", json={"query": "staging db", "limit": limit, "explain": True})
            answers[limit] = await resp.json()
            assert resp.status == 200, answers[limit]
    top, every = answers[5]["results"], answers[30]["results"]
    assert "db-stage-9" in top[0]["snippet"] and not top[0]["path"].startswith("archive/")
    old_ranks = [i for i, h in enumerate(top) if "db-stage-3" in h["snippet"]]
    assert old_ranks and min(old_ranks) > 0
    # the old value's line, in three archived notes and the week's Superseded section, takes one slot of five
    assert len(old_ranks) == 1
    stood = {(h["path"], h["heading"].rsplit(" > ", 1)[-1]): h["explain"]["standing"] for h in every}
    # superseded and archived text keep a quarter and a half of their score, less their age (at most 20%)
    assert 0.25 * 0.8 <= stood[("daily/summaries/2026-W02.md", "Superseded")] <= 0.25
    assert all(0.5 * 0.8 <= f <= 0.5 for (path, _), f in stood.items() if path.startswith("archive/"))
    # a hit moved for saying a line shown above keeps its score: the rest of the answer is best first
    kept = [h["score"] for h in every if "db-stage" not in h["snippet"]]
    assert kept == sorted(kept, reverse=True)
