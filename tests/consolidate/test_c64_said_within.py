"""A statement said as a clause of its own on some days is said on another day where a longer
clause holds it word for word, joined to the day's sentence with no comma ("and I told her ...",
"I explained that ... and left them to it"): it recurs with those days counted."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.cores import cores
from sidecar.consolidate.periods import Line
from sidecar.consolidate.promote import recurring

START = date(2026, 3, 2)  # a Monday
FACT = "the nearest first aid post is at the Lowmoor quarry gate"


def _line(day: int, text: str) -> Line:
    return Line(text, f"daily/{(START + timedelta(days=day)).isoformat()}.md", "Log")


def _days() -> list[Line]:
    return [
        _line(1, f"The ferry was late again; {FACT}, as I told the cyclists."),
        _line(9, f"I rang the depot about the van and mentioned that {FACT}, which they knew."),
        _line(17, f"A walker asked at the door and I told her {FACT} before she set off."),
        _line(26, f"I explained to the scouts that {FACT} and left them to it."),
    ]


def test_a_statement_inside_longer_clauses_recurs_with_those_days() -> None:
    found = recurring(_days())
    assert [(c.text, len(c.sources)) for c in found] == [(FACT, 4)]


def test_the_longer_clause_is_read_as_the_statement_it_holds() -> None:
    read = cores(_days())
    assert [cut[0].text for cut in read[2:]] == [FACT, FACT]


def test_a_statement_said_as_a_clause_on_one_day_only_is_not_looked_for_inside_others() -> None:
    lines = _days()
    lines[1] = _line(9, "I rang the depot about the van, which they knew.")
    assert recurring(lines) == []


def test_a_name_said_as_a_clause_is_not_looked_for_inside_others() -> None:
    lines = [
        _line(2, "Quarry Lane Haulage (skip hire) account number QL-4471."),
        _line(11, "Quarry Lane Haulage (skip hire) account number QL-4471."),
        _line(19, "Quarry Lane Haulage phone: 0161 496 0233."),
        _line(30, "Quarry Lane Haulage phone: 0161 496 0233."),
    ]
    assert [c.text for c in recurring(lines)] == []
