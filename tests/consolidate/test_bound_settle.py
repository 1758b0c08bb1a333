"""When the archive's bound removes notes, the run reads the tier again as the next run will
(``job._settle``): a week whose notes are gone is read from its summary from then on, where a line
its notes made routine may be a standing line a newer note changes, and the next run, with nothing
new, would otherwise retire it (``python -m tests.bench.consolidation_shapes fresh9 --shape handoff``
with the archive's cap at half the tier's: the second run changed two summaries)."""

from __future__ import annotations

from pathlib import Path

from sidecar.consolidate.job import _bound
from sidecar.consolidate.report import Report


async def _run(root: Path, cap: int) -> list[str]:
    calls: list[str] = []

    async def settle() -> None:
        calls.append("settled")

    await _bound(root, Report(dry_run=False), {}, cap, None, dry_run=False, settle=settle)
    return calls


def _archive(root: Path) -> None:
    (root / "archive" / "daily").mkdir(parents=True)
    for day in range(1, 6):
        text = "".join(f"- Line {n} of day {day}: checked the {n * day} boxes in the store.\n" for n in range(40))
        (root / "archive" / "daily" / f"2026-01-0{day}.md").write_text(f"# 2026-01-0{day}\n\n## Log\n{text}")


async def test_a_bound_that_removes_notes_settles_the_tier_again(tmp_path: Path) -> None:
    _archive(tmp_path)
    assert await _run(tmp_path, 2_000) == ["settled"]  # every note compressed, the oldest removed
    assert not (tmp_path / "archive" / "daily" / "2026-01-01.md.gz").exists()


async def test_a_bound_that_removes_nothing_does_not(tmp_path: Path) -> None:
    _archive(tmp_path)
    assert await _run(tmp_path, 10_000_000) == []
