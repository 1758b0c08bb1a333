"""A line reporting what was done in no mould of its week ("Moved the nightly to 02:30 UTC") is
kept in the week's summary however long its log: the log's budget keeps the lines of its most
frequent words, the mould's, and such a line, often a fact said as what was done, was left to the
archive alone, where search ranks it at half its score in a note-long chunk."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

START = date(2026, 2, 2)  # a Monday
NODES = [f"gpu-node-{n:02d}" for n in range(40)]
ONE_OFFS = [
    "Moved the nightly to 02:30 UTC so it stops fighting the backend deploy window.",
    "Checked the iOS distribution certificate: valid until 2028-05-09.",
]


def _log(day: int) -> list[str]:
    """A cluster's log: one line a node, its queue and temperature, forty a day."""
    return [
        f"Queue on {NODES[(day * 7 + k) % len(NODES)]}: {k + day} running, {3 * k % 17} pending, {60 + k % 20} C."
        for k in range(40)
    ]


async def test_a_one_off_line_of_what_was_done_stays_in_the_summary(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    for d in range(5):
        day = START + timedelta(days=d)
        lines = _log(d) + ([ONE_OFFS[d // 3]] if d in (1, 3) else [])
        (root / "daily" / f"{day}.md").write_text("## Log\n" + "".join(f"- {line}\n" for line in lines))
    report = await consolidate(
        root, since=None, until=START + timedelta(days=60), summariser=ExtractiveSummariser(), dry_run=False
    )
    summary = (root / "daily" / "summaries" / "2026-W06.md").read_text()
    assert any(d.reason == "budget" for d in report.dropped)  # the log is over its budget
    for line in ONE_OFFS:
        assert line in summary, summary
    _, _, log_part = summary.partition("## Log (log)")
    assert log_part.count("## ") == 0  # one log section, its two parts one after the other
    assert "Queue on gpu-node" in log_part
    assert all(line in log_part for line in ONE_OFFS)  # what was done stays the log's, not a standing fact
