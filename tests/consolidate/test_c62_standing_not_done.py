"""A week's summary reads a line as work done the way the promotions do (``text.reports_work``): a
line opening with a hyphenated name ("shred-api sits behind ...") or a described noun ("Signed
forms go to the office") states a fact, and stands as a section of its own among the week's
standing lines, not in its log, where search read it inside a block of the week's work."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 3, 2)  # a Monday: week 2026-W10
FACTS = [
    "shred-api sits behind internal LB 10.40.7.19:8443.",
    "Forced-upgrade floor: anything older than 2.7.0 gets the upgrade wall.",
]
DONE = "Rewired the 12 lantern sensors on the east gantry."


async def test_a_fact_opening_with_a_name_is_a_standing_line(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    (root / "daily").mkdir(parents=True)
    for d in range(3):
        day = START + timedelta(days=d)
        lines = [FACTS[0], DONE] if d == 0 else [FACTS[1]] if d == 1 else ["The kettle descaler is under the sink."]
        body = "".join(f"- {line}\n" for line in lines)
        (root / "daily" / f"{day.isoformat()}.md").write_text(f"# {day.isoformat()}\n\n## Log\n{body}")
    await consolidate(
        root, since=None, until=START + timedelta(days=30), summariser=ExtractiveSummariser(), dry_run=False
    )
    summary = (root / "daily" / "summaries" / "2026-W10.md").read_text()
    standing, _, log = summary.partition("## Log (log)")
    for fact in FACTS:
        at = standing.splitlines().index(f"- {fact}")
        assert standing.splitlines()[at - 1].startswith(("## ", "### ")), summary  # a section of its own
        assert fact not in log
    assert DONE in log  # a line that reports work done is still the log's
