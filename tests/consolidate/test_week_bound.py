"""A week's summary bound counts what the summary writes: each line's title (with what headed the
line in its note), each section's heading and comment, not the lines alone. What it
leaves out of a standing section is in the rest of the summary, whole."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.weekly import WEEK_BOUND, summarise_week
from sidecar.index.chunker import chunk_markdown

MONDAY = date(2026, 3, 2)
BUDGET = 1000
SITES = ("Quayside House", "Harbour Lofts", "Mill Yard", "Canal Wharf", "Ropewalk Court")
FACTS = (
    "lift servicing by Apex Lifts, account {n}1",
    "boiler cover from Brightline Heating until June {n}2",
    "fire alarm panel code {n}3 held by the caretaker",
    "gutters cleared each autumn, Corran quoted {n}4 pounds",
    "door entry fobs ordered in batches of {n}5",
    "roof access key number {n}6 in the office safe",
    "drains jetted by Delph Drainage, job {n}7",
    "stair lighting timers reset to {n}8 minutes",
)


def _note(n: int) -> str:
    site = SITES[n % len(SITES)]
    rows = "".join(f"  - {fact.format(n=n)}\n" for fact in FACTS)
    return f"# {(MONDAY + timedelta(days=n)).isoformat()}\n\n## Contractors\n\n- {site}:\n{rows}"


def _titles(text: str) -> list[str]:
    """What heads each line of a written summary, as search reads it: its section's own title."""
    return [c.heading.rsplit(" > ", 1)[-1] for c in chunk_markdown(text) if c.body and not c.body.startswith("<!--")]


def _texts() -> dict[str, str]:
    return {f"daily/{(MONDAY + timedelta(days=n)).isoformat()}.md": _note(n) for n in range(5)}


async def test_the_weeks_bound_counts_titles_and_headings() -> None:
    texts = _texts()
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET, threshold=0.6, stale={}
    )
    titles = _titles(week.text)
    assert titles and all(t.startswith(SITES) for t in titles)  # titled with what headed each line
    assert len(week.text) <= BUDGET * WEEK_BOUND  # the file as written, titles and comments included
    # what the bound left out of the summary is in its rest, each line whole
    for text in texts.values():
        for line in text.splitlines():
            if line.startswith("  - "):
                assert line.strip() in week.text or line.strip() in week.rest
    assert len(_titles(week.rest)) >= 10  # each left-out line a section of its own


async def test_a_line_that_only_labels_the_lines_under_it_is_no_standing_section() -> None:
    texts = _texts()
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET * 4, threshold=0.6, stale={}
    )
    titles = _titles(week.text)
    assert "Quayside House: lift servicing by Apex" in titles  # the label heads its lines' titles
    assert not [t for t in titles if t in SITES]  # and stands as no fact of its own


async def test_a_question_is_no_standing_section() -> None:
    texts = _texts()
    texts = {
        source: text + f"\n## Q&A\n\nQ (Fen): what came of item {n} from the board?\n"
        for n, (source, text) in enumerate(texts.items())
    }
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET * 4, threshold=0.6, stale={}
    )
    titles = _titles(week.text)
    assert titles and not [t for t in titles if t.startswith("Q (Fen)")]


async def test_a_topic_heads_all_its_lines_and_a_notes_title_none_of_many() -> None:
    """A short heading names what its lines are about (they seldom name it): each of its lines'
    sections stays under it. A note's title over many lines heads none of them, only itself: under
    it, its words ranked every one of the lines on them."""
    title = "Session 16:10: track down the 500s in the staging environment"
    texts = {
        f"daily/{(MONDAY + timedelta(days=n)).isoformat()}.md": (
            f"# {(MONDAY + timedelta(days=n)).isoformat()}\n\n## Quayside House\n\n"
            + "".join(f"- {fact.format(n=n)}\n" for fact in FACTS[:4])
            + f"\n## {title}\n\n"
            + "".join(f"- {fact.format(n=n + 5)}\n" for fact in FACTS[4:])
        )
        for n in range(3)
    }
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET * 4, threshold=0.6, stale={}
    )
    lines = [c for c in chunk_markdown(week.text) if c.body.startswith("- ")]
    topic = [c for c in lines if any(f.split()[0] in c.body for f in FACTS[:4])]
    titled = [c for c in lines if any(f.split()[0] in c.body for f in FACTS[4:])]
    assert len(topic) >= 6 and all("Quayside House" in c.heading for c in topic)
    assert len(titled) >= 6 and not [c for c in titled if "staging" in c.heading]
    assert [c for c in chunk_markdown(week.text) if c.heading.endswith(title)]  # the title itself, once
