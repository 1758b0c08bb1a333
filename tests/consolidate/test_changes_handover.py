"""Changes a writer records without a change word and without the old value: a duty handed over in
a clause after a semicolon, a value whose subject is a hyphenated compound; a name given a number
of its own, which names another subject; and readings pasted every day, whose value changes on
most days (``reading_keys``)."""

from __future__ import annotations

import random
from datetime import date, timedelta

from sidecar.consolidate.changes import (
    WORDS_COSINE,
    _readings,
    changed_by_meaning,
    changed_by_value,
    meaning_texts,
    reading_keys,
    word_vectors,
)
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 1, 5)  # a Monday
OTHER = [  # the rest of a tier: standing lines of other subjects, said in two weeks
    "The office alarm code is kept by Priya.",
    "Payroll runs on the 25th through Sage.",
    "The van insurance renews with Aviva in March.",
    "Deploys to prod need a second reviewer on GitHub.",
    "The carrier account manager is Dorota at Northline.",
]
PERMITS = "Ines signs off the weekly permit-to-work log"
HANDED = "Ines has gone to the Caerwen site; Tomasz signs the permits from this week"
ELECTRICIAN = "The out-of-hours electrician is Brightspark Electrical"
CARD = "Electrician (out of hours): Watts Brothers 01632 960 447"


def _said(text: str, day: int, order: int) -> Said:
    when = START + timedelta(days=day)
    return Said(f"- {text}", f"daily/{when}.md", (when, order), claim(f"- {text}"))


def _read(lines: list[Said]) -> dict[str, str]:
    texts = meaning_texts(lines)
    found = changed_by_meaning(lines, word_vectors(texts), cosine=WORDS_COSINE, dropped=False)
    return {old: newer.text for old, newer in found.items()}


def _tier(changes: list[tuple[str, str]]) -> list[Said]:
    lines = [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]
    for n, (old, new) in enumerate(changes):
        lines += [_said(old, day, n) for day in (0, 8, 15)] + [_said(new, 60 + n, n)]
    return lines


def test_a_duty_handed_over_in_a_later_clause_is_read_by_that_clause() -> None:
    # the line names the old holder too (as the one who left): its clause after the semicolon,
    # opened by a name the tier never writes in lower case, gives the duty to another
    assert _read(_tier([(PERMITS, HANDED)])) == {"ines signs off the weekly permit to work log": f"- {HANDED}"}


def test_a_clause_naming_the_old_holder_alone_changes_nothing() -> None:
    left = "Ines has gone to the Caerwen site for a week; she signs the permits from there"
    assert _read(_tier([(PERMITS, left)])) == {}


def test_a_hyphenated_compound_is_a_subject_not_a_value_lost() -> None:
    # "out-of-hours" read as a value made two value phrases lost, as another subject in one mould
    assert _read(_tier([(ELECTRICIAN, CARD)])) == {
        "the out of hours electrician is brightspark electrical": f"- {CARD}"
    }


def _readings_tier() -> list[Said]:
    # pasted every morning, each day with other values
    rng = random.Random(7)
    lines = [_said(f"turbidity: 0.{rng.randint(10, 40)} NTU", day, 0) for day in range(40)]
    lines += [_said(f"reservoir level: {rng.randint(50, 80)}%", day, 1) for day in range(40)]
    return lines + [_said(text, day, 30 + n) for n, text in enumerate(OTHER) for day in (1, 10)]


def test_a_fact_said_every_day_with_one_value_is_no_reading() -> None:
    # (a line said word for word every day is the writer's boilerplate, routine by its own rule)
    lines = [_said("reservoir level alarm: 40%", day, 0) for day in range(40)]
    lines += [_said("turbidity: 0.3 NTU" if day % 2 else "turbidity: 0.4 NTU", day, 1) for day in range(40)]
    assert _readings(lines) == list(range(40, 80))


def test_a_value_said_on_few_days_is_no_reading() -> None:
    lines = [_said(f"turbidity: 0.{day} NTU", day, 0) for day in range(0, 40, 6)]  # 7 days of 40
    lines += [_said("Quiet day on the plant", day, 1) for day in range(40)]
    assert _readings(lines) == []


def test_a_name_with_a_number_added_is_another_subject() -> None:
    # "Llanfair 4" is another kiosk than "Llanfair": the line states its own hook, not a new one
    old, new = (
        "The Llanfair kiosk key is on hook 13 in the control room",
        "The Llanfair 4 kiosk key is on hook 37 in the control room",
    )
    lines = _tier([(old, new)])
    assert changed_by_value(lines, routine_left_out=True) == {}
    assert _read(lines) == {}


def test_a_name_kept_with_its_value_given_anew_is_still_a_change() -> None:
    old, new = (
        "The Llanfair kiosk key is on hook 13 in the control room",
        "The Llanfair kiosk key is on hook 37 in the control room now",
    )
    assert changed_by_value(_tier([(old, new)]), routine_left_out=True).keys() == {
        "the llanfair kiosk key is on hook 13 in the control room"
    }


def test_the_readings_keys_name_every_reading_line_and_no_fact() -> None:
    lines = _readings_tier()
    keys = reading_keys(lines)
    assert {"turbidity 0 " + t.text.split("0.")[1].split()[0] + " ntu" for t in lines[:40]} <= keys
    assert not keys & {"the office alarm code is kept by priya"}
