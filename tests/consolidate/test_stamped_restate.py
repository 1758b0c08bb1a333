"""A timestamped log's time of day is no value a line restates: "21:13 heard on the bridge call -
..." names the bridge, and its "21:13" is when it was written, not another number for "The NOC
bridge number is 0161 555 0199", which stays promoted."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 1, 5)  # a Monday
FACT = "The NOC bridge number is 0161 555 0199."
LATER = "21:13 heard on the bridge call - I want ticket numbers in every handover line."


async def test_a_later_stamped_line_restates_no_promoted_number(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    (tmp_path / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for offset in range(21):
        day = START + timedelta(days=offset)
        lines = [f"0{8 + offset % 2}:{10 + offset:02d} Checked router r{offset} and the uplink graphs."]
        if offset in (0, 3, 8, 10):
            lines.append(f"09:{offset + 20:02d} {FACT}")
        if offset == 16:
            lines.append(LATER)
        (tmp_path / "daily" / f"{day.isoformat()}.md").write_text(
            f"# {day.isoformat()}\n\n## Log\n\n" + "".join(f"- {line}\n" for line in lines)
        )
    await consolidate(
        tmp_path, since=None, until=START + timedelta(days=28), summariser=ExtractiveSummariser(), dry_run=False
    )
    agent = (tmp_path / "AGENT.md").read_text()
    assert any("0161 555 0199" in line and "<!-- from daily/" in line for line in agent.splitlines()), agent
