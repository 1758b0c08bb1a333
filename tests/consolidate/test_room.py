"""Room a consolidation really frees: archived notes leave the tier's cap (a write the cap refused
before the run is taken after it), the archive is bounded by a cap of its own (the oldest notes
compressed, readable, then removed past the compressed cap), and the schedule's last run is kept."""

from __future__ import annotations

import gzip
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.clock import utcnow
from sidecar.consolidate.archive import bound_archive
from sidecar.consolidate.schedule import START_GRACE_S, first_delay, last_run
from sidecar.server.app import create_app
from sidecar.settings import Settings
from sidecar.write.usage import capped_bytes

Client = TestClient[Any, Any]
CAP = 200 * 1024


def _months(root: Path, days: int = 60) -> None:
    """``days`` of work-log notes (about 3 KB each, few lines alike) ending yesterday, written as
    files (a shell's edits)."""
    rng = random.Random(3)
    services = str.split("billing ledger search auth notifier gateway scheduler exporter")
    for n in range(days):
        lines = [
            f"Reviewed PR #{rng.randint(100, 9999)} for {rng.choice(services)}: {rng.randint(2, 40)} files touched."
            for _ in range(58)
        ]
        day = utcnow().date() - timedelta(days=days - n)
        note = root / "daily" / f"{day.isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# {day}\n\n## Log\n" + "".join(f"- {ln}\n" for ln in lines))


@pytest.mark.slow
async def test_archived_notes_leave_the_tier_cap_so_a_refused_write_fits_after_a_run(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    _months(memory_dir)
    assert capped_bytes(memory_dir) > 0.8 * CAP
    client: Client = await aiohttp_client(create_app(make_settings(tier_cap_bytes=CAP, topic_cap_bytes=CAP)))
    blob = {"path": "notes/probe.md", "content": "- probe line of text\n" * (CAP // 40), "mode": "replace"}
    refused = await client.post("/memory/write", json=blob)
    assert refused.status == 413
    report = await (await client.post("/memory/consolidate", json={})).json()
    assert report["archived"] and report["live_bytes_after"] <= CAP // 2
    assert capped_bytes(memory_dir) <= CAP // 2  # the archive is on disk, out of the cap
    taken = await client.post("/memory/write", json=blob)
    assert taken.status in (200, 201), await taken.json()
    assert last_run(memory_dir) is not None  # the route's run is the schedule's last run too


def test_the_archive_is_bounded_by_a_cap_of_its_own(tmp_path: Path) -> None:
    archive = tmp_path / "archive" / "daily"
    archive.mkdir(parents=True)
    days = [f"2026-03-{d:02d}.md" for d in range(1, 11)]
    texts = {name: ("- a line of an archived note, " + name + "\n") * 40 for name in days}
    for name, text in texts.items():
        (archive / name).write_text(text)
    size = len(texts[days[0]].encode())
    bound = bound_archive(tmp_path, plain_cap=4 * size, packed_cap=10**9, dry_run=False)
    assert bound.compressed == [f"archive/daily/{n}" for n in days[:6]]  # the oldest, until four fit
    assert sorted(p.name for p in archive.glob("*.md")) == days[6:]
    assert gzip.decompress((archive / f"{days[0]}.gz").read_bytes()).decode() == texts[days[0]]
    sizes = [(archive / f"{n}.gz").stat().st_size for n in days[:6]]
    cap = sum(sizes) // 2
    again = bound_archive(tmp_path, plain_cap=4 * size, packed_cap=cap, dry_run=False)
    gone = next(k for k in range(7) if sum(sizes[k:]) <= cap)  # the fewest oldest ones that make it fit
    assert again.compressed == [] and again.expired == [f"archive/daily/{n}.gz" for n in days[:gone]]
    assert again.packed_bytes == sum(sizes[gone:]) <= cap
    assert bound_archive(tmp_path, plain_cap=4 * size, packed_cap=cap, dry_run=False).expired == []


def test_the_first_scheduled_run_follows_the_last_one() -> None:
    now = datetime(2026, 5, 1, 12, tzinfo=UTC)
    day = 24 * 3600.0
    assert first_delay(None, now, day) == START_GRACE_S  # never run: shortly after start
    assert first_delay(now - timedelta(days=3), now, day) == START_GRACE_S  # overdue: caught up
    assert first_delay(now - timedelta(hours=6), now, day) == 18 * 3600.0  # when the interval is up


@pytest.mark.slow
async def test_the_archive_is_bounded_only_once_a_run_is_done_so_a_resumed_run_reads_its_notes(tmp_path: Path) -> None:
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    roots = [tmp_path / "whole", tmp_path / "killed"]
    for root in roots:
        _months(root, days=30)
    until = utcnow().date()
    tight = {"archive_cap_bytes": 10_000}  # far less than the run's own notes
    await consolidate(roots[0], since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, **tight)
    killed = await consolidate(
        roots[1],
        since=None,
        until=until,
        summariser=ExtractiveSummariser(),
        dry_run=False,
        stop_after="archive",
        **tight,
    )
    assert not killed.compressed and not killed.expired
    done = await consolidate(
        roots[1], since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False, **tight
    )
    assert done.resumed and done.compressed and done.expired
    summaries = [sorted((p.name, p.read_bytes()) for p in (r / "daily" / "summaries").glob("*.md")) for r in roots]
    assert summaries[0] == summaries[1] and "Reviewed PR" in summaries[0][0][1].decode()
