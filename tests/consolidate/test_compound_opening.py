"""A line that opens with a hyphenated word whose first part alone reads as a past tense
("Forced-update floor: ...", "embed-api sits ...") names something: it reports no work done, and a
standing fact so opened recurs as any fact does."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from sidecar.consolidate.periods import Line
from sidecar.consolidate.promote import recurring
from sidecar.consolidate.text import reports_work

START = date(2026, 3, 2)  # a Monday


def _day(n: int) -> str:
    return f"daily/{START + timedelta(days=n)}.md"


def test_a_fact_opening_with_a_hyphenated_word_recurs() -> None:
    fact = "Locked-down kiosks: anything below build 7.2 gets the update screen."
    lines = [Line(f"- {fact}", _day(n * 8), "Log") for n in range(3)]
    lines += [Line(f"- Kiosk {n} rebooted after the power cut.", _day(n * 8 + 1), "Log") for n in range(3)]
    assert [c.text for c in recurring(lines)] == [f"- {fact}"]


@pytest.mark.parametrize(
    ("line", "reports"),
    [
        ("Signed-off builds go to the beta channel.", False),
        ("- Closed-loop tests run at 02:00.", False),
        ("Embed-api sits behind the internal balancer.", False),
        ("Jae-won's badge number is 4471.", False),
        ("Deployed the kiosk build 7.2.", True),
        ("The kiosk build 7.2 is deployed.", False),
    ],
)
def test_a_line_reports_work_by_its_opening_verb(line: str, reports: bool) -> None:
    assert reports_work(line) is reports
