"""Operators state their rules in many shapes, and each is read as the rule it states: a lead-in
naming who said it ("Wren: ...", "Reminder from Wren - ..."), a label naming whose rule it is
("Wren's rule is that ...", "My rule is simple: ..."), a line that names itself someone's rule
("..., Wren's rule."), a wish with any subject ("Odalys would rather ..."), a prohibition idiom
("... are off the table"), a choice that closes the line ("Drawings as PDF, not paper copies."), and a standing request
put as a question ("could you always ...?"). A rule still needs three notes over two weeks,
and a log's fill ("Quiet day, mostly the drainage survey.") is none."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from sidecar.consolidate.conduct import is_rule
from sidecar.consolidate.promote import preferences

START = date(2026, 5, 4)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def _notes(days: dict[int, list[str]]) -> dict[str, str]:
    filler = ["Site walk with the surveyor.", "Concrete delivery confirmed for the east slab."]
    return {_day(n): "# Log\n\n" + "".join(f"- {ln}\n" for ln in [*filler, *lines]) for n, lines in days.items()}


SHAPES = [
    "Wren: no Sunday pours, please.",
    "Odalys again: sign every permit copy in blue ink.",
    "Reminder from Wren - scaffold tags are off the table for visitors.",
    "Told again by Odalys: keep the gate log in the site hut.",
    "Wren's rule is that every skip gets a lid at night.",
    "My rule is simple: no hot works after 16:00.",
    "Cable reels stay off the stair cores, Wren's rule.",
    "Odalys would rather every visitor sign in at the cabin.",
    "Odalys hates paper drawings on site.",
    "Drawings as PDF, not paper copies.",
    "Pour records are a no-go in the group chat.",
    "Could you always copy Odalys on the weekly programme?",
    "The crane key lives in the cabin safe - Wren insists.",
    "Site manager says: no food in the plant room.",
    "Wren's instructions: every delivery signed for.",
]
NOT_RULES = [
    "Mostly the drainage survey.",
    "Poured the east slab, not bad at all.",
    "Wren: poured the east slab by noon.",
    "Could you check the east slab pour?",
    "The gate is on the north side, not here.",
    "The gate code is 4471, not 4417.",
    "Toolbox talk at 07:30, not 08:00.",
    "Our insurance policy covers the site cabins.",
    "Alert rules: the pump alarm fires at 2 bar.",
    "The client said: we moved the handover to June.",
]


@pytest.mark.parametrize("line", SHAPES)
def test_each_shape_states_a_rule(line: str) -> None:
    assert is_rule(line)


@pytest.mark.parametrize("line", NOT_RULES)
def test_reports_questions_and_log_fills_state_none(line: str) -> None:
    assert not is_rule(line)


def test_a_rule_said_in_other_shapes_on_three_days_over_two_weeks_is_promoted() -> None:
    days = {
        0: ["Odalys would rather every visitor sign in at the cabin."],
        8: ["Odalys again: every visitor signs in at the cabin."],
        16: ["Reminder from Odalys - visitors sign in at the cabin, no exceptions."],
    }
    found = preferences(_notes(days))
    assert [c.sources for c in found] == [(_day(0), _day(8), _day(16))]


def test_a_rule_said_in_one_note_is_no_preference() -> None:
    assert preferences(_notes({0: ["Wren's rule is that every skip gets a lid at night."]})) == []
