"""A signalled line that leaves out every value of the older line and names none of its own says
something else of the subject, no new value of it (``changes.changed_by_signal``): "The billing
service now owns the invoice retries" does not change "The billing service is owned by Okonkwo",
where "The billing service is now owned by Haverford" does."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.changes import changed_by_signal
from tests.support.said import said_on

START = date(2026, 4, 6)
OLD = "The billing service is owned by Okonkwo."
FACTS = [
    "The ledger export runs at 02:00 UTC.",
    "Card disputes are answered within 5 days.",
    "The status page is hosted on statuspage.io.",
]


def _changed(new: str) -> dict[str, str]:
    found = changed_by_signal(said_on(START, FACTS, (0, OLD), (8, OLD), (15, OLD), (40, new)))
    return {old: newer.text for old, newer in found.items()}


def test_a_line_giving_the_subject_another_thing_changes_no_value() -> None:
    assert _changed("The billing service now owns the invoice retries.") == {}


def test_a_new_owner_is_still_a_change() -> None:
    new = "The billing service is now owned by Haverford."
    assert _changed(new) == {"the billing service is owned by okonkwo": new}


def test_a_change_naming_the_old_value_as_it_leaves_is_still_a_change() -> None:
    new = "The billing service moved from Okonkwo to the payments team."
    assert _changed(new) == {"the billing service is owned by okonkwo": new}
