"""A wish is said in idioms as often as with "always" or "never": a pet peeve, being particular
about something, getting annoyed when it is not done, what someone would appreciate, what was
agreed, a rule of thumb, what is non-negotiable, someone's ask, what someone said to do, what they
keep reminding us to do, what they made clear. Each is a rule, and the idiom and whose wish it is
are no part of the rule's words: the same rule said in three idioms on three days over two weeks
is one preference."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from sidecar.consolidate.conduct import is_rule, key_text, rule_body
from sidecar.consolidate.promote import preferences

START = date(2026, 6, 1)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def _notes(days: dict[int, list[str]]) -> dict[str, str]:
    filler = ["Walked the east plot with the agronomist.", "Irrigation pump back on after the fuse."]
    return {_day(n): "# Log\n\n" + "".join(f"- {ln}\n" for ln in [*filler, *lines]) for n, lines in days.items()}


IDIOMS = [
    "Pet peeve of Maelle's: seed trays left on the bench overnight.",
    "Maelle is very particular about labelled seed trays.",
    "Maelle gets annoyed when seed trays go unlabelled.",
    "Maelle would appreciate it if we logged every spray in the book.",
    "As agreed with Maelle, sprays go in the book the same day.",
    "Rule of thumb: water the tunnels before 08:00.",
    "Watering the tunnels before 08:00 is non-negotiable for Maelle.",
    "Maelle's ask: tunnel doors shut by dusk.",
    "Maelle said to shut the tunnel doors by dusk.",
    "Maelle keeps reminding us to shut the tunnel doors by dusk.",
    "Maelle made it clear that tunnel doors are shut by dusk.",
    "Best to check the frost alarm before leaving.",
    "Tunnel doors shut by dusk pls.",
    "Timesheets in by Friday pls - Leontine.",
    "Sprays in the book the same day, his standing request.",
]


@pytest.mark.parametrize("line", IDIOMS)
def test_each_idiom_states_a_rule(line: str) -> None:
    assert is_rule(line)


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("Maelle is very particular about labelled seed trays.", "labelled seed trays."),
        ("As agreed with Maelle, sprays go in the book the same day.", "sprays go in the book the same day."),
        ("Watering the tunnels before 08:00 is non-negotiable for Maelle.", "Watering the tunnels before 08:00 ."),
    ],
)
def test_the_idiom_and_whose_wish_it_is_are_no_part_of_the_rule(line: str, rule: str) -> None:
    body = rule_body(line)
    assert body is not None
    assert key_text(body).strip(", ") == rule


def test_one_rule_said_in_three_idioms_on_three_days_is_one_preference() -> None:
    days = {
        0: ["Maelle is very particular about muddy boots in the packing shed."],
        8: ["Maelle gets annoyed when anyone wears muddy boots in the packing shed."],
        16: ["Pet peeve of Maelle's: muddy boots in the packing shed."],
    }
    found = preferences(_notes(days))
    assert [c.sources for c in found] == [(_day(0), _day(8), _day(16))]


@pytest.mark.parametrize(
    "line",
    [
        "The forecast said to expect frost.",
        "Agronomist was particular about nothing in particular today.",
        "Ran the frost alarm test, as agreed.",
    ],
)
def test_no_rule(line: str) -> None:
    assert not is_rule(line)
