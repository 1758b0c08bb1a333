"""A line the evergreen file keeps is restated by a newer line that says it shorter under a label
("Kiln controller on-call: Sigrun" after "On-call owner for the kiln controller is Halvard"): the
capitalised words after the label's colon are its value, and a line saying no word of its own but
its values is the kept line said again, not a line of its mould for another subject."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()
QUERY = "who is the on-call owner for the kiln controller"
KEPT = "On-call owner for the kiln controller is Halvard."


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def _kept(text: str, *ago: int) -> tuple[str, str]:
    sources = ", ".join(_day(days) for days in ago)
    return "AGENT.md", f"- {text} <!-- from {sources} -->"


def _order(hits: list[tuple[str, str]]) -> list[str]:
    ranked = restated_first(hits, lambda hit: (hit[0], "Consolidated", hit[1]), query_tokens(QUERY.split()))
    return [text for _, text in ranked]


def test_a_newer_labelled_line_ranks_above_the_kept_line_it_says_shorter() -> None:
    kept = _kept(KEPT, 100, 90, 80)
    newer = (_day(10), "- Kiln controller on-call: Sigrun.")
    assert _order([kept, newer]) == [newer[1], kept[1]]


def test_a_labelled_line_of_another_subject_restates_nothing() -> None:
    # the glaze mixer's line says two words of its own: the kept line's mould for another subject
    kept = _kept(KEPT, 100, 90, 80)
    other = (_day(10), "- Glaze mixer controller on-call: Sigrun.")
    assert _order([kept, other]) == [kept[1], other[1]]


def test_a_line_of_a_note_is_not_restated_by_a_label() -> None:
    note = (_day(100), f"- {KEPT}")
    newer = (_day(10), "- Kiln controller on-call: Sigrun.")
    assert _order([note, newer]) == [note[1], newer[1]]
