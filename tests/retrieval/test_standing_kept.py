"""A line kept in the evergreen file (promoted, dated by the notes it came from) is restated by a
newer line of its subject that holds another value of the same written form where the kept line's
value was (``standing.restated_first``), though the newer line is worded otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def _kept(text: str, *ago: int) -> tuple[str, str]:
    """A line of AGENT.md with the notes it was promoted from."""
    sources = ", ".join(_day(days) for days in ago)
    return "AGENT.md", f"- {text} <!-- from {sources} -->"


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    """The texts of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    ranked = restated_first(hits, lambda hit: (hit[0], "Consolidated", hit[1]), query_tokens(query.split()))
    return [text for _, text in ranked]


QUERY = "where do the weekly kiln firings run"
FIRED = (_day(9), "- Fired the weekly batch in the C300 kiln at unit-south-1, 9h 20m, the glaze came out even.")


def test_a_newer_line_with_another_value_of_the_kept_lines_form_ranks_above_it() -> None:
    kept = _kept("Weekly kiln firings run in the B200 kiln at unit-north-3.", 120, 110, 100)
    assert _order(QUERY, [kept, FIRED]) == [FIRED[1], kept[1]]


def test_a_line_of_a_note_is_not_restated_by_a_value_of_its_form_alone() -> None:
    # Said once in a note, such a line may be one row of a table of like facts.
    note = (_day(100), "- Weekly kiln firings run in the B200 kiln at unit-north-3.")
    assert _order(QUERY, [note, FIRED]) == [note[1], FIRED[1]]


def test_a_line_of_the_kept_lines_mould_for_another_subject_restates_nothing() -> None:
    kept = _kept("Tokenizer for the gate model: sp-22k-r6.", 120, 110)
    sibling = (_day(9), "- Tokenizer for the rank model: sp-32k-r9.")
    assert _order("which tokenizer does the gate model use", [kept, sibling]) == [kept[1], sibling[1]]
