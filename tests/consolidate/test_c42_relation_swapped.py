"""A changed value read by its subject and slot when the words that tie the value to the subject
change with it (``changes.changed_by_value``, ``_same_slot``): the older line's words the newer
lacks are all written in lower case beside the value phrase it lost; a word of the subject or a
code swapped for another is still another subject."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said
from tests.support.said import changed_after, said_on

START = date(2026, 4, 6)

#: A bookbinding workshop's other standing facts, each said in three weeks.
FACTS = [
    "Board offcuts are collected by Renwick Salvage.",
    "The guillotine blade is sharpened by Harrowgate Edge.",
    "Members sign in on the Tidybook tablet.",
]


def _said(*lines: tuple[int, str]) -> list[Said]:
    return said_on(START, FACTS, *lines)


def _changed(old: str, new: str) -> dict[str, Said]:
    return changed_after(START, FACTS, old, new)


def test_the_verb_before_the_value_said_otherwise_is_a_change() -> None:
    """ "Spine labels are printed by Quillmark" / "Spine labels come from Presswell": "spine
    labels" names the subject in both, the verb tying the value to it is another, the name in its
    slot is another."""
    old = "Spine labels are printed by Quillmark."
    new = "Spine labels come from Presswell."
    assert _changed(old, new)[normalised(old)].text == new


def test_a_code_beside_the_value_is_no_word_tying_it() -> None:
    """ "Courier account for east-wing: RQZTVLM" / "Courier account for west-wing: BNXWQPD": the
    code the newer line lacks stands beside the lost identifier, but it is no word written in lower
    case: one row of a table of accounts, then another."""
    old = "Courier account for east-wing: RQZTVLM."
    new = "Courier account for west-wing: BNXWQPD."
    assert normalised(old) not in _changed(old, new)


def test_a_subject_word_swapped_is_another_subject() -> None:
    """ "Cloth covers are cut by Ottoline" / "Leather covers are cut by Bartholomew": the word the
    newer line lacks names what is cut, far from the value: another fact of the same mould."""
    old = "Cloth covers are cut by Ottoline."
    new = "Leather covers are cut by Bartholomew."
    assert normalised(old) not in _changed(old, new)


def test_a_value_phrase_swapped_whole_with_every_other_word_kept_is_another_row() -> None:
    """ "Gate pass for dock-3 is GP-2211" / "Gate pass for dock-9 is GP-8830": no word ties a new
    value to the subject, the value phrase holds the subject itself: another row of a table."""
    old = "Gate pass for dock-3 is GP-2211."
    new = "Gate pass for dock-9 is GP-8830."
    assert normalised(old) not in _changed(old, new)


def test_a_word_beside_the_value_swapped_while_another_value_stays_is_another_row() -> None:
    """ "Billing account for otter prod is 4471-2209, owner Halvorsen" / "... otter staging is
    8812-0034, owner Halvorsen": the owner kept, the word before the account number is no tie
    word but the row's subject ("prod", "staging")."""
    old = "Billing account for otter prod is 4471-2209, owner Halvorsen."
    new = "Billing account for otter staging is 8812-0034, owner Halvorsen."
    assert normalised(old) not in _changed(old, new)


def test_a_value_named_before_is_no_new_tie() -> None:
    """ "Spine labels come from Presswell" when Presswell was named before the older line was first
    said: a mould's next fill, not the value given anew."""
    old = "Spine labels are printed by Quillmark."
    new = "Spine labels come from Presswell."
    earlier = (0, "Presswell sent a sample book for the endpapers.")
    assert normalised(old) not in changed_by_value(_said(earlier, (1, old), (8, old), (15, old), (40, new)))


def test_a_line_opening_with_the_value_it_lost_is_about_that_value() -> None:
    """ "Wren on sewing, bench swept" / "batch 88: Crimson Quarto. Bench swept": the older line
    opens with who did what: another day's roster, not a tie word said another way."""
    old = "Wren on sewing, bench swept."
    new = "batch 88: Crimson Quarto. Bench swept."
    assert normalised(old) not in _changed(old, new)


def test_the_word_a_copula_follows_ends_the_subject() -> None:
    """ "The print room kiln is Rohdecraft" / "Print room dryer is Airvale": "kiln" stands beside
    the value, but "is" follows it: it is what the line speaks of, and "dryer" another thing."""
    old = "The print room kiln is Rohdecraft."
    new = "Print room dryer is Airvale."
    assert normalised(old) not in _changed(old, new)
