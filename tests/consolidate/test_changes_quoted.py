"""A line that says a standing line word for word inside it (a message quoted after its sender,
its channel and its time) restates it and changes nothing; a word written in snake case names a
value ("orders_daily" renamed to "sales_rollup"), as a word with a digit does; and what is left of a
contraction ("don't") is no word of a subject."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import (
    WORDS_COSINE,
    changed_by_meaning,
    changed_by_signal,
    changed_by_value,
    meaning_texts,
    word_vectors,
)
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)  # a Monday
OTHER = [  # the rest of a tier: standing lines of other subjects, said in two weeks
    "The loading bay key is kept by Oskar.",
    "Invoices are raised on the 3rd through Xero.",
    "The forklift service is booked with Hallam Lifts every March.",
    "Merges to main need a green pipeline on Gitea.",
]
AUDITOR = "Our fire safety assessor is Kestrel Compliance, and the lead inspector is Rhona Vale."
QUOTED = f'> Bram in #site-ops, 14:05: "{AUDITOR}"'
TABLE = "The weekly sales rollup reads the orders_daily table in the warehouse."
RENAMED = "orders_daily got renamed to sales_rollup in the warehouse during the spring tidy-up."


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _tier(old: str, newer: list[str]) -> list[Said]:
    lines = [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]
    lines += [_said(old, day, 0) for day in (0, 8, 15)]
    return lines + [_said(text, 40 + 10 * n, 1) for n, text in enumerate(newer)]


def _changed(lines: list[Said]) -> dict[str, str]:
    found = {**changed_by_value(lines), **changed_by_signal(lines)}
    return {old: newer.text for old, newer in found.items()}


def test_a_standing_line_quoted_after_its_sender_is_no_change_of_it() -> None:
    # the sender, the channel and the time are values the older line lacks; the quote keeps all of its
    assert _changed(_tier(AUDITOR, [QUOTED])) == {}


def test_a_quote_with_a_change_signal_around_it_may_still_change_the_line() -> None:
    moved = f"{QUOTED} - not any more, replaced by Ashdown Fire now"
    changed = _changed(_tier(AUDITOR, [moved]))
    assert list(changed.values()) == [f"- {moved}"]


def test_a_line_keeping_the_old_values_beside_new_ones_is_still_read_when_it_is_no_quote() -> None:
    # the older line's words are not all in it, in order: not a quote, so the rules read it as before
    rebranded = "Kestrel Compliance became Ashdown Fire, and the lead inspector is Rhona Vale still."
    assert list(_changed(_tier(AUDITOR, [rebranded])).values()) == [f"- {rebranded}"]


def test_a_snake_case_name_renamed_to_another_is_a_value_given_anew() -> None:
    changed = _changed(_tier(TABLE, [RENAMED]))
    assert changed == {"the weekly sales rollup reads the orders_daily table in the warehouse": f"- {RENAMED}"}


def _by_meaning(lines: list[Said]) -> dict[str, str]:
    found = changed_by_meaning(lines, word_vectors(meaning_texts(lines)), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def test_a_quote_of_the_line_is_not_the_nearest_statement_that_hides_its_change() -> None:
    # the quote is nearer to the line than anything: read as its neighbour, it left the change
    # in other words (a rebrand) no nearest line to be read by
    rebranded = "Kestrel Compliance has rebranded as Ashdown Fire after the merger; Rhona Vale stays lead inspector."
    lines = _tier(AUDITOR, [QUOTED, rebranded])
    assert _by_meaning(lines) == {
        "our fire safety assessor is kestrel compliance and the lead inspector is rhona vale": f"- {rebranded}"
    }


def test_a_contraction_both_lines_write_names_no_subject() -> None:
    # "don't" in both is no noun phrase the lines share: the rule of review changes no replica
    replica = "For anyone pulling stats: the orders read replica is db-orders-ro-12.shop.internal, please don't point Metabase at the primary."
    rule = "Mira replied in the thread: You don't merge your own change, even a one-line copy fix; find a reviewer."
    assert _changed(_tier(replica, [rule])) == {}
