"""A table of facts rolled up into summaries: one row is never read as a newer value of another.

A weekly summary writes each standing line as a section of its own, so a table said over weeks
("Test phone Galaxy S22 is asset DL-7279", "Test phone Galaxy Tab A8 is asset DL-5039") becomes
rows in summaries of different weeks. The search's reading of restated values
(``standing.restated_first``) must not put a later row above the row a query names: the query's
name or identifier ("S22", "Xperia 10 IV") is the subject, and a row without it is another thing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    """The paths of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    ranked = restated_first(hits, lambda hit: (hit[0], "Log", hit[1]), query_tokens(query.split()))
    return [path for path, _ in ranked]


def _week(ago: int) -> str:
    day = TODAY - timedelta(days=ago)
    year, week, _ = day.isocalendar()
    return f"daily/summaries/{year}-W{week:02d}.md"


def test_a_later_row_of_a_table_does_not_pass_the_row_the_query_names() -> None:
    s22 = (_week(90), "- Test phone Galaxy S22 is asset DL-7279, lives in drawer 10.")
    tab = (_week(20), "- Test phone Galaxy Tab A8 is asset DL-5039, lives in drawer 10.")
    assert _order("asset tag on the Galaxy S22 we test with", [s22, tab]) == [s22[0], tab[0]]
    xperia = (_week(90), "- Test phone Xperia 10 IV is asset DL-2946, lives in drawer 4.")
    assert _order("asset tag on the Xperia 10 IV we test with", [xperia, tab]) == [xperia[0], tab[0]]


def test_a_changed_value_still_passes_the_line_it_changed() -> None:
    """The newer line keeps the query's names and drops a plain word: a value restated."""
    old = (_week(90), "- Morning build of the Android app starts at 5:30 on ci-mac-2.")
    new = (_week(20), "- Moved the Android app build to 6:00, ci-mac-2 was busy with the nightly.")
    assert _order("when does the morning Android app build start", [old, new]) == [new[0], old[0]]
