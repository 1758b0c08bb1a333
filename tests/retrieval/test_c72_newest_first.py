"""Of the hits an answer shows, those that answer its query alike with different values come
newest first, in the places they hold (``standing.newest_first``): the same hits are shown, and
the newest value leads, whatever words the change was said in. The first test writes real notes
and searches them through the real sidecar (BM25, as the server answers without an embedder); the
others read the function on the lines that would fool a looser rule."""

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
# Said twice in a line on three days: BM25 ranks it above the line that replaced it, said once and
# in other words than a change ("go to"), which names no old value a restatement would name.
OLD = "Crash reports go to Crashlytics, crash reports for the kiosk app too."
NEW = "Crash reports go to Sentry since the kiosk app moved."


def _ago(days: int) -> date:
    return TODAY - timedelta(days=days)


def _day(days: int) -> str:
    return f"daily/{_ago(days)}.md"


def _write_history(root: Path, said: dict[str, list[int]]) -> None:
    by_day: dict[int, list[str]] = {}
    for line, days in said.items():
        for ago in days:
            by_day.setdefault(ago, []).append(line)
    for n, ago in enumerate(range(90, 0, -1)):
        lines = [FILLER[(n + k) % len(FILLER)] for k in range(4)]
        for line in by_day.get(ago, []):
            lines.insert(n % 3, line)
        write(root, _day(ago), f"# {_ago(ago)}\n\n## Log\n" + "".join(f"- {line}\n" for line in lines))


async def test_the_newest_of_the_shown_answers_leads_whatever_its_words(sidecar_client: Any, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    _write_history(root, {OLD: [80, 72, 65], NEW: [20]})
    client = await sidecar_client(consolidate_interval=0)
    resp = await client.post("/memory/search", json={"query": "where do crash reports go", "limit": 5, "explain": True})
    assert resp.status == 200
    results = (await resp.json())["results"]
    texts = [(root / hit["path"]).read_text(encoding="utf-8") for hit in results]
    new = [i for i, text in enumerate(texts) if "Sentry" in text]
    old = [i for i, text in enumerate(texts) if "Crashlytics" in text]
    assert new == [0] and old, [hit["path"] for hit in results]
    # BM25 with the recency factor put an old line first: the order of the shown hits changed.
    assert results[0]["explain"]["bm25"]["rank"] > min(results[i]["explain"]["bm25"]["rank"] for i in old)


def _order(query: str, hits: list[tuple[str, str]], headings: tuple[str, ...] = ()) -> list[str]:
    """The texts of ``hits`` (path, text; best first; under ``headings``, else "Log") as
    ``newest_first`` orders them."""
    under = dict(zip([text for _, text in hits], headings, strict=False))
    ranked = newest_first(hits, lambda hit: (hit[0], under.get(hit[1], "Log"), hit[1]), query_tokens(query.split()))
    return [text for _, text in ranked]


def test_only_the_hits_alike_move_and_into_the_places_they_held() -> None:
    old = (_day(70), "- Crash reports go to Crashlytics.")
    other = (_day(5), "- Kiosk app build 4.2 went out to the shops.")
    new = (_day(10), "- Crash reports go to Sentry now.")
    assert _order("where do crash reports go", [old, other, new]) == [new[1], other[1], old[1]]


def test_one_value_said_again_keeps_its_order() -> None:
    first = (_day(70), "- Standup is at 9:30 in the Ops room.")
    again = (_day(10), "- Standup is at 9:30 in the Ops room, as ever.")
    assert _order("when is standup", [first, again]) == [first[1], again[1]]


def test_lines_matching_fewer_terms_than_the_answer_are_not_the_same_question() -> None:
    """The rows of a table of like facts share the words the query asked them by, all but the one
    that tells them apart; the line that matches it is the answer, and the rows below stay put."""
    answer = (_day(70), "- Latency board for embed-api is Grafana uid hnxd7nxb7.")
    row = (_day(40), "- Latency board for intent-api is Grafana uid edsznn2mc.")
    newer_row = (_day(10), "- Latency board for rank-api is Grafana uid 6dxdfertx.")
    query = "which latency board has embed-api"
    assert _order(query, [answer, row, newer_row]) == [answer[1], row[1], newer_row[1]]


def test_one_term_of_several_asked_names_no_subject() -> None:
    old = (_day(70), "- Paired with Chen on the ledger loader.")
    new = (_day(10), "- Paired with Marek on the ledger cache.")
    assert _order("who owns the ledger reconciliation job", [old, new]) == [old[1], new[1]]


def test_a_promoted_line_is_as_old_as_the_newest_note_it_came_from() -> None:
    kept = ("AGENT.md", f"- Crash reports go to Crashlytics. <!-- from {_day(60)}, {_day(50)} -->")
    new = (_day(10), "- Crash reports go to Sentry now.")
    assert _order("where do crash reports go", [kept, new], ("Consolidated",)) == [new[1], kept[1]]
    older = (_day(70), "- Crash reports go to Bugsnag.")
    assert _order("where do crash reports go", [older, kept], ("Log", "Consolidated")) == [kept[1], older[1]]


def test_superseded_text_takes_no_part() -> None:
    """A line the job marked as changed stays where its standing put it, however new its week."""
    current = (_day(60), "- Crash reports go to Sentry.")
    stale = (f"daily/summaries/{_ago(20).strftime('%G-W%V')}.md", "- Crash reports go to Crashlytics.")
    assert _order("where do crash reports go", [current, stale], ("Log", "Log > Superseded")) == [current[1], stale[1]]
    assert _order("where do crash reports go", [current, stale]) == [stale[1], current[1]]
