"""What a note's line is read under, kept with it in a week's summary: a nested bullet's parent, a
table row's header, a quoted email's subject, a bold label, and a topic heading only one note of
the week has. A summary writes each standing line as a section of its own; the section's title
carries that context, so a question naming it ("the Quayside House lift contractor") finds a line that
does not ("lift: Apex Lifts"), as it found the line inside its note."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.periods import section_lines, week_lines
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.index.chunker import chunk_markdown

MONDAY = date(2026, 1, 5)
UNTIL = date(2026, 2, 2)

NOTE = """# 2026-01-05

## Log
- Overnight loads checked first thing:
  - stg_orders: 391,829 rows, 12 min
- Reviewed the queue.

| Site | Item | Contractor |
|---|---|---|
| Quayside House | lift | Apex Lifts |

> From: Dana <dana@example.org>
> Subject: Re: Park Row boiler
> The boiler is serviced by Vaillant Care in March.

**Harbour House**
- alarm: Brightguard

Contractors:
- roofer: Dales Roofing

A plain paragraph after a blank line.
"""


def test_lines_are_read_under_what_heads_them_in_their_note() -> None:
    contexts = {line.text: line.context for line in section_lines("daily/2026-01-05.md", NOTE)}
    assert contexts["- stg_orders: 391,829 rows, 12 min"] == "Overnight loads checked first thing"
    assert contexts["| Quayside House | lift | Apex Lifts |"] == "Site / Item / Contractor"
    assert contexts["> The boiler is serviced by Vaillant Care in March."] == "Park Row boiler"
    assert contexts["- alarm: Brightguard"] == "Harbour House"
    assert contexts["- roofer: Dales Roofing"] == "Contractors"
    # a blank line ends what a label or a list heads; a line of its own has no context
    assert contexts["A plain paragraph after a blank line."] == ""
    assert contexts["- Reviewed the queue."] == ""
    assert contexts["| Site | Item | Contractor |"] == ""


def test_a_topic_heading_of_one_note_keeps_its_name() -> None:
    """Two notes of a week, each with a topic heading the other lacks and no section under it:
    their lines stay under "Quayside House" and "Park Row", not a week's "Notes"."""
    texts = {
        "daily/2026-01-05.md": "# 2026-01-05\n\n## Quayside House\n\n- lift: Apex Lifts\n",
        "daily/2026-01-06.md": "# 2026-01-06\n\n## Park Row\n\n- boiler: Vaillant Care\n",
    }
    headings = {line.text: line.heading for line in week_lines(sorted(texts), texts)}
    assert headings == {"- lift: Apex Lifts": "Quayside House", "- boiler: Vaillant Care": "Park Row"}


def test_a_minutes_title_still_names_its_note() -> None:
    """A one-note heading over sections of its own (a day's minutes) names the note: its sections
    join the week's sections of the same name."""
    texts = {
        f"daily/2026-01-0{d}.md": f"# 2026-01-0{d}\n\n## Sync {d}\n\nAttendees: Ade\n\n### Decisions\n\n- Fact {d} is x.\n"
        for d in (5, 6)
    }
    headings = {line.text: line.heading for line in week_lines(sorted(texts), texts)}
    assert headings == {
        "Attendees: Ade": "Notes",
        "- Fact 5 is x.": "Decisions",
        "- Fact 6 is x.": "Decisions",
    }


def _tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    (root / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for d in range(5):
        day = MONDAY + timedelta(days=d)
        body = [f"# {day.isoformat()}\n\n## Log\n\n- Answered {d + 3} tickets before lunch.\n"]
        if d == 1:
            body.append("\n## Quayside House\n\n- lift: Apex Lifts\n")
        if d == 2:
            body.append("\n## Park Row\n\n- boiler: Vaillant Care\n")
        if d == 3:
            body.append("\n## Sites\n\n| Site | Item | Contractor |\n|---|---|---|\n| Harbour House | roof | Dales |\n")
        if d == 4:
            body.append("\n## Sites\n\n- Quay Street:\n  - gutters: Clearflow\n")
        (root / "daily" / f"{day.isoformat()}.md").write_text("".join(body))


async def test_a_summary_line_is_found_by_what_headed_it(tmp_path: Path) -> None:
    _tier(tmp_path)
    await consolidate(tmp_path, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)
    summary = (tmp_path / "daily" / "summaries" / "2026-W02.md").read_text()
    headings = {c.body.strip(): c.heading for c in chunk_markdown(summary) if c.body.strip()}
    assert "Quayside House" in headings["- lift: Apex Lifts"]
    assert "Park Row" in headings["- boiler: Vaillant Care"]
    assert "Contractor" in headings["| Harbour House | roof | Dales |"]
    assert "Quay Street" in headings["- gutters: Clearflow"]
    # the lines themselves are as written: what a later run reads from the summary
    assert "\n- gutters: Clearflow\n" in summary
    assert "\n| Harbour House | roof | Dales |\n" in summary


OLD = "Staff meeting is Monday lunchtime in the staff room."


def test_an_answer_is_read_without_its_label() -> None:
    note = f"# 2026-01-05\n\n## Q&A\n\nQ (Kit): when is the staff meeting? A: {OLD}\n\nA: not after a question.\n"
    texts = [line.text for line in section_lines("daily/2026-01-05.md", note)]
    assert texts == ["Q (Kit): when is the staff meeting?", OLD, "A: not after a question."]


RECORD = """# 2026-01-05

## Vendors
- kind: vendor
  name: Greenleaf Produce
  phone: 0113 727 7162
  rep: Orla Keane
- kind: vendor
  name: Hartley Dairy
  tel: 0151 436 1172

- Deployed the billing worker and
  restarted its queue.
"""


def test_a_records_fields_are_read_under_its_bullet_and_its_name() -> None:
    contexts = {line.text: line.context for line in section_lines("daily/2026-01-05.md", RECORD)}
    assert contexts["name: Greenleaf Produce"] == "kind: vendor"
    assert contexts["phone: 0113 727 7162"] == "kind: vendor > name: Greenleaf Produce"
    assert contexts["rep: Orla Keane"] == "kind: vendor > name: Greenleaf Produce"
    assert contexts["tel: 0151 436 1172"] == "kind: vendor > name: Hartley Dairy"  # the next record's own
    assert contexts["restarted its queue."] == "Deployed the billing worker and"  # a wrapped bullet goes on
    assert contexts["- kind: vendor"] == ""


async def test_a_records_field_in_a_summary_is_found_by_the_records_name(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir(parents=True)
    (tmp_path / "daily" / "2026-01-06.md").write_text(RECORD.replace("2026-01-05", "2026-01-06"))
    await consolidate(tmp_path, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)
    summary = (tmp_path / "daily" / "summaries" / "2026-W02.md").read_text()
    headings = {c.body.strip(): c.heading for c in chunk_markdown(summary) if c.body.strip()}
    assert "Greenleaf Produce" in headings["phone: 0113 727 7162"]
    assert "Hartley Dairy" in headings["tel: 0151 436 1172"]
