"""A dated line that names an older line's identifier (a host, a region, a pool: "lnx-build7") with
another identifier of its own beside it restates the older line, as a name named anew does: the
newer line ranks above it ("The ingest worker moved off lnx-build7 onto arm-pool-2"). It must speak
of the subject the query asked about: every query term the older line matches, or two of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import restated_first

TODAY = datetime.now(UTC).date()
OLD = "- The ingest worker is hosted on lnx-build7 in the basement rack."


def _note(ago: int, text: str) -> tuple[str, str]:
    return f"daily/{TODAY - timedelta(days=ago)}.md", text


def _order(query: str, hits: list[tuple[str, str]]) -> list[str]:
    ranked = restated_first(hits, lambda hit: (hit[0], "Notes", hit[1]), query_tokens(query.split()))
    return [text for _, text in ranked]


def test_a_newer_line_naming_the_old_identifier_with_a_new_one_ranks_above() -> None:
    old, newer = _note(90, OLD), _note(10, "- The ingest worker moved off lnx-build7 onto arm-pool-2 this week.")
    assert _order("where is the ingest worker hosted", [old, newer]) == [newer[1], old[1]]


def test_a_new_identifier_in_small_letters_joined_by_hyphens_counts() -> None:
    old = _note(90, OLD)
    newer = _note(10, "- The ingest worker went from lnx-build7 to azure-northeurope over the weekend.")
    assert _order("where is the ingest worker hosted", [old, newer]) == [newer[1], old[1]]


def test_a_line_naming_the_identifier_without_a_new_one_restates_nothing() -> None:
    old, newer = _note(90, OLD), _note(10, "- The ingest worker stalled on lnx-build7, restarted it after lunch.")
    assert _order("where is the ingest worker hosted", [old, newer]) == [old[1], newer[1]]


def test_another_subject_naming_the_same_host_shares_too_little_of_the_query() -> None:
    # the thumbnailer's line shares only "hosted" with the question about the ingest worker
    old = _note(90, OLD)
    other = _note(10, "- Thumbnailer is hosted on arm-pool-2 now, lnx-build7 kept as a spare.")
    assert _order("where is the ingest worker hosted", [old, other]) == [old[1], other[1]]
