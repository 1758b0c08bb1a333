"""A run settles the tier until a pass over it changes nothing, however many steps that takes.

A language school's principal writes "Homestay check: <student> with the <family>, <how it
goes>" for a different student most days. Word for word the same check comes back on a few days,
so the run promotes it as a recurring fact; a later check of the same family and status with
another student then reads as its new value, and the promoted line takes it, and that one is
changed in turn by a later check again: one step of the chain a settling pass. A run that stopped
after a fixed few passes left the next run, with nothing new, to move the promoted line on and to
retire a week's line against it: the second run changed ``2026-W43.md``
(``python -m tests.bench.consolidation fresh10`` on 2026-11-30).

The notes are that history's (``tests/bench/consolidation_gen_school.py``, seed 1010, ending the day
before 2026-11-30), written as the bench writes them, kept in ``tests/data/consolidation_school_1010.json.gz``
(a path -> text map): a test module reads no bench module.
"""

from __future__ import annotations

import gzip
import json
from datetime import date
from pathlib import Path

import pytest

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

TODAY = date(2026, 11, 30)  # the weeks of the history fall as they did when the run failed
NOTES = Path(__file__).resolve().parents[1] / "data" / "consolidation_school_1010.json.gz"
CAP = 450 * 1024


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def _run(root: Path) -> None:
    await consolidate(
        root, since=None, until=TODAY, summariser=ExtractiveSummariser(), dry_run=False, archive_cap_bytes=CAP
    )


@pytest.mark.slow
async def test_a_second_run_changes_nothing_a_chain_of_one_mould_moved(tmp_path: Path) -> None:
    notes: dict[str, str] = json.loads(gzip.decompress(NOTES.read_bytes()))
    (tmp_path / "daily").mkdir()
    for rel, text in notes.items():
        (tmp_path / rel).write_text(text, encoding="utf-8")
    await _run(tmp_path)
    first = _snapshot(tmp_path)
    assert "Homestay check:" in first["AGENT.md"].decode()  # the mould's line was promoted
    await _run(tmp_path)
    assert _snapshot(tmp_path) == first
