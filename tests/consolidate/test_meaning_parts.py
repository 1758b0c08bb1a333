"""Changes read by meaning where the later line says more than the change: its clauses are read
one by one, and only a line that could be the standing line's sibling (naming a value of the same
sort) keeps it from being the nearest by a margin."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import WORDS_COSINE, changed_by_meaning, meaning_texts, word_vectors
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 1, 5)  # a Monday
FIRMWARE = "The edge routers run firmware 17.6.5 from the vendor portal."
INSIDE = (
    "Ama was on the bridge with the carrier half the evening about the flapping uplink and the "
    "ticket backlog, edge routers on firmware 17.9.4 since the window, and the spare optics arrived late."
)
LOAF = "A sourdough loaf sells for £4.20."
PRICE = "Put the sourdough loaf up to £4.60 - flour costs again."
RULE = "Never sell sourdough as fresh, whatever the margin."
TABLE = [  # one frame, a fact a line: the later one is another fact, not a new value of the first
    ("Credentials for the billing API are kept in Vault under secret/billing.", (0, 9, 16)),
    ("Credentials for the search index are kept in Vault under secret/search.", (60,)),
]
OTHER = [  # the rest of a tier: standing lines of other subjects, said in two weeks
    "The office alarm code is kept by Priya.",
    "Payroll runs on the 25th through Sage.",
    "The van insurance renews with Aviva in March.",
    "Deploys to prod need a second reviewer on GitHub.",
    "The carrier account manager is Tomasz at Northline.",
]


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _read(lines: list[Said]) -> dict[str, str]:
    texts = meaning_texts(lines)
    found = changed_by_meaning(lines, word_vectors(texts), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def _tier(changes: list[tuple[str, str]], rule: str | None = None) -> list[Said]:
    lines = [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]
    for n, (old, new) in enumerate(changes):
        lines += [_said(old, day, n) for day in (0, 8, 15)] + [_said(new, 60 + n, n)]
    if rule is not None:
        lines += [_said(rule, day, 20) for day in (2, 11, 40)]
    return lines


def test_a_change_inside_a_line_about_something_else_is_read_in_its_own_clause() -> None:
    found = _read(_tier([(FIRMWARE, INSIDE)]))
    assert found == {"the edge routers run firmware 17 6 5 from the vendor portal": f"- {INSIDE}"}


def test_a_line_naming_no_value_of_the_sort_is_no_sibling_to_keep_a_change_apart() -> None:
    # the rule shares "sell" and "sourdough" with the loaf's line and is nearly as near as the price
    # put up, but names no price: it is no sibling of the loaf's line, so the price is the nearest
    assert _read(_tier([(LOAF, PRICE)], RULE)) == {"a sourdough loaf sells for 4 20": f"- {PRICE}"}


def test_a_table_of_facts_in_one_frame_is_still_no_change() -> None:
    lines = _tier([])
    lines += [_said(text, day, 9) for text, days in TABLE for day in days]
    assert _read(lines) == {}


NAMED_BY_ID = "Ama on the bridge with the carrier all evening, edge-rtr-02 runs 17.9.4 since the window."


def test_an_identifier_names_the_subject_its_words_say() -> None:
    # no word of the later line is a word of the fact's but those its identifiers are made of
    found = _read(_tier([("The edge routers run 17.6.5.", NAMED_BY_ID)]))
    assert found == {"the edge routers run 17 6 5": f"- {NAMED_BY_ID}"}
