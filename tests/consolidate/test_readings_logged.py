"""A value pasted day after day ("Boiler pressure: 1.4 bar", ``changes.reading_keys``) is a
reading, routine: the week's log holds it, never ``## Changed`` or a standing section, and it is
never promoted; a fact said beside it stays a standing line."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 4, 6)  # a Monday
FACT = "The chiller service contract is with Norfrost Cooling."


async def test_a_days_reading_goes_to_the_log_not_to_changed(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    for offset in range(28):
        day = START + timedelta(days=offset)
        lines = [
            f"Boiler pressure: {1.1 + (offset * 7 % 9) / 10:.1f} bar",
            f"Cellar humidity at {50 + offset * 3 % 17} percent after the morning check",
            f"Swept the yard and stacked {offset % 4 + 2} pallets by the gate.",
        ]
        if offset in (1, 9, 16):
            lines.append(FACT)
        (tmp_path / "daily" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n## Log\n\n" + "".join(f"- {line}\n" for line in lines)
        )
    await consolidate(
        tmp_path, since=None, until=START + timedelta(days=35), summariser=ExtractiveSummariser(), dry_run=False
    )
    summaries = {p.name: p.read_text() for p in (tmp_path / "daily" / "summaries").glob("*.md")}
    assert len(summaries) == 4
    for name, text in summaries.items():
        changed = re.search(r"\n## Changed\n(.*?)(?=\n## |\Z)", text, re.S)
        assert changed is None or "Boiler pressure" not in changed.group(1), (name, text)
        standing = re.findall(r"\n## (?!.*\(log\))(?!Changed|Superseded)[^\n]*\n(.*?)(?=\n## |\Z)", text, re.S)
        assert not any("Boiler pressure" in part or "Cellar humidity" in part for part in standing), (name, text)
        assert "Boiler pressure" in text, (name, text)  # in the week's log
    agent = (tmp_path / "AGENT.md").read_text() if (tmp_path / "AGENT.md").exists() else ""
    assert "Boiler pressure" not in agent and "Cellar humidity" not in agent
    assert "Norfrost Cooling" in agent  # the fact said on three days is promoted
