"""A line of work done with a value in no mould of its week ("Switched dock 2's label printer to the
ZT411") is often a fact said as what was done. In a week's summary it stands as a ``###`` section of
its own, as a standing line does, so a search ranks it on its own words rather than as one line of a
list as long as a note; its title ends as the log's heading does, so a later run still reads it as a
line of the log, never as a standing fact to promote."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import summary_lines
from sidecar.consolidate.weekly import LOG_SUFFIX
from sidecar.index.chunker import chunk_markdown

START = date(2026, 3, 2)  # a Monday
BAYS = [f"bay {n}" for n in range(1, 31)]
DONE = [
    "Switched the label printer on dock 2 to the Zebra ZT411 after the third jam this month.",
    "Moved the cold store defrost to 04:15 so it misses the first bread delivery.",
]


def _log(day: int) -> list[str]:
    """A warehouse's log: one line a bay, its pallets and temperature, thirty a day."""
    return [
        f"Pallets on {BAYS[(day * 5 + k) % len(BAYS)]}: {k + day} staged, {2 * k % 11} wrapped, {3 + k % 6} C."
        for k in range(30)
    ]


async def _run(root: Path, weeks: int = 1) -> str:
    (root / "daily").mkdir(parents=True, exist_ok=True)
    for d in range(5):
        day = START + timedelta(days=d)
        lines = _log(d) + ([DONE[d // 3]] if d in (1, 3) else [])
        (root / "daily" / f"{day}.md").write_text("## Log\n" + "".join(f"- {line}\n" for line in lines))
    await consolidate(
        root, since=None, until=START + timedelta(days=60), summariser=ExtractiveSummariser(), dry_run=False
    )
    return (root / "daily" / "summaries" / "2026-W10.md").read_text()


async def test_a_line_of_work_done_with_a_value_is_a_section_of_its_own(tmp_path: Path) -> None:
    summary = await _run(tmp_path / "memory")
    chunks = chunk_markdown(summary)
    for line in DONE:
        holding = [c for c in chunks if line in c.body]
        assert len(holding) == 1, summary
        # the line alone in its chunk, under a title of its first words that marks it the log's
        assert holding[0].body.strip() == f"- {line}", holding[0].body
        assert holding[0].heading.endswith(LOG_SUFFIX), holding[0].heading
    routine = [c for c in chunks if "Pallets on bay" in c.body]
    assert routine and all(c.body.count("Pallets on bay") > 1 for c in routine)  # the mould's lines one list


async def test_a_later_run_reads_such_a_line_as_the_log_s(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    summary = await _run(root)
    titles = {text: title for title, text in summary_lines(summary)}
    for line in DONE:
        assert titles[f"- {line}"].endswith(LOG_SUFFIX), titles
    agent = (root / "AGENT.md").read_text() if (root / "AGENT.md").exists() else ""
    assert not any(line in agent for line in DONE)  # said on two days, but the log's: never promoted
    again = await consolidate(
        root, since=None, until=START + timedelta(days=60), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert (root / "daily" / "summaries" / "2026-W10.md").read_text() == summary
    assert not again.promoted
