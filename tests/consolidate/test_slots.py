"""A changed value read by its subject and slot, whatever words say it changed
(``changes.changed_by_value``): the subject named in another word order, under a label, or
opening both lines with the same capitalised word; and the moulds whose lines share those
readings but speak of other subjects, which stay current."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 3, 2)

#: A pottery studio's other standing facts, each said in three weeks.
FACTS = [
    "The glaze order goes to Potclays in Stoke.",
    "Members pay their fees through GoCardless.",
    "The clay store key hangs in the office.",
]


def _said(*lines: tuple[int, str]) -> list[Said]:
    every = [(d, f) for d in (1, 9, 17) for f in FACTS] + list(lines)
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), n), claim(text))
        for n, (d, text) in enumerate(every)
    ]


def _changed(old: str, new: str, *others: tuple[int, str]) -> dict[str, Said]:
    return changed_by_value(_said((0, old), (8, old), (15, old), *others, (40, new)))


def test_a_subject_named_in_the_other_word_order_is_one_noun_phrase() -> None:
    """ "The kiln in the studio is the old Cromartie Hobbytech" / "Upgraded the studio kiln ...
    Rohde Ecotop": "kiln ... studio" and "studio kiln" are one noun phrase. "old", the rarest word
    of the older line, stands beside its value and qualifies it: the subject is told by "kiln" and
    "studio", which other standing lines name too (no mould: a few of them)."""
    old = "The kiln in the studio is the old Cromartie Hobbytech."
    new = "Upgraded the studio kiln to a Rohde Ecotop, manual in the drawer."
    others = [
        (d, f)
        for d in (3, 11, 19)
        for f in ("The studio opens at 09:00 on Saturdays.", "Kiln shelves are coated with Bat Wash.")
    ]
    assert _changed(old, new, *others)[normalised(old)].text == new
    # a report naming the kiln with no value of its kind for the lost name changes nothing
    fired = "Studio kiln fired twice, cones bent at 1220."
    assert normalised(old) not in _changed(old, fired, *others)


def test_a_label_naming_the_subject_restates_every_value() -> None:
    """ "Grease traps: Drainwise, monthly, next visit on the 3rd" gives the subject the older line
    opens with as a label and a name in place of "Pinnacle Drains"; the older line's second value
    ("Thursdays") is restated too, so losing it is no second slot."""
    old = "Grease traps are emptied by Pinnacle Drains on alternate Thursdays."
    new = "Grease traps: Drainwise, monthly, next visit on the 3rd."
    assert _changed(old, new)[normalised(old)].text == new
    # a label that is not the older line's opening subject: another fact
    other = "Grease supplier: Drainwise, monthly, next visit on the 3rd."
    assert normalised(old) not in _changed(old, other)


def test_a_capitalised_word_both_lines_open_with_is_their_subject() -> None:
    """ "Quiz night runs Wednesday evenings from 7" / "Quiz night moved to Fridays, still from 7":
    "Quiz" is written nowhere in lower case, so alone it reads as a name; opening both lines it
    is the subject they share, not a value the newer line lost."""
    old = "Quiz night runs Wednesday evenings from 7."
    new = "Quiz night moved to Fridays, still from 7."
    assert _changed(old, new)[normalised(old)].text == new
    # a line opening with another capitalised word is another subject
    other = "Karaoke night moved to Fridays, still from 7."
    assert normalised(old) not in _changed(old, other)


def test_a_mould_of_codes_keeps_each_subject() -> None:
    """Standing lines in one mould ("Alarm code for the X is N"), each said in three weeks: a later
    one for another door names another subject. The word beside the value ("cellar") is the
    subject here: the line's other words are the mould's, said by many standing lines."""
    codes = [
        "Alarm code for the front door is 4471#.",
        "Alarm code for the kiln shed is 9902*.",
        "Alarm code for the clay store is 3318#.",
        "Alarm code for the car park gate is 6120*.",
    ]
    old = "Alarm code for the cellar is 5520#."
    new = "Alarm code for the bike shed is 7781*."
    others = [(d, c) for d in (2, 10, 18) for c in codes]
    assert normalised(old) not in _changed(old, new, *others)


def test_a_capitalised_opening_many_lines_share_is_a_moulds_frame() -> None:
    """ "Alarm" opens every line of the codes' mould and is written nowhere in lower case: the two
    words the lines open with are the mould's frame, said by many lines once each, not one
    subject, so a code for another door changes none."""
    once = [
        (22 + n, f"Alarm code for the {door} is {code}.")
        for n, (door, code) in enumerate([("back door", "5590*"), ("bike shed", "4052#"), ("cellar", "8413*")])
    ]
    old = "Alarm code for the shop front is 8694#."
    new = "Alarm code for the container is 7921#."
    assert normalised(old) not in _changed(old, new, *once)


def test_two_slots_refilled_at_once_are_a_change() -> None:
    """ "Kindling and firewood come from Hollins Logs every other Tuesday" / "Ashby Timber dropped
    off the kindling and firewood, next load Thursday": both of the older line's value phrases refilled, a name for a
    name and a day for a day. With one of them left empty (no day given) it is a report, no change."""
    old = "Kindling and firewood come from Hollins Logs every other Tuesday."
    new = "Ashby Timber dropped off the kindling and firewood, next load Thursday."
    others = [(d, f) for d in (3, 11, 19) for f in ("Firewood is stacked behind the kiln shed.",)]
    assert _changed(old, new, *others)[normalised(old)].text == new
    half = "Ashby Timber dropped off the kindling and firewood, the usual load."
    assert normalised(old) not in _changed(old, half, *others)
