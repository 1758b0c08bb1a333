"""A rule of the operator's whose value a newer line changes is no longer current: it is not
promoted under ``## Preferences``, and one promoted there before leaves it, as a changed
``## Consolidated`` line does."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 5, 4)  # a Monday
RULE = "The quarterly kiln inspection is always on the second Saturday of the month."
MOVED = "Ingrid moved the quarterly kiln inspection to the first Sunday of the month."


def _write(root: Path, days: range, extra: dict[int, str]) -> None:
    for offset in days:
        day = START + timedelta(days=offset)
        lines = [f"Packed {offset + 12} orders of stoneware for the courier."]
        if offset in extra:
            lines.append(extra[offset])
        (root / "daily" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n## Log\n\n" + "".join(f"- {line}\n" for line in lines)
        )


async def test_a_rule_a_newer_line_changes_leaves_preferences(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    _write(tmp_path, range(21), {1: RULE, 6: RULE, 9: RULE, 15: RULE})
    await consolidate(
        tmp_path, since=None, until=START + timedelta(days=28), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert "second Saturday" in (tmp_path / "AGENT.md").read_text()  # promoted as a rule
    _write(tmp_path, range(21, 35), {30: MOVED})
    await consolidate(
        tmp_path, since=None, until=START + timedelta(days=42), summariser=ExtractiveSummariser(), dry_run=False
    )
    agent = (tmp_path / "AGENT.md").read_text()
    assert "second Saturday" not in agent.split("## Consolidated", 1)[0], agent
