"""The latest value first: a dated line a newer line restates with another value ranks below it.

A fact said three times scores above the one line that changed it, however it was worded, and
a recency factor of a few percent cannot close that gap. These tests write real notes, search
them through the real sidecar (BM25, as the server answers without an embedder), run the real
consolidation job, and read the ranking ``retrieval.standing.restated_first`` gives; the guards
are checked on the function itself with the lines that would fool a looser rule.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.snippet import query_tokens
from sidecar.index.tier import Tier
from sidecar.retrieval import standing
from sidecar.retrieval.batcher import EmbedBatcher
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.standing import more_terms_first, restated_first
from sidecar.retrieval.vectors import VectorIndex
from tests.support.embedding import drain, needs_model
from tests.support.memory import write

TODAY = datetime.now(UTC).date()
FILLER = [
    "Swept the yard and checked the gutters.",
    "Wren in late, twenty minutes.",
    "Till count at close matched the roll.",
    "Cleaned the proving cabinet seals.",
    "Ordered napkins and paper bags.",
]


def _note(day: date, facts: list[str], n: int) -> str:
    lines = [FILLER[(n + k) % len(FILLER)] for k in range(4)]
    for fact in facts:
        lines.insert(n % 3, fact)
    return f"# {day}\n\n## Log\n" + "".join(f"- {line}\n" for line in lines)


def _write_history(root: Path, said: dict[str, list[int]]) -> None:
    """Daily notes of the last 90 days, each holding the lines said on it (days ago -> lines)."""
    by_day: dict[int, list[str]] = {}
    for line, days in said.items():
        for ago in days:
            by_day.setdefault(ago, []).append(line)
    for n, ago in enumerate(range(90, 0, -1)):
        day = TODAY - timedelta(days=ago)
        write(root, f"daily/{day}.md", _note(day, by_day.get(ago, []), n))


OLD_FLOUR = "Our flour comes from Millbrook Mills."
NEW_FLOUR = "Millbrook Mills got bought out - the flour invoices say Harvest Grain Co from now on."


async def _search(client: Any, query: str) -> list[dict[str, Any]]:
    resp = await client.post("/memory/search", json={"query": query, "limit": 10, "explain": True})
    assert resp.status == 200
    results: list[dict[str, Any]] = (await resp.json())["results"]
    return results


def _texts(root: Path, results: list[dict[str, Any]]) -> list[str]:
    out = []
    for hit in results:
        lines = (root / hit["path"]).read_text(encoding="utf-8").splitlines()
        out.append("\n".join(lines[hit["line_start"] - 1 : hit["line_end"]]))
    return out


async def test_a_value_said_once_ranks_above_the_one_it_replaced_said_three_times(
    sidecar_client: Any, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    _write_history(root, {OLD_FLOUR: [80, 72, 65], NEW_FLOUR: [20]})
    client = await sidecar_client(consolidate_interval=0)
    results = await _search(client, "who supplies our flour")
    texts = _texts(root, results)
    new = next(i for i, t in enumerate(texts) if "Harvest Grain" in t)
    old = [i for i, t in enumerate(texts) if "Millbrook Mills." in t and "Harvest" not in t]
    # Said on three days; two of those notes are the same text (their filler lines repeat), which an
    # answer shows once: two of the old lines are shown, and both below the new one.
    assert len(old) == 2 and new == 0, texts
    # BM25 and the recency factor alone put the old value first: the rule moved the new one up.
    assert results[new]["explain"]["bm25"]["rank"] > 1
    assert min(results[i]["explain"]["bm25"]["rank"] for i in old) == 1


@needs_model
@pytest.mark.slow
async def test_the_hybrid_ranking_puts_the_new_value_first_too(tmp_path: Path, model: OnnxEmbedder) -> None:
    """With the real model's dense leg fused in, the old value said three times still leads the
    fused scores; the rule puts the line that replaced it first."""
    root = tmp_path / "memory"
    _write_history(root, {OLD_FLOUR: [80, 72, 65], NEW_FLOUR: [20]})
    tier = Tier("agent", root)
    await tier.open()
    vectors = VectorIndex(tier.index.path, model.model_id, model.dim)
    try:
        health = EmbedderHealth(model, confirmed=True)
        await drain(EmbedBatcher(model, health, {"agent": tier}, {"agent": vectors}), vectors)
        searcher = HybridSearcher(model, health, {"agent": vectors}, query_timeout=30.0)
        results, degraded = await searcher.search(tier, "who supplies our flour", 10, True)
    finally:
        vectors.close()
        await tier.close()
    assert not degraded
    texts = _texts(root, results)
    new = next(i for i, t in enumerate(texts) if "Harvest Grain" in t)
    old = [i for i, t in enumerate(texts) if "Millbrook Mills." in t and "Harvest" not in t]
    # Said on three days; two of those notes are the same text (their filler lines repeat), which an
    # answer shows once: two of the old lines are shown, and both below the new one.
    assert len(old) == 2 and new == 0, texts
    assert results[new]["explain"]["fused"] < max(results[i]["explain"]["fused"] for i in old)


OLD_SERVICE = "The espresso machine is serviced by BeanTech."
NEW_SERVICE = "Coffee machine maintenance is with Crema Engineering now, BeanTech never turned up."
OTHER_SERVICE = "BeanTech also quoted for the dishwasher door."


@pytest.mark.slow
async def test_after_consolidation_the_new_value_ranks_above_the_promoted_old_one(
    sidecar_client: Any, tmp_path: Path
) -> None:
    """Said in other words than the old line, the change is left to the ranking: the job keeps
    the old line current (in its summaries, and promoted to the evergreen file), and search still
    shows the line that replaced it first."""
    root = tmp_path / "memory"
    # BeanTech named by another line before: no value the old line alone names, which a line
    # naming it beside a new one would change (changes._named_anew)
    _write_history(root, {OLD_SERVICE: [85, 78, 71, 64], OTHER_SERVICE: [88], NEW_SERVICE: [30]})
    client = await sidecar_client(consolidate_interval=0)
    resp = await client.post("/memory/consolidate", json={})
    assert resp.status == 200, await resp.text()
    assert (await client.post("/memory/reindex", json={})).status == 200
    assert list((root / "daily" / "summaries").glob("*.md")), "the job rolled the old weeks up"
    results = await _search(client, "who services the espresso machine")
    texts = _texts(root, results)
    new = next(i for i, t in enumerate(texts) if "Crema Engineering" in t)
    old = [i for i, t in enumerate(texts) if "BeanTech." in t and "Crema" not in t]
    assert old and new < min(old), [r["path"] for r in results]
    assert results[new]["explain"]["bm25"]["rank"] > min(results[i]["explain"]["bm25"]["rank"] for i in old)


# -- the rule's guards, on the function the server ranks with ------------------------------------


def _order(query: str, hits: list[tuple[str, str]], heading: str = "Log") -> list[str]:
    """The paths of ``hits`` (path, text; best first) as ``restated_first`` orders them."""
    tokens = query_tokens(query.split())
    ranked = restated_first(hits, lambda hit: (hit[0], heading, hit[1]), tokens)
    return [path for path, _ in ranked]


def _day(ago: int) -> str:
    return f"daily/{TODAY - timedelta(days=ago)}.md"


def test_a_number_of_the_same_form_restates_only_a_line_of_every_query_term() -> None:
    old = (_day(60), "- A sourdough loaf sells for £4.20.")
    raised = (_day(10), "- A sourdough loaf is £4.60 from today.")
    assert _order("sourdough loaf", [old, raised]) == [raised[0], old[0]]
    # The gateway's budget is not restated by another service's, though only the number differs.
    gateway = (_day(60), "- Error budget for gateway: 99.5%")
    reviews = (_day(10), "- Error budget for reviews: 99.9%")
    assert _order("gateway error budget", [gateway, reviews]) == [gateway[0], reviews[0]]


def test_counts_identifiers_and_the_same_value_again_restate_nothing() -> None:
    fact = (_day(60), "- The walk-in fridge holds 40 trays. Coldline services the walk-in fridge.")
    count = (_day(5), "- Walk-in fridge: sold 14 trays by noon.")
    assert _order("walk-in fridge trays", [fact, count]) == [fact[0], count[0]]
    merged = (_day(60), "- Merged PR #5011 into ledger")
    other = (_day(5), "- Merged PR #9000 into ledger")
    assert _order("ledger PR", [merged, other]) == [merged[0], other[0]]
    again = (_day(5), "- Our flour comes from Millbrook Mills, as ever.")
    older = (_day(60), "- Our flour comes from Millbrook Mills.")
    assert _order("flour", [older, again]) == [older[0], again[0]]


def test_a_stopword_of_the_query_is_no_subject() -> None:
    """The "in" of "walk-in fridge" is in every other line: sharing it shares no subject."""
    fridge = (_day(60), "- The walk-in fridge came from Bakery Exchange Leeds.")
    mixer = (_day(10), "- The dough-mixer came from Bakery Direct Norwich in 2021.")
    assert _order("where did the walk-in-fridge come from", [fridge, mixer]) == [fridge[0], mixer[0]]


def test_a_capital_that_opens_a_sentence_is_no_name() -> None:
    """Dialogue names no values by its sentences' first words ("It's", "What"): only names count."""
    first = (_day(60), "Wow, the park was lovely. It's where Mel runs on Sundays.")
    second = (_day(10), "What a day at the park. It's quiet there.")
    assert _order("park", [first, second]) == [first[0], second[0]]
    named = (_day(10), "The park where Mel ran is closed now, Jo says.")
    assert _order("park", [first, named]) == [named[0], first[0]]


def test_who_speaks_in_a_conversation_is_no_value() -> None:
    """Turns name the other speaker ("Hey Caroline"): a later turn naming her restates nothing."""
    earlier = (_day(60), "- Melanie: Hey Caroline, the pottery class starts on Monday.")
    later = (_day(10), "- Melanie: Caroline, my kids loved the pottery class at Riverside.")
    reply = (_day(10), "- Caroline: That pottery class sounds fun!")
    assert _order("pottery class", [earlier, later, reply]) == [earlier[0], later[0], reply[0]]
    # Said in a note, not by a speaker, the same name is a value another line can restate.
    teacher = (_day(60), "- The pottery class is taught by Caroline.")
    assert _order("pottery class", [teacher, later]) == [later[0], teacher[0]]


def test_a_promoted_line_is_as_new_as_the_newest_note_it_came_from() -> None:
    promoted = ("AGENT.md", f"- Our flour comes from Millbrook Mills. <!-- from {_day(70)}, {_day(40)} -->")
    between = (_day(50), "- Millbrook Mills got bought out - Harvest Grain Co from now on.")
    later = (_day(30), "- Millbrook Mills got bought out - Harvest Grain Co from now on.")
    assert _order("flour Mills", [promoted, between]) == [promoted[0], between[0]]
    assert _order("flour Mills", [promoted, later]) == [later[0], promoted[0]]


def test_superseded_text_and_undated_files_move_nothing() -> None:
    stale = (_day(60), "- Our flour comes from Millbrook Mills.")
    newer = (_day(10), "- Millbrook Mills got bought out - Harvest Grain Co from now on.")
    assert _order("flour Mills", [stale, newer], heading="Summary > Superseded") == [stale[0], newer[0]]
    topic = ("topics/suppliers.md", "- Our flour comes from Millbrook Mills.")
    assert _order("flour Mills", [topic, newer]) == [topic[0], newer[0]]
    assert _order("flour Mills", [newer, stale]) == [newer[0], stale[0]]  # already first: stays


def test_a_name_with_another_number_after_it_is_another_version() -> None:
    """No change word and no old value named: the same name written with another number restates
    the older line, though the newer line misses a query term the older one matches."""
    old = (_day(60), "- The booking system is Cliniko 3.")
    new = (_day(10), "- Front desk booking has been on Cliniko 4 since the weekend, reminders work again.")
    assert _order("which booking system", [old, new]) == [new[0], old[0]]
    # The same number again restates nothing; nor does a month's day, a date and no version.
    same = (_day(10), "- Front desk booking has been on Cliniko 3 since the weekend.")
    assert _order("which booking system", [old, same]) == [old[0], same[0]]
    trip = (_day(60), "- The school trip to Ludlow is on May 7.")
    other = (_day(10), "- The school trip money is due by May 9, Ludlow coach booked.")
    assert _order("school trip", [trip, other]) == [trip[0], other[0]]
    # A name the query asks for is the subject: ward 3 and ward 5 are two wards, not two versions.
    three = (_day(60), "- Ward 3 visiting ends at 8pm.")
    five = (_day(10), "- Ward 5 visiting ends at 8pm.")
    assert _order("ward visiting", [three, five]) == [three[0], five[0]]


def test_a_number_restated_in_more_words_needs_not_every_query_term() -> None:
    """The newer line drops one query term ("opens") but shares two and says more of its own: the
    same time slot restated. A line that swaps one word for another is another subject."""
    old = (_day(60), "- Pharmacy counter opens at 8:30.")
    new = (_day(10), "- Moved the pharmacy counter to 9:00, the locum drives in from Hereford.")
    assert _order("what time does the pharmacy counter open", [old, new]) == [new[0], old[0]]
    swap = (_day(10), "- Pharmacy hatch opens at 9:00.")
    assert _order("what time does the pharmacy counter open", [old, swap]) == [old[0], swap[0]]
    one = (_day(10), "- Moved counter stock to 9:00 delivery, the van drives in from Hereford.")
    assert _order("what time does the pharmacy counter open", [old, one]) == [old[0], one[0]]


def test_a_number_written_onto_the_asked_name_is_its_value() -> None:
    """ "which python image": the image is named with the query's word and its version joined on
    ("python:3.11-slim"); the newer line bumping it restates the promoted line, which is no subject
    of its own. Asked with the number itself, the old image is the subject, and nothing moves."""
    promoted = ("AGENT.md", f"- [note] CI runs on the python:3.11-slim image. <!-- from {_day(70)}, {_day(55)} -->")
    bumped = (_day(20), "- 12:15 [post-edit] .github/workflows/ci.yml: bumped the image to python:3.13-slim, green.")
    assert _order("which python image does CI run on", [promoted, bumped]) == [bumped[0], promoted[0]]
    assert _order("python 3.11 slim image", [promoted, bumped]) == [promoted[0], bumped[0]]
    old = (_day(60), "- Postgres on the ledger box is postgres-14, backups at 02:00.")
    new = (_day(10), "- Ledger box upgraded to postgres-16 over the weekend.")
    assert _order("which postgres on the ledger box", [old, new]) == [new[0], old[0]]


def test_an_identifier_after_a_name_is_no_version() -> None:
    """Ear tags, plates and long numbers after a name identify things; another one is another thing."""
    bluebell = (_day(60), "- Bluebell's ear tag is UK 720557 41821.")
    meg = (_day(10), "- Meg's ear tag is UK 725625 79986.")
    assert _order("what is Bluebell's ear tag number", [bluebell, meg]) == [bluebell[0], meg[0]]
    flat = (_day(60), "- The spare key for Flat 12 is with Rhodri.")
    other = (_day(10), "- The spare key for Flat 4180 is in the office safe.")
    assert _order("spare key", [flat, other]) == [flat[0], other[0]]


# -- recency breaks ties on the same match ---------------------------------------------------------


async def test_a_line_of_every_query_term_ranks_above_newer_lines_of_fewer(sidecar_client: Any, tmp_path: Path) -> None:
    """A print shop's notes name its big press on most days, so "press" weighs little; the one line
    saying who mends the press is two months older than the lines of its mould about other kit.
    BM25 ranks it first; the recency factor alone would put three newer lines above it."""
    root = tmp_path / "memory"
    repairs = {75: "the press go to Kowalski", 12: "the guillotine go to Brandt", 9: "the laminator go to Ostrowski"}
    repairs[6] = "the folder go to Haines"
    for ago in range(89, 0, -1):
        day = TODAY - timedelta(days=ago)
        line = f"Repairs to {repairs[ago]}." if ago in repairs else "Press rollers cleaned after the run."
        write(root, f"daily/{day}.md", f"# {day}\n\n## Log\n- {line}\n- Till count at close matched the roll.\n")
    client = await sidecar_client(consolidate_interval=0)
    results = await _search(client, "who does press repairs")
    texts = _texts(root, results)
    assert "Kowalski" in texts[0], texts[:4]
    assert results[0]["explain"]["bm25"]["rank"] == 1
    # the standing the recency factor gives it is below the newer lines'
    assert results[0]["explain"]["standing"] < min(r["explain"]["standing"] for r in results[1:4])


def test_a_line_of_more_query_terms_keeps_its_place_below_a_better_bm25_hit() -> None:
    """Only an inversion by age is undone: a hit of more query terms that BM25 itself ranked lower
    (a long chunk) stays below."""

    class Hit:
        def __init__(self, path: str, score: float, text: str) -> None:
            self.path, self.heading, self.score, self.text = path, "Log", score, text
            self.terms = query_tokens(["press", "repairs"])

    short = Hit(_day(5), 9.0, "- Repairs to the folder go to Haines.")
    long = Hit(_day(60), 6.0, "- Press repairs: Kowalski, see the folder of quotes and the long list ...")
    ranked = more_terms_first([(short, 1.0, 9.0), (long, 1.0, 6.0)], short.terms, TODAY)
    assert [hit.text for hit, _, _ in ranked] == [short.text, long.text]


def test_a_number_named_beside_the_one_it_replaces_restates_it() -> None:
    """ "Bread van leaves at 05:45 instead of 05:15" holds the old time too: a time of the form the
    older line lacks restates it. The same times said again restate nothing."""
    old = (_day(60), "- Bread van leaves at 05:15.")
    new = (_day(10), "- Bread van leaves at 05:45 instead of 05:15.")
    assert _order("bread van leaves", [old, new]) == [new[0], old[0]]
    both = (_day(60), "- Bread van leaves at 05:45 or 05:15, whichever is first.")
    assert _order("bread van leaves", [both, new]) == [both[0], new[0]]


def test_a_unit_after_a_number_is_no_name_the_lines_share() -> None:
    """Two jobs timed in UTC: the newer line about the other job names "UTC" and a time of its own,
    but a word written just after a number is its unit, not a value, so it restates nothing."""
    ours = (_day(40), "- Payroll export starts at 02:10 UTC instead of 01:40.")
    other = (_day(5), "- Ledger sync starts at 04:20 UTC instead of 01:40.")
    assert _order("when does payroll export start", [ours, other]) == [ours[0], other[0]]
    # a name that is no unit still restates: the old supplier named beside the new one
    supplier = (_day(60), "- Payroll is run by Sage.")
    moved = (_day(5), "- Payroll moved off Sage, run by Xero from April.")
    assert _order("who runs payroll", [supplier, moved]) == [moved[0], supplier[0]]


def test_a_chunks_lines_are_read_once_whatever_the_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a hit's lines hold whatever the query (their day, the words that may be values) is read
    once per chunk: ranking the same chunks again, for another query, reads no line of them again,
    and the part that depends on the query (a word it asks for is no value) is still its own."""
    read: list[str] = []
    real = standing._read_line

    def counted(raw: str, note_day: date | None) -> Any:
        read.append(raw)
        return real(raw, note_day)

    monkeypatch.setattr(standing, "_read_line", counted)
    standing._reading.cache_clear()
    old = (_day(60), "- Our flour comes from Millbrook Mills.")
    new = (_day(10), "- Flour from Millbrook Mills now, the invoices say Harvest Grain Co.")
    assert _order("flour", [old, new]) == [new[0], old[0]]
    assert sorted(read) == sorted([old[1], new[1]])
    # Asked for by name, the old supplier is the subject, not a value the newer line changes.
    assert _order("flour Millbrook Mills", [old, new]) == [old[0], new[0]]
    assert _order("flour", [old, new]) == [new[0], old[0]]
    assert sorted(read) == sorted([old[1], new[1]])  # no line read again
    # Another text at the same place is another chunk: read anew.
    edited = (old[0], "- Our flour comes from Millbrook Mills, the rye from Stoate.")
    assert _order("flour", [edited, new]) == [new[0], edited[0]]
    assert read[-1] == edited[1]


@needs_model
async def test_the_hybrid_answer_shows_a_text_once(tmp_path: Path, model: OnnxEmbedder) -> None:
    """The hybrid's answer, like BM25's, shows a fact kept in AGENT.md and in weekly summaries once
    (tests/http/test_search.py has the BM25 case), and the copies' places go to other hits."""
    root = tmp_path / "memory"
    fact = "The kiln is fired by Okafor Ceramics on Thursdays."
    write(root, "AGENT.md", f"# Agent\n\n## Kiln\n\n{fact}\n")
    for week in ("2025-W40", "2025-W41", "2025-W42"):
        write(root, f"daily/summaries/{week}.md", f"# Week {week}\n\n## Kiln\n\n{fact}\n")
    for n, line in enumerate(["Kiln shelves are silicon carbide.", "Glaze tests go in the small kiln first."]):
        write(root, f"topics/kiln-{n}.md", f"# Kiln {n}\n\n{line}\n")
    tier = Tier("agent", root)
    await tier.open()
    vectors = VectorIndex(tier.index.path, model.model_id, model.dim)
    try:
        health = EmbedderHealth(model, confirmed=True)
        await drain(EmbedBatcher(model, health, {"agent": tier}, {"agent": vectors}), vectors)
        searcher = HybridSearcher(model, health, {"agent": vectors}, query_timeout=30.0)
        results, degraded = await searcher.search(tier, "who fires the kiln", 3, False)
    finally:
        vectors.close()
        await tier.close()
    assert not degraded
    texts = _texts(root, results)
    assert sum(fact in t for t in texts) == 1, texts
    assert sorted(r["path"] for r in results if r["path"].startswith("topics/")) == [
        "topics/kiln-0.md",
        "topics/kiln-1.md",
    ]


def test_a_hit_of_one_query_term_passes_a_newer_hit_of_none_only() -> None:
    """A hit holding one query term passes, when only age put it below, a hit that holds none of
    them (BM25 matched it by stem alone), and never a hit that holds another single term."""

    class Hit:
        def __init__(self, path: str, score: float, text: str) -> None:
            self.path, self.heading, self.score, self.text = path, "Log", score, text
            self.terms = query_tokens(["kiln", "firing"])

    none = Hit(_day(5), 6.0, "- Fired the bisque overnight.")  # "fired": no snippet match for "firing"
    other = Hit(_day(10), 6.2, "- Kiln shelves replaced.")
    older = Hit(_day(200), 6.5, "- Firing schedule moved to Thursdays.")
    weighed = [(h, f := standing.standing(h.path, h.heading, TODAY), h.score * f) for h in (none, other, older)]
    weighed.sort(key=lambda item: -item[2])
    assert [h.text for h, _, _ in weighed] == [other.text, none.text, older.text]  # age put it last
    ranked = more_terms_first(weighed, none.terms, TODAY)
    assert [hit.text for hit, _, _ in ranked] == [other.text, older.text, none.text]
