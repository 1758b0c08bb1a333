"""The clipped lines under a heading of someone's rules ("### Notes from Wren" / "- no Sunday
pours", "## House rules") are rules, said in a list's way with no word that makes them one; the
same lines under a heading of no one's rules state nothing of the kind. A rule still needs three
notes over two weeks."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from sidecar.consolidate.conduct import listed_rule, rules_heading
from sidecar.consolidate.periods import statement_text
from sidecar.consolidate.promote import preferences

START = date(2026, 5, 4)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def test_the_clipped_lines_under_a_heading_of_someones_rules_are_rules() -> None:
    def note(n: int, rules: list[str]) -> tuple[str, str]:
        body = "# Log\n\n- Site walk with the surveyor.\n\n### Notes from Wren\n" + "".join(f"- {r}\n" for r in rules)
        return _day(n), body

    notes = dict(
        [note(0, ["no Sunday pours"]), note(9, ["no Sunday pours"]), note(17, ["no Sunday pours", "gate at 7"])]
    )
    found = preferences(notes)
    assert [c.text for c in found] == ["no Sunday pours"]
    # the same lines under a heading of no one's rules state nothing of the kind
    plain = {path: text.replace("Notes from Wren", "East slab") for path, text in notes.items()}
    assert preferences(plain) == []


@pytest.mark.parametrize(
    ("heading", "rules"),
    [
        ("### Notes from Wren", True),
        ("## House rules", True),
        ("### Odalys's asks", True),
        ("## Dos and don'ts", True),
        ("### East slab", False),
        ("## Notes", False),
        ("### Pull requests", False),
        ("## Alert rules", False),
        ("### Ops notes", False),
        ("## Insurance policy", False),
    ],
)
def test_a_heading_of_rules(heading: str, rules: bool) -> None:
    assert rules_heading(heading) is rules


@pytest.mark.parametrize(
    ("line", "listed"),
    [
        ("no Sunday pours", True),
        ("a banksman for every lift", True),
        ("poured the east slab", False),
        ("skip the toolbox talk today", False),
        ("who has the crane key?", False),
        ("I told the labourer to sweep the stairs", False),
    ],
)
def test_a_listed_line(line: str, listed: bool) -> None:
    assert listed_rule(line) is listed


def test_a_months_notes_of_several_operators_rules_in_many_shapes() -> None:
    """tests/data/c43/pref_shapes.json: seventy days of an engineering team's notes where five
    operators state fifteen rules, each on four or five days in other shapes, beside lines that
    look like rules and are none (a one-off, a wish said once, a question, an instruction the
    writer gave someone else). The rules marked "held" were kept out of tuning."""
    data = json.loads((Path(__file__).resolve().parents[1] / "data" / "c43" / "pref_shapes.json").read_text())
    found = preferences({f"daily/{day}.md": statement_text(text) for day, text in data["notes"].items()})
    said = "\n".join(c.text for c in found).lower()
    tuned = [r["answer"].lower() for r in data["rules"] if r["split"] == "tune"]
    assert sum(answer in said for answer in tuned) >= 8
    assert not [n["answer"] for n in data["not_rules"] if n["answer"].lower() in said]
    every = [r["answer"].lower() for r in data["rules"]]
    assert all(any(answer in c.text.lower() for answer in every) for c in found)  # nothing but the rules
