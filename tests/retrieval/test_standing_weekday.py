"""A weekday is a time: a newer line giving another weekday where an older line of the same query
terms gave one restates it (``standing.restated_first``), as a number of the same written form does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    """The paths of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    ranked = restated_first(hits, lambda hit: (hit[0], "Log", hit[1]), query_tokens(query.split()))
    return [path for path, _ in ranked]


def test_another_weekday_in_a_newer_line_of_the_same_terms_restates_the_older() -> None:
    old = (_day(70), "- The boiler inspection is always on the last Thursday of the month.")
    moved = (
        _day(12),
        "- Marta put the boiler inspection on the last Monday of the month, the engineer is off Thursdays.",
    )
    assert _order("when is the boiler inspection", [old, moved]) == [moved[0], old[0]]


def test_a_weekday_in_plural_is_the_same_day() -> None:
    old = (_day(70), "- Window cleaning for the depot is on Tuesdays.")
    again = (_day(12), "- Window cleaning for the depot is on Tuesday, as ever, Kleenview's van.")
    assert _order("depot window cleaning", [old, again]) == [old[0], again[0]]


def test_another_weekday_needs_every_query_term_the_older_line_matches() -> None:
    fact = (_day(70), "- The depot fire drill is on the first Friday.")
    other = (_day(12), "- The office drill ran on Tuesday, all out in four minutes.")
    assert _order("depot fire drill", [fact, other]) == [fact[0], other[0]]
