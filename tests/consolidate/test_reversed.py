"""A rule of conduct a later note takes back leaves the evergreen file's ``## Preferences``, by the
real job on real tiers in tmp dirs.

A dog-grooming salon's notes: two house rules said on several days over weeks, the salon's log
lines every day, and later a note saying one rule no longer holds ("No need to check ... now").
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import consolidated_bullets
from sidecar.consolidate.summarise import ExtractiveSummariser

FIRST_DAY = date(2026, 3, 2)  # a Monday
VACCINES = "Always check the dog's vaccination card before a first groom."
MUZZLE = "Never groom a nervous dog without its muzzle to hand."
RULES = {1: [VACCINES, MUZZLE], 9: [VACCINES], 11: [MUZZLE], 17: [VACCINES, MUZZLE], 24: [VACCINES, MUZZLE]}
TAKEN_BACK = (45, "No need to check vaccination cards before a first groom now, the booking form asks for them.")
ROUTINE = ["Washed and dried {n} dogs before noon.", "Sold {k} bottles of oatmeal shampoo.", "Swept the drying room."]


def _write(root: Path, days: int, planted: dict[int, list[str]]) -> None:
    (root / "daily").mkdir(parents=True, exist_ok=True)
    for offset in range(days):
        day = FIRST_DAY + timedelta(days=offset)
        note = root / "daily" / f"{day.isoformat()}.md"
        if note.exists() or (root / "archive" / "daily" / note.name).exists():
            continue
        lines = [f"# {day.isoformat()}", "", "## Log"]
        lines += ["- " + line.format(n=offset % 9 + 3, k=offset % 7 + 1) for line in ROUTINE]
        lines += ["- " + text for text in planted.get(offset, [])]
        note.write_text("\n".join(lines) + "\n")


async def _run(root: Path, days: int) -> str:
    until = FIRST_DAY + timedelta(days=days + 8)
    await consolidate(root, since=None, until=until, summariser=ExtractiveSummariser(), dry_run=False)
    return (root / "AGENT.md").read_text()


def _rules(agent: str) -> list[str]:
    return [line for line, _ in consolidated_bullets(agent, "Preferences")]


async def test_a_rule_a_later_note_takes_back_is_not_promoted(tmp_path: Path) -> None:
    root = tmp_path / "salon"
    _write(root, 56, {**RULES, TAKEN_BACK[0]: [TAKEN_BACK[1]]})
    rules = _rules(await _run(root, 56))
    assert any("muzzle" in line for line in rules), rules
    assert not any("vaccination" in line for line in rules), rules


async def test_a_promoted_rule_a_later_note_takes_back_leaves_the_preferences(tmp_path: Path) -> None:
    root = tmp_path / "salon"
    _write(root, 35, RULES)
    rules = _rules(await _run(root, 35))
    assert any("vaccination" in line for line in rules) and any("muzzle" in line for line in rules), rules
    _write(root, 56, {TAKEN_BACK[0]: [TAKEN_BACK[1]]})
    agent = await _run(root, 56)
    rules = _rules(agent)
    assert any("muzzle" in line for line in rules), rules
    assert "vaccination" not in agent
    # the same rule said again after it was taken back stands again
    said_again = 60
    _write(root, 70, {said_again: [VACCINES]})
    assert any("vaccination" in line for line in _rules(await _run(root, 70)))
