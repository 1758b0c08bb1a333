"""An answer's few slots go to what it has not said yet (``standing.one_place``): the same line a
second time (the evergreen file's promoted copy and a week's summary) moves to just below the
answer, and a line of a mould already shown (the same words, other values) that matches no query
term the lines above lack gives way to the next hit that does. The first test writes real notes and
searches them through the real sidecar (BM25, as the server answers without an embedder); the
others read the function on the lines that must not move."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.index.snippet import query_tokens
from sidecar.retrieval.standing import one_place
from tests.support.memory import write

FILLER = [
    "Reminded Mia about the history homework.",
    "Replied to Ruth about the dentist reminder.",
    "Added 24 items to the shopping list.",
    "Sorted the emails from school into the Ada folder.",
    "Checked the utility room for damp: nothing new.",
    "Renewed the library books for Ada.",
]
ANSWER = "Brightwell Garage has the Volvo booked in."


def _summary(week: str, lines: list[str]) -> str:
    sections = "".join(f"### {' '.join(line.split()[:4])}\n- {line}\n" for line in lines)
    return f"# Summary of {week}\n\n## Log\n{sections}"


def _notes(root: Path) -> None:
    write(
        root,
        "daily/summaries/2026-W39.md",
        _summary(
            "2026-W39", ["Glenrock Services installed the heat-pump.", "Ashdown Services installed the tumble-dryer."]
        ),
    )
    write(
        root, "daily/summaries/2026-W33.md", _summary("2026-W33", ["Ashdown Services installed the doorbell-camera."])
    )
    body = [*FILLER, *FILLER, ANSWER, *FILLER, *FILLER]
    write(root, "daily/2026-11-27.md", "# 2026-11-27\n\n## Log\n" + "".join(f"- {line}\n" for line in body))


async def _texts(client: Any, root: Path, query: str, limit: int) -> list[str]:
    resp = await client.post("/memory/search", json={"query": query, "limit": limit})
    assert resp.status == 200
    out = []
    for hit in (await resp.json())["results"]:
        lines = (root / hit["path"]).read_text(encoding="utf-8").splitlines()
        out.append("\n".join(lines[hit["line_start"] - 1 : hit["line_end"]]))
    return out


async def test_lines_of_one_mould_give_way_to_the_answer(sidecar_client: Any, tmp_path: Path) -> None:
    """Three summary lines of one mould share one word with the question and rank above the note
    that answers it: the first of them keeps its place, the answer takes the next, and the others
    are still there for a caller asking for more."""
    root = tmp_path / "memory"
    _notes(root)
    client = await sidecar_client(consolidate_interval=0)
    query = "which garage services the car"
    top = await _texts(client, root, query, 2)
    assert "Glenrock Services installed the heat-pump" in top[0]
    assert ANSWER in top[1], top
    more = await _texts(client, root, query, 10)
    assert len(more) == 4 and ANSWER in more[1]
    assert any("tumble-dryer" in text for text in more) and any("doorbell-camera" in text for text in more)


def _hits(*texts: str) -> list[tuple[str, str, str]]:
    return [(f"daily/summaries/2026-W{30 + i}.md", "Log", text) for i, text in enumerate(texts)]


def _ranked(texts: list[tuple[str, str, str]], query: str, limit: int) -> list[str]:
    return [text for _, _, text in one_place(texts, lambda hit: hit, query_tokens(query.split()), limit)]


def test_the_same_line_twice_moves_below_the_answer() -> None:
    """The evergreen file's copy (with its provenance comment) and a week's line are one line: the
    second goes to just below the answer's ``limit``, not out of the list."""
    hits = [
        ("daily/summaries/2026-W32.md", "Log", "- Tomoko reviews every database migration in orders-api."),
        (
            "AGENT.md",
            "Consolidated",
            "- Tomoko reviews every database migration in orders-api <!-- from daily/2026-08-03.md -->",
        ),
        ("daily/summaries/2026-W40.md", "Log", "- Kwame reviews every database migration in notify-svc."),
        ("daily/2026-11-24.md", "Log", "- orders-api runs on the Postgres cluster pg-main-3."),
        ("daily/2026-11-25.md", "Log", "- Swept the database logs."),
    ]
    got = _ranked(hits, "which database does orders-api use", 3)
    assert got == [hits[0][2], hits[2][2], hits[3][2], hits[1][2], hits[4][2]]


def test_a_line_said_once_or_with_more_of_the_query_stays() -> None:
    """Lines of other moulds never move; a line of the mould that matches a query term the lines
    above lack is no repeat (it may be the answer)."""
    hits = _hits(
        "- The contact at Moorside Gallery is Elin Morgan.",
        "- The contact at Wren Theatre Club is Gwen Harris.",
        "- The gallery invoices go out on the 3rd.",
        "- Wren Theatre Club pays by card.",
    )
    assert _ranked(hits, "who is the contact at Wren Theatre Club", 3) == [text for _, _, text in hits]
    # Asked of the gallery's invoices, the second contact (another subject, no more of the question)
    # gives way to the line that says what the first does not.
    assert _ranked(hits, "who is the contact for gallery invoices", 2) == [hits[i][2] for i in (0, 2, 1, 3)]
    other = _hits(
        "- Glenrock Services installed the heat-pump.",
        "- The boiler was serviced on 3 May.",
        "- The car goes to Brightwell Garage.",
    )
    assert _ranked(other, "which garage services the car", 2) == [text for _, _, text in other]


def test_a_repeat_with_nothing_below_to_give_way_to_stays() -> None:
    hits = _hits(
        "- store review 3*: 'fast, works fine'",
        "- store review 2*: 'fast but drains the battery'",
        "- Checked the review queue.",
    )
    assert _ranked(hits, "how fast is the store review", 2) == [text for _, _, text in hits]
    # With a hit below that matches another of the query's words, the repeat gives way to it.
    more = [*hits, ("daily/2026-11-20.md", "Log", "- A P1 fix has to reach users fast: store review in 24 hours.")]
    assert _ranked(more, "how fast does a P1 fix reach users", 2)[:2] == [hits[0][2], more[3][2]]


def test_a_hit_that_says_more_than_its_one_line_never_moves() -> None:
    """A form pasted per booking: two bookings of one group share their group's line, the line the
    question matches best, and each holds its own answer on a line it does not match. Neither moves;
    the same line said alone (a week's one-line section) still gives way."""
    form = "### Booking\nBooking ref: {ref}\nGroup: a pair of Dutch cyclists\nNights: {nights}\n"
    hits = [
        ("daily/2026-11-02.md", "Booking", form.format(ref="BH-4113", nights=3)),
        ("daily/2026-11-19.md", "Booking", form.format(ref="BH-4347", nights=2)),
        ("daily/2026-11-20.md", "Log", "- Booked the Dutch cyclists' bikes into the shed."),
    ]
    query = "booking reference for a pair of Dutch cyclists"
    assert _ranked(hits, query, 2) == [text for _, _, text in hits]
    alone = [hits[0], ("daily/summaries/2026-W47.md", "Log", "### Group\n- Group: a pair of Dutch cyclists\n"), hits[2]]
    assert _ranked(alone, query, 2) == [hits[0][2], hits[2][2], alone[1][2]]


def test_a_repeat_whose_other_lines_answer_nothing_asked_still_moves() -> None:
    """A day's note says the line above again among lines of other business, each with its own
    values: none of them holds a word of the question, so the note says nothing new on it and
    gives way; the answer below takes its place."""
    hits = [
        ("AGENT.md", "Consolidated", "- Marisol does the early bake on Saturdays."),
        (
            "daily/2026-10-10.md",
            "Log",
            "- Takings yesterday: £2352.\n- Marisol does the early bake on Saturdays.\n"
            "- Invoice 53430 from Costco checked and filed.",
        ),
        ("daily/2026-11-20.md", "Log", "- From December the early bake starts at 05:30."),
    ]
    assert _ranked(hits, "who does the early bake", 2) == [hits[0][2], hits[2][2], hits[1][2]]


def test_two_values_of_one_named_subject_both_stay() -> None:
    """Two lines of one mould naming the subject the question names (the same customer, other
    terms) are two answers to it, not a repeat: neither gives way to a hit below. Lines of the
    mould naming other subjects still do."""
    hits = [
        ("daily/summaries/2026-W45.md", "Log", "- The Corner Deli pays on 45-day terms."),
        ("daily/summaries/2026-W32.md", "Log", "- The Corner Deli pays on 28-day terms."),
        ("daily/summaries/2026-W41.md", "Log", "- Trying Zettle for the card payments this quarter."),
    ]
    assert _ranked(hits, "what payment terms does The Corner Deli have", 2) == [text for _, _, text in hits]
    other = [
        ("daily/summaries/2026-W45.md", "Log", "- Glenrock Services installed the heat-pump."),
        ("daily/summaries/2026-W32.md", "Log", "- Ashdown Services installed the tumble-dryer."),
        ("daily/2026-11-27.md", "Log", "- The car goes to Brightwell Garage."),
    ]
    assert _ranked(other, "which garage services the car", 2) == [other[0][2], other[2][2], other[1][2]]
