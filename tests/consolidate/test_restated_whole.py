"""A later line that says a fact whole inside a wrapper (a time of day, who asked, a quoted chat
message) restates the fact; it changes none of its values. The fact stays current: promoted with
its dates, never under a summary's ``## Superseded``."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 1, 5)  # a Monday
FACT = "Wilhelmina sorts the kiln glaze orders every Thursday."
WRAPPED = f"14:20 - Oskar asked me at the wheel and I had to look it up, so for the record: {FACT}"


async def test_a_fact_said_again_inside_a_wrapper_stays_current(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    (tmp_path / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for offset in range(22):
        day = START + timedelta(days=offset)
        lines = [f"Fired batch {offset} of mugs, {30 + offset} pieces, two cracked."]
        if offset in (0, 3, 8, 10):
            lines.append(FACT)
        if offset == 16:
            lines.append(WRAPPED)
        (tmp_path / "daily" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n## Log\n\n" + "".join(f"- {line}\n" for line in lines)
        )
    report = await consolidate(
        tmp_path, since=None, until=START + timedelta(days=29), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert not [s for s in report.superseded if "Wilhelmina" in s.text], report.superseded
    agent = (tmp_path / "AGENT.md").read_text()
    assert any("Wilhelmina sorts the kiln glaze orders" in ln and "<!-- from daily/" in ln for ln in agent.splitlines())
    summaries = "".join(p.read_text() for p in (tmp_path / "daily" / "summaries").glob("*.md"))
    assert "superseded" not in summaries.split("Wilhelmina", 1)[1].split("\n", 1)[0]
