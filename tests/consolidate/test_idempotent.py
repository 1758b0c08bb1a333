"""A second run over an unchanged tier changes nothing, on a log that reads like facts.

A shop's daily log repeats "Sold 14 croissants by noon" with a number of the day: the same line
comes back word for word in other weeks, so it looks like a standing fact that a later day's number
changes. Whatever the job makes of such lines, it must make the same of them every run: the first
run reads the notes, a later one reads their summaries and the archive, and a third run in a new
process (no cache of the first two) must find the files as the second left them.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import textwrap
from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser

FIRST_DAY = date(2026, 3, 2)  # a Monday
DAYS = 70
UNTIL = FIRST_DAY + timedelta(days=DAYS)
ITEMS = [
    "croissants",
    "sourdough loaves",
    "slices of carrot cake",
    "cinnamon buns",
    "sausage rolls",
    "slices of lemon drizzle",
    "pain au chocolat",
    "bacon baps",
    "flat whites",
    "rye loaves",
    "scones",
    "brownies",
    "focaccia",
    "eclairs",
    "pasties",
    "bagels",
]
OLD_SUPPLIER = "- Our milk comes from Foxley Farm, delivered before seven"
NEW_SUPPLIER = "- Switched the milk to Hillside Dairy instead of Foxley Farm, delivered before seven"
FACTS = {
    OLD_SUPPLIER: [1, 9, 16, 24],
    "- The walk-in fridge is serviced by Coldline on the first Tuesday of the month": [3, 17, 31, 45],
    NEW_SUPPLIER: [50, 58],
}


def _note(day: int, rng: random.Random) -> str:
    """A day's log: sales by noon with small numbers (so whole lines come back in other weeks),
    till counts and who came in late, with the day's facts among them."""
    lines = [f"- Sold {rng.randint(2, 30)} {rng.choice(ITEMS)} by noon." for _ in range(rng.randint(10, 14))]
    lines += [f"- Till count at close: {rng.randint(300, 900)}", f"- {rng.choice(['Wren', 'Ola', 'Sam'])} in late"]
    for fact, days in FACTS.items():
        if day in days:
            lines.insert(rng.randrange(len(lines) + 1), fact)
    return f"# {FIRST_DAY + timedelta(days=day)}\n\n## Log\n" + "\n".join(lines) + "\n"


def _make_tier(root: Path) -> None:
    rng = random.Random(3535)
    (root / "daily").mkdir(parents=True)
    for day in range(DAYS):
        (root / "daily" / f"{FIRST_DAY + timedelta(days=day)}.md").write_text(_note(day, rng))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def _run(root: Path) -> None:
    await consolidate(root, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)


_CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from datetime import date
    from pathlib import Path
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    asyncio.run(consolidate(Path(sys.argv[1]), since=None, until=date.fromisoformat(sys.argv[2]),
                            summariser=ExtractiveSummariser(), dry_run=False))
    """
)


def test_runs_after_the_first_change_no_file_and_a_restart_changes_none(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    asyncio.run(_run(root))
    first = _snapshot(root)
    summaries = {rel: data.decode() for rel, data in first.items() if rel.startswith("daily/summaries/")}
    assert summaries and any(rel.startswith("archive/daily/") for rel in first)
    # the first run did its work: the milk's old supplier is superseded by the switch
    old = OLD_SUPPLIER.removeprefix("- ")
    assert any(f"{old} <!-- superseded" in text for text in summaries.values())
    assert not any(f"\n- {old}\n" in text for text in summaries.values())

    asyncio.run(_run(root))
    assert _snapshot(root) == first

    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(root), UNTIL.isoformat()], env=env, timeout=120)
    assert done.returncode == 0
    assert _snapshot(root) == first
