"""A line kept in the evergreen file that opens with who holds a duty ("Wojtek keeps the boiler
log") is restated by a newer line that opens with another holder and names the kept one after it
("Ffion took over the boiler log when Wojtek left for the depot"): the kept line's first word is
a name there because another line of the answer writes it inside a sentence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()
QUERY = "who should I ask about the boiler log"
KEPT_TEXT = "Wojtek keeps the boiler log and books the annual service."


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def _kept(text: str, *ago: int) -> tuple[str, str]:
    """A line of AGENT.md with the notes it was promoted from."""
    sources = ", ".join(_day(days) for days in ago)
    return "AGENT.md", f"- {text} <!-- from {sources} -->"


def _order(hits: list[tuple[str, str]]) -> list[str]:
    ranked = restated_first(hits, lambda hit: (hit[0], "Consolidated", hit[1]), query_tokens(QUERY.split()))
    return [text for _, text in ranked]


def test_a_newer_line_opening_with_another_holder_ranks_above_the_kept_line() -> None:
    kept = _kept(KEPT_TEXT, 110, 100, 90)
    newer = (_day(12), "- Ffion took over the boiler log when Wojtek left for the depot, so ask her first.")
    assert _order([kept, newer]) == [newer[1], kept[1]]


def test_a_newer_line_opening_with_the_kept_holder_restates_nothing() -> None:
    kept = _kept(KEPT_TEXT, 110, 100, 90)
    newer = (_day(12), "- Wojtek topped up the boiler log binder, the Vaillant engineer comes Tuesday.")
    inside = (_day(30), "- Boiler log pressure 1.4 bar, signed by Wojtek.")  # writes the name inside a sentence
    assert _order([kept, newer, inside]) == [kept[1], newer[1], inside[1]]


def test_a_line_of_a_note_opening_with_a_name_is_no_kept_holder() -> None:
    # said once in a note, the line may be one row of a table of who does what
    note = (_day(100), "- Wojtek keeps the boiler log and books the annual service with Vaillant.")
    newer = (_day(12), "- Ffion took over the boiler log when Wojtek left for the depot, so ask her first.")
    assert _order([note, newer]) == [note[1], newer[1]]
