"""The lines a week's summary leaves out over its bound: kept in ``archive/summaries/<week>.md``
(out of the tier's cap and the block), each a section of its own, ranked by search as live text,
and retired under ``## Superseded`` there when a newer note changes them. Real tiers in tmp dirs,
the extractive summariser."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from sidecar.consolidate.archive import bound_archive
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.report import Report
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import SUPERSEDED
from sidecar.consolidate.weekly import rest_path
from sidecar.index.chunker import chunk_markdown
from sidecar.retrieval.standing import ARCHIVED, standing
from sidecar.server.app import create_app
from sidecar.settings import load_settings
from sidecar.write.usage import capped_bytes

FIRST_DAY = date(2026, 1, 5)  # a Monday: week 2026-W02
UNTIL = date(2026, 2, 23)


def _words(rng: random.Random, n: int) -> list[str]:
    return ["".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3)) for _ in range(n)]


def _facts(day: int) -> list[str]:
    """Forty lines a day sharing no word but stopwords: facts, no mould, far over a week's bound."""
    rng = random.Random(day)
    w = _words(rng, 240)
    return [f"The {w[k]} {w[k + 1]} is {w[k + 2]} {w[k + 3]} with {w[k + 4]} {w[k + 5]}." for k in range(0, 240, 6)]


def _chores(day: int) -> list[str]:
    """Ten lines of work done a day with no value in them, of no mould: a log's second part."""
    rng = random.Random(-day)
    w = _words(rng, 20)
    return [f"Tidied the {w[k]} {w[k + 1]} shelf." for k in range(0, 20, 2)]


def _routine(day: date) -> list[str]:
    """A week's mould: the same words with other numbers on every day (``routine.py``)."""
    k = day.toordinal() % 997
    return [f"Deploy {k * 7 + n} of billing finished in {n + 3} minutes on runner {n}." for n in range(12)]


def _make_tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    for w in range(6):
        for d in range(5):
            day = FIRST_DAY + timedelta(days=w * 7 + d)
            lines = [*_routine(day), *((*_facts(w * 7 + d), *_chores(w * 7 + d)) if w == 0 else ())]
            body = "".join(f"- {line}\n" for line in lines)
            (root / "daily" / f"{day.isoformat()}.md").write_text(f"# {day.isoformat()}\n\n## Log\n{body}")


async def _run(root: Path, until: date = UNTIL) -> Report:
    return await consolidate(root, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False)


@pytest.mark.slow
async def test_the_lines_a_summary_leaves_out_are_kept_apart_out_of_the_cap(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    report = await _run(root)
    summary = (root / "daily" / "summaries" / "2026-W02.md").read_text()
    rest = (root / rest_path("2026-W02")).read_text()
    left_out = [d.text for d in report.dropped if d.period == "2026-W02" and d.reason == "budget"]
    facts = {f for day in range(5) for f in _facts(day)}
    assert left_out and all(line.lstrip("- ") in rest for line in left_out if line.lstrip("- ") in facts)
    kept = [f for f in facts if f in summary]
    assert kept and not [f for f in kept if f in rest]  # never a copy of what the summary holds
    assert [f for f in facts if f not in summary] == [f for f in facts if f in rest and f not in summary]
    assert "Deploy" not in rest  # the week's routine lines stay in the archived notes alone
    chores = [d for d in report.dropped if d.period == "2026-W02" and "Tidied" in d.text and d.reason == "budget"]
    assert chores and "Tidied" not in rest  # and so do its lines of work done with no value
    titles = [line for line in rest.splitlines() if line.startswith(("## ", "### ")) and line != "## Log"]
    assert len(titles) >= len(facts) - len(kept)  # each line a section of its own
    assert capped_bytes(root) < sum(p.stat().st_size for p in (root / "daily").rglob("*.md")) + 1  # not counted
    again = {p: p.read_bytes() for p in root.rglob("*.md")}
    await _run(root)
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == again  # a second run changes nothing


async def test_a_left_out_line_a_newer_note_changes_is_retired_there(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    await _run(root)
    path = root / rest_path("2026-W02")
    old = next(line[2:] for line in path.read_text().splitlines() if line.startswith("- The "))
    a, b, _, c, d, _, e, f = old.rstrip(".").split()[1:]
    day = UNTIL - timedelta(days=2)  # a live note, not yet due: a run retires what it changed
    note = f"# {day.isoformat()}\n\n## Log\n- The {a} {b} moved to {c}{c} {d}{d}, now with {e} {f}.\n"
    (root / "daily" / f"{day.isoformat()}.md").write_text(note)
    report = await _run(root)
    current, _, superseded = path.read_text().partition(f"## {SUPERSEDED}")
    assert old not in current and old.rstrip(".") in superseded
    assert [s.where for s in report.superseded if s.line.endswith(old.lstrip("- "))] == [rest_path("2026-W02")]


def test_left_out_lines_rank_as_live_text_of_their_week() -> None:
    today = date(2026, 3, 1)
    live = standing("daily/summaries/2026-W02.md", "Log > The zorvak", today)
    assert standing(rest_path("2026-W02"), "Log > The zorvak", today) == live
    assert standing("archive/daily/2026-01-06.md", "Log", today) < ARCHIVED * 1.01
    assert standing(rest_path("2026-W02"), f"Log > {SUPERSEDED}", today) < live / 2


def test_left_out_lines_count_with_the_archived_notes_and_go_last(tmp_path: Path) -> None:
    archive, rests = tmp_path / "archive" / "daily", tmp_path / "archive" / "summaries"
    archive.mkdir(parents=True)
    rests.mkdir()
    for d in range(1, 5):
        (archive / f"2026-03-0{d}.md").write_text("- a line of an archived note\n" * 40)
    for w in (10, 11, 12):
        (rests / f"2026-W{w}.md").write_text("- a line its summary left out\n" * 40)
    rest_size = (rests / "2026-W10.md").stat().st_size
    bound = bound_archive(tmp_path, plain_cap=2 * rest_size, packed_cap=10**9, dry_run=False)
    assert bound.compressed == [f"archive/daily/2026-03-0{d}.md" for d in range(1, 5)]  # the notes first
    assert bound.expired == ["archive/summaries/2026-W10.md"]  # then the oldest left-out lines
    assert sorted(p.name for p in rests.iterdir()) == ["2026-W11.md", "2026-W12.md"]
    assert bound.plain_bytes == 2 * rest_size


async def test_a_left_out_line_is_its_weeks_source_when_a_later_run_counts_recurrences(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    for later in (root / "daily").glob("*.md"):  # only the first week's notes yet
        if later.name >= "2026-01-12":
            later.unlink()
    await _run(root, until=date(2026, 1, 19))
    rest = (root / rest_path("2026-W02")).read_text()
    fact = next(line[2:] for line in rest.splitlines() if line.startswith("- The "))
    assert fact not in (root / "daily" / "summaries" / "2026-W02.md").read_text()
    for day in (date(2026, 1, 13), date(2026, 1, 21)):  # said again in two later weeks
        body = "".join(f"- {line}\n" for line in [*_routine(day), fact])
        (root / "daily" / f"{day.isoformat()}.md").write_text(f"# {day.isoformat()}\n\n## Log\n{body}")
    report = await _run(root)
    promoted = [p for p in report.promoted if p.line.removeprefix("- ") == fact]
    assert promoted and "daily/summaries/2026-W02.md" in promoted[0].sources  # three sources: its week's too


async def test_a_left_out_line_is_not_found_by_the_title_of_the_note_it_came_from(tmp_path: Path) -> None:
    """A week's many left-out lines sit beside their note's heading, not under it: a section's chunk
    carries the headings above it, and one session's title over each of a week's one-line sections
    ranked them all on its words, above anything that answers a question naming them."""
    root = tmp_path / "tier"
    _make_tier(root)
    title = "Session 16:10: track down the 500s in the staging environment"
    for note in sorted((root / "daily").glob("*.md")):
        note.write_text(note.read_text().replace("## Log", f"## {title}"))
    await _run(root)
    weekly = (root / rest_path("2026-W02"), root / "daily" / "summaries" / "2026-W02.md")
    for path in weekly:
        lines = [c for c in chunk_markdown(path.read_text()) if c.body.startswith("- The ")]
        assert len(lines) >= 10 and not [c for c in lines if "staging" in c.heading]
    settings = load_settings(
        {"memory_dir": str(root), "crew_dir": str(tmp_path / "crew"), "embedder": "none", "watch": "false"}, environ={}
    )
    async with TestClient(TestServer(create_app(settings))) as client:
        body = {"query": "where does the staging environment live", "limit": 20}
        hits = (await (await client.post("/memory/search", json=body)).json())["results"]
    by_title = [h for h in hits if h["path"] in {str(p.relative_to(root)) for p in weekly}]
    assert len(by_title) <= 2, [(h["path"], h["snippet"][:50]) for h in by_title]  # the title itself, once a file
