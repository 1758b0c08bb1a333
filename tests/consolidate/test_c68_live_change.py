"""A value changed in a note the run leaves in ``daily/`` (its week not yet rolled up) is listed as
a short ``## Changed`` unit naming what it replaced, in ``daily/summaries/live/changed.md``, as a week's
summary lists it once that week is rolled up: the old line is retired to ``## Superseded`` at once,
and without this the new value was said only inside its day's long note. A second run changes
nothing, and once the week is summarised the unit is in its summary only."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import CURRENT_PATH, consolidate
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 3, 2)  # a Monday: week 2026-W10
OLD = "The lantern renderer is hosted on the kiln-03 box in the basement rack."
NEW = "The lantern renderer moved to the forge-11 box in the north rack."
FILLER = [
    "Gantry crane inspection booked with the usual contractor.",
    "Paint store inventory counted, nothing missing.",
    "Visitor badges reprinted for the spring open week.",
]


def _note(root: Path, day: date, lines: list[str]) -> None:
    body = "".join(f"- {line}\n" for line in lines)
    (root / "daily" / f"{day.isoformat()}.md").write_text(f"# {day.isoformat()}\n\n## Log\n{body}")


def _tier(tmp_path: Path) -> Path:
    root = tmp_path / "tier"
    (root / "daily").mkdir(parents=True)
    _note(root, START, [OLD, FILLER[0]])
    _note(root, START + timedelta(days=1), [FILLER[1]])
    _note(root, START + timedelta(days=15), [FILLER[2], NEW])  # week 2026-W12
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def _run(root: Path, until: date) -> None:
    await consolidate(root, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False)


async def test_a_change_said_in_a_live_note_is_a_short_changed_unit(tmp_path: Path) -> None:
    root = _tier(tmp_path)
    until = START + timedelta(days=17)  # W10 is rolled up, W12's note stays live
    await _run(root, until)
    assert (root / "daily" / "2026-03-17.md").exists()
    current = (root / CURRENT_PATH).read_text()
    unit = next(line for line in current.splitlines() if NEW in line)
    assert unit.startswith("- ")
    assert f"<!-- was: {normalised(OLD)} -->" in unit, current  # the old line's words
    assert "## Changed" in current
    summary = (root / "daily" / "summaries" / "2026-W10.md").read_text()
    assert OLD in summary.split("## Superseded", 1)[1]  # the old line is retired, as before

    before = _files(root)
    await _run(root, until)
    assert _files(root) == before  # a second run changes nothing


async def test_the_unit_leaves_once_its_week_is_summarised(tmp_path: Path) -> None:
    root = _tier(tmp_path)
    await _run(root, START + timedelta(days=17))
    assert (root / CURRENT_PATH).exists()
    await _run(root, START + timedelta(days=40))  # W12 rolled up too
    assert not (root / CURRENT_PATH).exists()
    summary = (root / "daily" / "summaries" / "2026-W12.md").read_text()
    assert NEW in summary.split("## Changed", 1)[1]
    texts = "".join(p.read_text() for p in (root / "daily").rglob("*.md"))
    assert texts.count(NEW) == 1  # written once
