"""What ``standing.restated_first`` does not read as a newer value, however many hits an answer
reorders: a line of the same mould said of another subject (a table's next row), a line naming
the older line's name for another subject, and a log of the same line with new numbers each day.
Each case has its control: the change the rule is for still moves up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    """The texts of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    ranked = restated_first(hits, lambda hit: (hit[0], "Log", hit[1]), query_tokens(query.split()))
    return [text for _, text in ranked]


def test_the_same_mould_said_of_another_subject_is_no_newer_value() -> None:
    older = (_day(60), "- The lantern cache hit budget is 97.5 percent per week.")
    newer = (_day(10), "- The beacon cache hit budget is 99.5 percent per week.")
    assert _order("ferry cache hit budget", [older, newer]) == [older[1], newer[1]]


def test_the_same_line_with_a_new_number_still_passes_the_older() -> None:
    older = (_day(60), "- The lantern cache hit budget is 97.5 percent per week.")
    newer = (_day(10), "- The lantern cache hit budget is 98.5 percent per week from now.")
    assert _order("lantern cache hit budget", [older, newer]) == [newer[1], older[1]]


def test_a_line_naming_the_older_name_for_another_subject_is_no_newer_value() -> None:
    older = (_day(60), "- Orchard reports read from the replica db-orchard-2.lan, keep Quillboard off the primary.")
    newer = (_day(10), "- Meadow reports read from the replica db-meadow-7.lan, keep Quillboard off the primary.")
    assert _order("which replica do orchard reports read", [older, newer]) == [older[1], newer[1]]


def test_a_line_naming_the_older_value_with_a_new_one_still_passes_it() -> None:
    older = (_day(60), "- Orchard reports read from the replica on Quillboard.")
    newer = (_day(10), "- Orchard reports moved off Quillboard, they read from Tallyhouse now.")
    assert _order("where do orchard reports read from", [older, newer]) == [newer[1], older[1]]


def test_a_log_of_one_line_with_new_numbers_each_day_is_no_change() -> None:
    days = [(_day(40 - 5 * n), f"- Shadow traffic on quill-api: {88 + 3 * n}% agreement with prod.") for n in range(4)]
    assert _order("quill-api shadow agreement", days) == [text for _, text in days]


def test_a_value_said_again_and_then_changed_still_moves_up() -> None:
    said = [(_day(40 - 5 * n), "- The loom room standup starts at 09:30 sharp.") for n in range(3)]
    changed = (_day(5), "- The loom room standup starts at 10:15 sharp.")
    assert _order("when does the loom room standup start", [*said, changed])[0] == changed[1]
