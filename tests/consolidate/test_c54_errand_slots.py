"""Errands are no rules, wherever the day's object sits in them: an instruction said again with
another object in one place, past its verb ("Tidy the lathe-2 coolant tray", "Tidy the bandsaw
coolant tray", "Tidy the drill-press coolant tray"), is one mould filled each day, however often
each fill comes back. A rule said again with another verb, or with a word of a standing course,
is still a rule."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.conduct import chores
from sidecar.consolidate.promote import preferences

START = date(2026, 6, 1)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def _notes(days: dict[int, list[str]]) -> dict[str, str]:
    filler = ["Quiet shift on the floor.", "Chip bin emptied at noon."]
    return {_day(n): "# Log\n\n" + "".join(f"- {ln}\n" for ln in [*filler, *lines]) for n, lines in days.items()}


MACHINES = ["lathe-2", "bandsaw", "drill-press", "mill-1"]


def test_an_instruction_filled_with_another_object_in_its_middle_is_an_errand() -> None:
    lines = [f"Task: tidy the {m} coolant tray." for m in MACHINES]
    assert chores(lines) == set(lines)


def test_each_fill_said_on_many_days_is_no_preference() -> None:
    days = {n: [f"Task: tidy the {MACHINES[n % 4]} coolant tray."] for n in range(0, 100, 5)}
    assert preferences(_notes(days)) == []


def test_two_fills_are_no_mould() -> None:
    lines = [f"Task: tidy the {m} coolant tray." for m in MACHINES[:2]]
    assert chores(lines) == set()


def test_a_rule_said_with_three_verbs_is_no_errand() -> None:
    lines = [
        "Ring the bindery before a reprint.",
        "Phone the bindery before a reprint.",
        "Call the bindery before a reprint.",
    ]
    assert chores(lines) == set()
    days = {0: [lines[0]], 6: [lines[1]], 13: [lines[2]]}
    assert len(preferences(_notes(days))) == 1
