"""The consolidation job on real tiers in tmp dirs: six weeks of daily notes with planted facts
(some repeated on several days, some said twice in one week in other words), then the last days.

A run killed part-way is a real kill: the job runs in a child process with a slow summariser and
gets SIGKILL while it writes; the ``stop_after`` steps cover each boundary between steps.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import Candidate, normalised, update_evergreen
from sidecar.consolidate.report import Report
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.episodic.sqlite_store import SqliteJournalStore

FIRST_DAY = date(2026, 1, 5)  # a Monday: ISO week 2026-W02
WEEKS = 6
UNTIL = date(2026, 2, 23)  # weeks W02..W07 are over a week old; 02-16 onwards stays
RECENT = [UNTIL - timedelta(days=n) for n in range(8)]
REPEATED = {
    "- The staging database password rotates every Monday morning": [0, 9, 23],
    "- Deploys go through make ship on the bastion host": [2, 15, 30, 37],
}
RECENT_REPEATED = "- The lint job now runs ruff before mypy in CI"
STANDUP = [
    "- Standup with the platform team, nothing blocking in sprint {sprint}",
    "- standup with the platform team: nothing blocking, sprint {sprint}",
    "- Standup with platform team, nothing is blocking in sprint {sprint}.",
]


def _days() -> list[date]:
    return [FIRST_DAY + timedelta(days=w * 7 + d) for w in range(WEEKS) for d in range(5)]


def _unique_fact(day: date) -> str:
    return f"- Ticket OPS-{day.toordinal() % 10_000} closed after reviewing the {day.strftime('%A')} backlog"


def _note(day: date) -> str:
    offset = (day - FIRST_DAY).days
    week = offset // 7
    lines = [f"# {day.isoformat()}", "", "## Work", _unique_fact(day)]
    lines += [fact for fact, offsets in REPEATED.items() if offset in offsets]
    lines += ["", "## Log", STANDUP[min(day.weekday() // 2, 2)].format(sprint=week + 10)]
    if day.weekday() == 4:
        lines += ["```sh", f"make release TAG=v{week}.0", "```"]
    return "\n".join(lines) + "\n"


def _make_tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    (root / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    (root / "pins.md").write_text("- Keep replies short.\n")
    for day in _days():
        (root / "daily" / f"{day.isoformat()}.md").write_text(_note(day))
    for day in RECENT:
        (root / "daily" / f"{day.isoformat()}.md").write_text(f"# {day}\n\n{RECENT_REPEATED}\n")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _live_bytes(root: Path) -> int:
    return sum(len(data) for rel, data in _snapshot(root).items() if not rel.startswith(("archive/", ".")))


async def _run(root: Path, **kwargs: object) -> Report:
    options: dict[str, object] = {"since": None, "until": UNTIL, "summariser": ExtractiveSummariser(), "dry_run": False}
    options.update(kwargs)
    return await consolidate(root, **options)  # type: ignore[arg-type]


@pytest.fixture
def tier(tmp_path: Path) -> Path:
    root = tmp_path / "tier"
    _make_tier(root)
    return root


async def test_weeks_are_summarised_promoted_and_archived(tier: Path) -> None:
    before = _snapshot(tier)
    live_before = _live_bytes(tier)
    report = await _run(tier)

    assert report.periods == [f"2026-W{n:02d}" for n in range(2, 8)]
    after = _snapshot(tier)
    for period in report.periods:
        assert f"daily/summaries/{period}.md" in after
    # every planted fact is in its week's summary, or listed as left out with its note
    for day in _days():
        source = f"daily/{day.isoformat()}.md"
        summary = after[f"daily/summaries/{day.strftime('%G-W%V')}.md"].decode()
        summary_lines = {normalised(line) for line in summary.splitlines()}
        for line in _note(day).splitlines():
            if not line.startswith("- "):
                continue
            dropped = [d for d in report.dropped if d.text.strip() == line.strip() and source in d.sources]
            assert normalised(line) in summary_lines or dropped, (source, line)
            for d in dropped:
                assert d.reason == "budget" or normalised(d.kept_as or "") in summary_lines
        assert f"make release TAG=v{(day - FIRST_DAY).days // 7}.0" in summary
    # the three standup phrasings of a week are one line
    for p in report.periods:
        summary_text = after[f"daily/summaries/{p}.md"].decode().lower()
        assert sum("standup" in ln for ln in summary_text.splitlines() if not ln.startswith("#")) == 1
    assert "<!-- from daily/2026-01-05.md, daily/2026-01-06.md" in after["daily/summaries/2026-W02.md"].decode()

    agent = after["AGENT.md"].decode()
    assert agent.startswith("# Agent\n\n- I answer in English.\n\n## Consolidated\n")
    assert agent.count("## Consolidated") == 1
    for fact, offsets in REPEATED.items():
        sources = ", ".join(f"daily/{(FIRST_DAY + timedelta(days=o)).isoformat()}.md" for o in offsets)
        assert agent.count(fact) == 1
        assert f"{fact} <!-- from {sources} -->" in agent
    assert RECENT_REPEATED not in agent  # recent notes are not in the plan
    assert [p.line for p in report.promoted] == list(REPEATED)

    for day in _days():
        name = f"{day.isoformat()}.md"
        assert f"daily/{name}" not in after
        assert after[f"archive/daily/{name}"] == before[f"daily/{name}"]
    for day in RECENT:
        rel = f"daily/{day.isoformat()}.md"
        assert after[rel] == before[rel]
    assert after["pins.md"] == before["pins.md"]
    assert not (tier / ".consolidate" / "state.json").exists()
    assert not [p for p in tier.rglob("*.tmp")]

    # (a week of five short unique notes is no smaller summarised: the bench measures the shrinking)
    assert report.live_bytes_before == live_before
    assert report.live_bytes_after == _live_bytes(tier)
    assert report.bytes_after == sum(len(d) for r, d in after.items() if not r.startswith("."))
    assert len(report.archived) == len(_days())
    text = report.to_text()
    assert "6 period(s), 30 daily note(s) archived" in text
    assert "Deploys go through make ship" in text
    assert report.to_json()["promoted"][0]["sources"] == (
        "daily/2026-01-05.md",
        "daily/2026-01-14.md",
        "daily/2026-01-28.md",
    )


async def test_dry_run_writes_nothing_and_reports_the_same(tmp_path: Path) -> None:
    dry, real = tmp_path / "dry", tmp_path / "real"
    _make_tier(dry)
    _make_tier(real)
    before = _snapshot(dry)
    dry_report = await _run(dry, dry_run=True)
    assert _snapshot(dry) == before
    real_report = await _run(real)
    dry_json, real_json = dry_report.to_json(), real_report.to_json()
    assert dry_json.pop("dry_run") is True
    assert real_json.pop("dry_run") is False
    assert dry_json == real_json
    assert "(dry run)" in dry_report.to_text()
    assert "would archived" not in dry_report.to_text()


async def test_a_second_run_changes_nothing(tier: Path) -> None:
    await _run(tier)
    done = _snapshot(tier)
    again = await _run(tier)
    assert _snapshot(tier) == done
    assert again.periods == [] and again.archived == [] and again.promoted == []


@pytest.mark.parametrize("step", ["plan", "summaries", "supersede", "promotions", "operators", "archive", "journal"])
async def test_a_run_stopped_after_any_step_is_finished_by_the_next(tmp_path: Path, step: str) -> None:
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    _make_tier(whole)
    _make_tier(stopped)
    journals = []
    for root in (whole, stopped):
        journals.append(await SqliteJournalStore.open(root.parent / f"{root.name}.db"))
    try:
        await _run(whole, journal=journals[0], agent_id="a1")
        first = await _run(stopped, journal=journals[1], agent_id="a1", stop_after=step)
        assert (stopped / ".consolidate" / "state.json").exists()
        assert not first.resumed
        resumed = await _run(stopped, journal=journals[1], agent_id="a1")
        assert resumed.resumed
        assert _snapshot(stopped) == _snapshot(whole)
        ids = [await _entry_ids(store) for store in journals]
        assert ids[0] == ids[1] and len(ids[0]) == WEEKS
    finally:
        for store in journals:
            await store.aclose()


async def _entry_ids(store: SqliteJournalStore) -> list[str]:
    return sorted(entry.id for entry in await store.recent("default", 100))


async def test_the_week_records_a_journal_entry_that_supports_its_evidence(tier: Path, tmp_path: Path) -> None:
    from sidecar.episodic.entry import JournalEntry

    store = await SqliteJournalStore.open(tmp_path / "journal.db")
    try:
        evidence = await store.append(JournalEntry("default", "task.done", "closed OPS tickets"))
        note = tier / "daily" / "2026-01-07.md"
        note.write_text(note.read_text() + f"- Details are in journal entry {evidence.id}\n")
        report = await _run(tier, journal=store, agent_id="a1")
        entries = await store.fetch("default", report.journal_entries)
        week = entries[report.journal_entries[0]]
        assert week.entry_type == "memory.consolidated"
        assert week.payload["period"] == "2026-W02"
        assert week.payload["sources"][0] == "daily/2026-01-05.md"
        supports = await store.relations_of("default", [week.id], "supports")
        assert [(r.src_entry_id, r.dst_entry_id) for r in supports] == [(week.id, evidence.id)]
    finally:
        await store.aclose()


async def test_what_the_evergreen_cap_leaves_out_is_reported(tier: Path) -> None:
    agent_before = (tier / "AGENT.md").read_bytes()
    first = next(iter(REPEATED))
    sources = ", ".join(f"daily/{(FIRST_DAY + timedelta(days=o)).isoformat()}.md" for o in REPEATED[first])
    one = update_evergreen(agent_before.decode(), [Candidate(first, tuple(sources.split(", ")))], 1 << 20).text
    cap = len((one or "").encode())  # one fact, not two
    report = await _run(tier, evergreen_cap_bytes=cap)
    agent = (tier / "AGENT.md").read_bytes()
    assert len(agent) <= cap
    assert [p.line for p in report.promoted] == [next(iter(REPEATED))]
    assert [(n.line, n.reason) for n in report.not_promoted] == [(list(REPEATED)[1], "cap")]
    assert "over the evergreen cap" in report.to_text()


async def test_a_tight_budget_lists_every_line_it_leaves_out(tier: Path) -> None:
    report = await _run(tier, section_budget=80)
    budget = [d for d in report.dropped if d.reason == "budget"]
    assert budget
    for d in budget:
        summary = (tier / "daily" / "summaries" / f"{d.period}.md").read_text()
        assert d.text not in summary
        assert all((tier / "archive" / "daily" / s.split("/")[-1]).read_text().count(d.text) for s in d.sources)


async def test_a_note_written_again_after_its_archiving_is_joined_to_the_archive(tier: Path) -> None:
    await _run(tier)
    late, late_text = (
        tier / "daily" / "2026-01-06.md",
        "# 2026-01-06\n\n- A late note about the VPN certificate renewal\n",
    )
    late.write_text(late_text)
    archived = (tier / "archive" / "daily" / "2026-01-06.md").read_text()
    report = await _run(tier)
    assert report.periods == ["2026-W02"]
    assert not late.exists()
    assert (tier / "archive" / "daily" / "2026-01-06.md").read_text() == archived + "\n" + late_text
    assert "VPN certificate renewal" in (tier / "daily" / "summaries" / "2026-W02.md").read_text()
    assert (tier / "AGENT.md").read_text().count(next(iter(REPEATED))) == 1


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from datetime import date
    from pathlib import Path
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    class Slow:
        async def summarise(self, items, budget):
            await asyncio.sleep(float(sys.argv[2]))
            return await ExtractiveSummariser().summarise(items, budget)
        async def aclose(self):
            return None

    asyncio.run(consolidate(Path(sys.argv[1]), since=None, until=date.fromisoformat(sys.argv[3]),
                            summariser=Slow(), dry_run=False))
    """
)


@pytest.mark.parametrize(
    ("delay", "wait_for", "then"),
    [(0.03, "daily/summaries/2026-W03.md", 0.02), (0.0, ".consolidate/state.json", 0.0), (0.0, "AGENT.md", 0.01)],
)
def test_a_killed_run_leaves_every_file_whole_and_the_next_finishes(
    tmp_path: Path, delay: float, wait_for: str, then: float
) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    _make_tier(whole)
    _make_tier(killed)
    asyncio.run(_run(whole))
    expected, original = _snapshot(whole), _snapshot(killed)
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(killed), str(delay), UNTIL.isoformat()], env=env)
    deadline = time.monotonic() + 15
    target = killed / wait_for
    start = target.stat().st_mtime_ns if target.exists() else None
    while child.poll() is None and time.monotonic() < deadline:
        if target.exists() and target.stat().st_mtime_ns != start:
            break
        time.sleep(0.001)
    time.sleep(then)
    child.send_signal(signal.SIGKILL)
    child.wait(10)
    if delay:  # the kill landed between two weeks' summaries: the plan is still recorded
        assert (killed / ".consolidate" / "state.json").exists()
    for rel, data in _snapshot(killed).items():
        if rel.startswith((".consolidate/", "daily/summaries/")) or rel.endswith(".tmp"):
            continue  # the plan, a summary from the run, or a temp file the next run replaces
        assert data in (original.get(rel), expected.get(rel)), rel
    asyncio.run(_run(killed))
    assert not [p for p in (killed / ".consolidate").glob("*")]
    for rel in [rel for rel in _snapshot(killed) if rel.endswith(".tmp")]:
        (killed / rel).unlink()  # a temp file the kill left: hidden, so no memory; the sidecar sweeps them at start
    assert _snapshot(killed) == expected
