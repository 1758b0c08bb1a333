"""A statement written under another lead-in or aside each day ("Checked with Tobias: The books
are kept by Lena Okafor.", "The books are kept by Lena Okafor, which I keep forgetting.") is one
standing line, said in every week any of its wordings was: a later line giving it another value
changes every wording (``supersede._wrapped``); two wordings of it change nothing. A name run
together of capitalised words after a label ("card terminals: SumUp") is a value the label's
line gives (``changes._labelled_names``). A line that opens with a name of its own and gives a
standing line's number in passing reports a visit, no new value (``changes._opens_with_another``)."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim
from tests.support.said import changed_after

START = date(2026, 5, 4)
FACTS = [
    "- The guillotine is serviced by Ideal in March.",
    "- Paper comes from Antalis on Tuesdays.",
    "- The fire assembly point is the Co-op car park.",
]
WORDINGS = [
    "- Checked with Tobias: The books are kept by Lena Okafor.",
    "- The books are kept by Lena Okafor, which I keep forgetting.",
    "- For my own reference, The books are kept by Lena Okafor.",
]
NEW = "- Brightside Accounts took over the books from Lena Okafor"


def _said(*lines: tuple[int, str]) -> list[Said]:
    every = [(d, f) for d in (1, 9, 17) for f in FACTS] + list(lines)
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), n), claim(text))
        for n, (d, text) in enumerate(every)
    ]


def test_a_statement_said_in_other_wrappers_each_week_is_changed_in_every_wording() -> None:
    found = changed_by_value(_said((0, WORDINGS[0]), (8, WORDINGS[1]), (15, WORDINGS[2]), (40, NEW)))
    for wording in WORDINGS:
        assert found[normalised(wording)].text == NEW


def test_two_wordings_of_one_statement_change_nothing() -> None:
    found = changed_by_value(_said((0, WORDINGS[0]), (8, WORDINGS[0]), (15, WORDINGS[2]), (40, WORDINGS[1])))
    assert not found.keys() & {normalised(w) for w in WORDINGS}


def test_a_label_given_a_name_run_together_is_changed() -> None:
    old = "- card terminals: Dojo, all five sites"
    new = "- card terminals: SumUp, all five sites"
    assert changed_after(START, FACTS, old, new)[normalised(old)].text == new


def test_a_visit_that_names_a_reading_in_passing_changes_no_standing_value() -> None:
    old = "- The sludge lagoon is emptied when it reaches 1.8 m"
    new = "- Vale Haulage in for a load of sludge, lagoon down to 0.9 m"
    assert normalised(old) not in changed_after(START, FACTS, old, new)


def test_a_line_opening_with_the_new_firm_still_changes_the_old_one() -> None:
    old = "- The backwash pumps are serviced by Kelvin Pumps"
    new = "- Duffy Mechanical on site for the backwash pumps, bearing noise on pump 2"
    assert changed_after(START, FACTS, old, new)[normalised(old)].text == new
