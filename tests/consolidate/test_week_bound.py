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
    assert sum(line.startswith("## ") for line in week.rest.splitlines()) >= 10  # each left-out line a section


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
