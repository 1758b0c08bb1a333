"""Of the hits an answer shows, two that say one thing in the same words, one value apart, are one
question answered at two times: the newer one takes the place of the first of them
(``standing.newest_first``). The first test writes real notes and searches them through the real
sidecar (BM25, as the server answers without an embedder); the others read the function on the
lines that would fool a looser rule."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import newest_first
from tests.support.memory import write

TODAY = datetime.now(UTC).date()
FILLER = [
    "Swept the yard and checked the gutters.",
    "Wren in late, twenty minutes.",
    "Till count at close matched the roll.",
    "Cleaned the proving cabinet seals.",
    "Ordered napkins and paper bags.",
    "Fridge temperatures logged, all in range.",
]
OLD = "Crash reports go to Crashlytics."
NEW = "Crash reports go to Sentry now."


def _ago(days: int) -> date:
    return TODAY - timedelta(days=days)


def _day(days: int) -> str:
    return f"daily/{_ago(days)}.md"


async def test_the_newer_of_two_answers_alike_leads(sidecar_client: Any, tmp_path: Path) -> None:
    """The old line sits in short notes (BM25 ranks a short chunk higher), the new one in a long
    note: the words alone put the old value first, the newer value leads the answer."""
    root = tmp_path / "memory"
    for n, ago in enumerate(range(90, 0, -1)):
        lines = [FILLER[(n + k) % len(FILLER)] for k in range(6 if ago == 20 else 2)]
        if ago in (80, 72, 65):
            lines.insert(1, OLD)
        if ago == 20:
            lines.insert(3, NEW)
        write(root, _day(ago), f"# {_ago(ago)}\n\n## Log\n" + "".join(f"- {line}\n" for line in lines))
    client = await sidecar_client(consolidate_interval=0)
    resp = await client.post("/memory/search", json={"query": "where do crash reports go", "limit": 5, "explain": True})
    assert resp.status == 200
    results = (await resp.json())["results"]
    texts = [(root / hit["path"]).read_text(encoding="utf-8") for hit in results]
    new = [i for i, text in enumerate(texts) if "Sentry" in text]
    old = [i for i, text in enumerate(texts) if "Crashlytics" in text]
    assert new == [0] and len(old) == 3, [hit["path"] for hit in results]
    # The words put an old line first: the newer one took its place, the rest kept theirs.
    assert results[0]["explain"]["bm25"]["rank"] > min(results[i]["explain"]["bm25"]["rank"] for i in old)


def _order(query: str, hits: list[tuple[str, str]], headings: tuple[str, ...] = ()) -> list[str]:
    """The texts of ``hits`` (path, text; best first; under ``headings``, else "Log") as
    ``newest_first`` orders them."""
    under = dict(zip([text for _, text in hits], headings, strict=False))
    ranked = newest_first(hits, lambda hit: (hit[0], under.get(hit[1], "Log"), hit[1]), query_tokens(query.split()))
    return [text for _, text in ranked]


def test_the_newer_takes_the_first_place_and_the_rest_keep_theirs() -> None:
    old = (_day(70), "- Crash reports go to Crashlytics.")
    other = (_day(5), "- Kiosk app build 4.2 went out to the shops.")
    again = (_day(60), "- Crash reports go to Crashlytics.")
    new = (_day(10), "- Crash reports go to Sentry now.")
    assert _order("where do crash reports go", [old, other, again, new]) == [new[1], other[1], again[1], old[1]]


def test_weekdays_numbers_and_versions_are_values_of_one_form() -> None:
    query = "which day do the bins go out"
    old, new = (_day(70), "- Bins go out on Tuesdays."), (_day(10), "- Bins go out on Thursdays.")
    assert _order(query, [old, new]) == [new[1], old[1]]
    old, new = (_day(70), "- Parlour software is DairyPlan 5.2."), (_day(10), "- Parlour software is DairyPlan 7.1.")
    assert _order("parlour software", [old, new]) == [new[1], old[1]]
    old, new = (_day(70), "- Morning milking starts at 5:30."), (_day(10), "- Morning milking starts at 6:00 now.")
    assert _order("when does morning milking start", [old, new]) == [new[1], old[1]]


def test_a_name_against_a_sentence_is_not_one_answer() -> None:
    old = (_day(70), "- Crash reports go to Crashlytics.")
    other = (_day(10), "- Crash reports go to Priya on Mondays, Marek reads them for the kiosk team.")
    assert _order("where do crash reports go", [old, other]) == [old[1], other[1]]


def test_a_word_swapped_for_another_is_another_subject() -> None:
    """The rows of a table of like facts share every word but their subject and its value: asked
    for a subject none of them names, the newest row is no newer answer."""
    audit = (_day(70), "- Vault keeps its audit secrets under secret/audit/main-106.")
    shipping = (_day(40), "- Vault keeps its shipping secrets under secret/shipping/core-241.")
    invoicing = (_day(10), "- Vault keeps its invoicing secrets under secret/invoicing/main-480.")
    query = "where does vault keep the catalog secrets"
    assert _order(query, [audit, shipping, invoicing]) == [audit[1], shipping[1], invoicing[1]]


def test_one_value_said_again_keeps_its_order() -> None:
    first = (_day(70), "- Standup is at 9:30 in the Ops room.")
    again = (_day(10), "- Standup is at 9:30 in the Ops room.")
    assert _order("when is standup", [first, again]) == [first[1], again[1]]


def test_a_hit_answering_more_of_the_query_than_the_newer_stays() -> None:
    """The older hit also says what the newer does not (here: the kiosk): moved down, it could
    leave the answer another question asked for."""
    old = (_day(70), "- Crash reports go to Crashlytics.\n- The kiosk app crash reports stay local.")
    other = (_day(5), "- Kiosk app build 4.2 went out to the shops.")
    new = (_day(10), "- Crash reports go to Sentry now.")
    query = "where do kiosk crash reports go"
    assert _order(query, [old, other, new]) == [old[1], other[1], new[1]]


def test_a_promoted_line_is_as_old_as_the_newest_note_it_came_from() -> None:
    kept = ("AGENT.md", f"- Crash reports go to Crashlytics. <!-- from {_day(60)}, {_day(50)} -->")
    new = (_day(10), "- Crash reports go to Sentry now.")
    assert _order("where do crash reports go", [kept, new], ("Consolidated",)) == [new[1], kept[1]]
    older = (_day(70), "- Crash reports go to Bugsnag.")
    assert _order("where do crash reports go", [older, kept], ("Log", "Consolidated")) == [kept[1], older[1]]


def test_superseded_text_takes_no_part() -> None:
    current = (_day(60), "- Crash reports go to Sentry.")
    stale = (f"daily/summaries/{_ago(20).strftime('%G-W%V')}.md", "- Crash reports go to Crashlytics.")
    assert _order("where do crash reports go", [current, stale], ("Log", "Log > Superseded")) == [current[1], stale[1]]
    assert _order("where do crash reports go", [current, stale]) == [stale[1], current[1]]


def test_a_line_said_whole_with_a_new_value_beside_its_old_one() -> None:
    old = (_day(70), "- catalog lives on ovh-gra7.")
    other = (_day(5), "- Deployed catalog build 5838 to staging.")
    new = (_day(10), "- catalog was migrated off ovh-gra7 and lives on gcp-europe-west4 now.")
    assert _order("where does catalog live", [old, other, new]) == [new[1], other[1], old[1]]
    # a name beside it is no value of a host's form
    named = (_day(10), "- catalog lives on ovh-gra7, Priya says.")
    assert _order("where does catalog live", [old, named]) == [old[1], named[1]]
