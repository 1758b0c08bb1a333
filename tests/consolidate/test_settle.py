"""One run reaches the state a second run would: a fact promoted from one week's notes that a
later note changes is retired by the run that promotes it.

Said on three days of one week, "Evening cleaning is done by Sparkle Office Services" is that
week's line until the evergreen file holds it; promoted, it is a standing fact, and a later note
("BrightClean took over the evening cleaning") changes it. The run that promotes it must read that
change too, or the next run, with nothing new, retires the promoted line and its summary's copy.
"""

from __future__ import annotations

import asyncio
from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

FIRST_DAY = date(2026, 8, 3)  # a Monday
DAYS = 70
UNTIL = FIRST_DAY + timedelta(days=DAYS + 14)
OLD = "Evening cleaning is done by Sparkle Office Services, keys with them."
NEW = "BrightClean took over the evening cleaning from the 1st, new key signed out to them."
PATIENTS = ["Ames", "Brook", "Cole", "Dunn", "Ellis", "Frost", "Grant", "Hale", "Irwin", "Joyce", "Kemp"]
TREATMENTS = ["a filling", "a scale and polish", "a crown fitting", "an extraction", "a check-up", "a root canal"]


def _note(n: int) -> str:
    day = FIRST_DAY + timedelta(days=n)
    lines = [
        f"Mr {PATIENTS[(n + k) % len(PATIENTS)]} came in for {TREATMENTS[(n * 3 + k) % len(TREATMENTS)]}."
        for k in range(3)
    ]
    lines.append(f"Surgery {n % 3 + 1} sterilised and restocked after the last patient of {day:%A}.")
    if n in (1, 3, 4):
        lines.append(OLD)
    if n == 69:
        lines.append(NEW)
    body = "".join(f"- {line}\n" for line in lines)
    return f"# {day}\n\n## Log\n{body}"


def _tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    for n in range(DAYS):
        (root / "daily" / f"{FIRST_DAY + timedelta(days=n)}.md").write_text(_note(n), encoding="utf-8")


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _run(root: Path) -> None:
    asyncio.run(consolidate(root, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False))


def test_a_promoted_fact_a_later_note_changed_is_retired_by_the_run_that_promotes_it(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _tier(root)
    _run(root)
    first = _files(root)
    agent = first["AGENT.md"].decode()
    assert NEW in agent  # the current value is what the block carries
    assert OLD not in agent
    summary = first["daily/summaries/2026-W32.md"].decode()
    assert "superseded" in next(line for line in summary.splitlines() if OLD in line)
    _run(root)
    assert _files(root) == first
