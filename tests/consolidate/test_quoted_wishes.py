"""The operator's wishes as a shift log pastes and words them: a chat message quoted under its
sender and channel, a contracted "I'd like" / "we'd prefer", and what is wanted followed by
"please". Each is a statement of the wish; said over weeks, it is a preference."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from sidecar.consolidate.conduct import is_rule
from sidecar.consolidate.promote import preferences

START = date(2026, 3, 2)  # a Monday


def _notes(lines_by_day: dict[int, list[str]]) -> dict[str, str]:
    return {
        f"daily/{START + timedelta(days=n)}.md": "## Log\n" + "".join(f"{line}\n" for line in lines)
        for n, lines in lines_by_day.items()
    }


WISH = "I'd rather have the kiln log as a table, one row per firing."


def test_a_wish_pasted_as_a_quoted_chat_message_counts_as_said() -> None:
    """Said once in the log and twice in quoted messages, on three days over three weeks: one
    preference. Quotes are the operator's own words; left unread, the wish was said on one day."""
    days = {
        0: [f"- Orla replied in the thread: {WISH}", "- Glaze batch 14 mixed."],
        9: [f'> Orla in #studio, 08:12: "{WISH}"', "- Glaze batch 15 mixed."],
        17: [f'> Orla in #kiln-room, 16:40: "{WISH}"', "- Shelf 3 wiped down."],
    }
    found = [c for c in preferences(_notes(days)) if "kiln log as a table" in c.text]
    assert len(found) == 1, preferences(_notes(days))
    assert len(found[0].sources) == 3


def test_a_quoted_message_said_on_one_day_is_no_preference() -> None:
    days = {0: [f'> Orla in #studio, 08:12: "{WISH}"'], 9: ["- Glaze batch 15 mixed."], 17: ["- Kiln 2 fired."]}
    assert preferences(_notes(days)) == []


@pytest.mark.parametrize(
    "line",
    [
        "I'd like the firing schedule as a table, one row per kiln.",
        "We'd prefer the glaze orders by Thursday noon.",
        "She'd like the invoices sent as PDFs.",
        "Firing temperatures in Celsius please, with the cone number beside them.",
        "Kiln logs in the red binder please.",
    ],
)
def test_a_contracted_wish_and_a_wish_ending_in_please_are_rules(line: str) -> None:
    assert is_rule(f"- {line}"), line


@pytest.mark.parametrize(
    "line",
    [
        "I'd seen the cracked shelf before the firing.",
        "He'd left the kiln door open overnight.",
        "Quiet day, please.",
        "Could we get the glaze orders in Celsius please?",
    ],
)
def test_a_contracted_past_a_greeting_and_a_question_are_not(line: str) -> None:
    assert not is_rule(f"- {line}"), line
