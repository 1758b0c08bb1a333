"""A line reporting work done after a label ("Expense receipts: scanned the payroll slips ... 9 items left
on the list") is a report, as a line opening with the past tense is: its count fills no standing
line's value slot without a change word (``changes.changed_by_value``); a labelled statement still
does."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.changes import changed_by_value
from tests.support.said import said_on

START = date(2026, 5, 4)
OLD = "The expense receipt scanner has a hard timeout of 45 minutes."
FACTS = [
    "The ledger export runs at 02:00 UTC.",
    "Card disputes are answered within 5 days.",
    "Refund webhooks retry 5 times.",
]


def _changed(new: str) -> dict[str, str]:
    found = changed_by_value(said_on(START, FACTS, (0, OLD), (8, OLD), (15, OLD), (40, new)))
    return {old: newer.text for old, newer in found.items()}


def test_a_labelled_report_of_work_changes_no_value() -> None:
    report = (
        "Expense receipts: scanned the payroll slips into the shared folder and ticked them off on FIN-2231. "
        "9 items left on the list."
    )
    assert _changed(report) == {}


def test_a_labelled_statement_of_the_value_is_still_a_change() -> None:
    new = "Expense receipt scanner: hard timeout of 90 minutes."
    assert _changed(new) == {"the expense receipt scanner has a hard timeout of 45 minutes": new}
