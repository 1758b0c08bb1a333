"""A table's row is read as its cells. An analyst who keeps results in tables writes a standing
fact in a row's notes column on some days and as a line of its own on others: the cell recurs
with the line, and is promoted alone, without the row's other cells. A row of labels or values
is never promoted: a header row written on many days ("| check | status | note |") states nothing."""

from __future__ import annotations

from sidecar.consolidate.cores import cores, is_row
from sidecar.consolidate.periods import Line
from sidecar.consolidate.promote import recurring

FACT = "The quarterly ledger export lands in bucket fin-drop-7"
SAID = [
    ("daily/2026-03-02.md", f"| ledger reconciliation against the bank feed for the whole of March | ok | {FACT} |"),
    ("daily/2026-03-11.md", f"{FACT}."),
    ("daily/2026-03-19.md", f"| margin review of the spring price list with the sales leads | 3 issues | {FACT} |"),
    ("daily/2026-03-27.md", f"| {FACT} | confirmed |"),
]
HEADER = "| check | status | note |"


def _lines() -> list[Line]:
    said = [Line(text, source, "Task: ledger") for source, text in SAID]
    headers = [Line(HEADER, f"daily/2026-03-{day:02d}.md", "Task: ledger") for day in (2, 5, 9, 12, 19, 23, 27)]
    return [*said, *headers]


def test_a_row_is_read_as_its_cells() -> None:
    assert is_row(SAID[0][1]) and is_row(HEADER) and not is_row(SAID[1][1])
    read = cores(_lines())
    assert [[c.text.rstrip(".") for c in cut] for cut in read[: len(SAID)]] == [[FACT]] * len(SAID)


def test_a_fact_in_a_cell_recurs_with_its_line_and_a_header_row_is_never_promoted() -> None:
    found = recurring(_lines())
    assert [(c.text.rstrip("."), c.sources) for c in found] == [(FACT, tuple(source for source, _ in SAID))]


def test_a_row_that_says_a_statement_in_one_long_cell_is_read_as_that_cell() -> None:
    # no cell names a value, so none is cut from its row; the row says its longest cell
    fact = "the spare projector bulbs are kept in the second drawer"
    said = [
        Line(f"| {fact} | confirmed |", "daily/2026-03-03.md", "Task: room"),
        Line(f"{fact[0].upper()}{fact[1:]}.", "daily/2026-03-12.md", "Task: room"),
        Line(f"| {fact} | checked |", "daily/2026-03-20.md", "Task: room"),
        Line(HEADER, "daily/2026-03-20.md", "Task: room"),
    ]
    read = cores(said)
    assert [c.text for c in read[0]] == [fact] and [c.text for c in read[2]] == [fact]
    assert [c.text for c in read[3]] == [HEADER]  # a row of labels stays a row, never a candidate
    found = recurring(said)
    assert [(c.text.rstrip(".").lower(), c.sources) for c in found] == [
        (fact, ("daily/2026-03-03.md", "daily/2026-03-12.md", "daily/2026-03-20.md"))
    ]


def test_a_row_of_values_still_counts_as_a_day_the_fact_was_said() -> None:
    # the row is no wording of the fact, but it says it: its day counts with the sentences'
    said = [
        Line("The ledger-api service is owned by Priya.", "daily/2026-03-02.md", "Log"),
        Line("| ledger-api | Priya |", "daily/2026-03-10.md", "Log", "service / owner"),
        Line("The ledger-api service is owned by Priya.", "daily/2026-03-19.md", "Log"),
        Line("| service | owner |", "daily/2026-03-25.md", "Log"),
    ]
    found = recurring(said)
    assert [(c.text.rstrip("."), c.sources) for c in found] == [
        (
            "The ledger-api service is owned by Priya",
            ("daily/2026-03-02.md", "daily/2026-03-10.md", "daily/2026-03-19.md"),
        )
    ]
