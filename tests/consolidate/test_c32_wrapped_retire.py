"""A summary line that quotes a superseded statement whole after its sender and time retires with
the statement: it says the old value as much as the statement does, the change search never reads
a quote on its own, and left current it ranks above the new value. A statement after the writer's
own label is read by the change search as said that day, and is left to it."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.supersede import SUPERSEDED, Said, retire
from sidecar.consolidate.text import normalised

OLD = "The render farm queue is managed by Deadline 10 on the rack in bay two."
NEWER = Said(
    "- Spent the morning on the shader cache; the render farm is on OpenCue now, Deadline is gone.",
    "daily/2026-05-20.md",
    (date(2026, 5, 20), 3),
    None,
)
STALE = {normalised(OLD): NEWER}


def _summary(line: str, *days: str) -> str:
    named = ", ".join(f"daily/{day}.md" for day in days)
    return (
        "# 2026-W12\n\n## Notes\n"
        f"<!-- from {named} -->\n"
        f"### First\n- {line}\n"
        "### Second\n- The plotter in studio B takes A0 rolls from Papercraft.\n"
    )


def _current(text: str) -> str:
    return text.split(f"## {SUPERSEDED}", 1)[0]


def _retired(text: str) -> str:
    parts = text.split(f"## {SUPERSEDED}", 1)
    return parts[1] if len(parts) == 2 else ""


def test_a_quoted_message_of_a_superseded_statement_retires_with_it() -> None:
    quoted = f'> Wendell in #pipeline, 09:41: "{OLD}"'
    out = retire(_summary(quoted, "2026-03-16", "2026-03-20"), STALE)
    assert "Wendell" not in _current(out)
    assert "Wendell" in _retired(out) and "superseded 2026-05-20 by daily/2026-05-20.md" in _retired(out)
    assert "Papercraft" in _current(out)  # the other line stays


def test_a_quote_in_typographic_marks_retires_too() -> None:
    out = retire(_summary(f"Imogen on the phone, 14:02: “{OLD}”", "2026-03-16"), STALE)
    assert "Imogen" in _retired(out) and "Imogen" not in _current(out)


def test_a_statement_after_the_writers_label_is_left_to_the_change_search() -> None:
    labelled = f"Handover note: {OLD[0].lower()}{OLD[1:]}"
    text = _summary(labelled, "2026-03-16")
    assert retire(text, STALE) == text


def test_the_statement_said_whole_still_retires() -> None:
    out = retire(_summary(OLD, "2026-03-16"), STALE)
    assert "Deadline 10" in _retired(out)


def test_a_lead_in_of_no_quote_mark_is_a_statement_of_its_own() -> None:
    qualified = f"For the archive renders, {OLD[0].lower()}{OLD[1:]}"
    text = _summary(qualified, "2026-03-16")
    assert retire(text, STALE) == text


def test_a_lead_in_that_says_the_change_is_the_change_itself() -> None:
    # the lead-in names what the newer line brings: the old statement quoted beside its change
    beside = f'OpenCue notes, Wendell: "{OLD}"'
    text = _summary(beside, "2026-03-16")
    assert retire(text, STALE) == text


def test_a_wrapped_statement_from_a_note_after_the_change_stays() -> None:
    # quoted again after the newer line: the old value may stand again, which the change search judges
    quoted = f'> Wendell in #pipeline, 09:41: "{OLD}"'
    text = _summary(quoted, "2026-03-16", "2026-05-22")
    assert retire(text, STALE) == text


def test_a_short_statement_inside_a_line_is_no_wrapped_statement() -> None:
    short = "Queue is Deadline."
    stale = {normalised(short): NEWER}
    text = _summary(f'From the wiki: "{short}"', "2026-03-16")
    assert retire(text, stale) == text
