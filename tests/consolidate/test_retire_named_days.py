"""A summary whose provenance comment names a note for a day that does not exist (a hand edit,
``daily/2026-02-30.md``) is still retired from: the day is not one, so it is left out of the
summary's newest day, and the run goes on instead of failing on it."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.supersede import SUPERSEDED, Said, retire
from sidecar.consolidate.text import normalised

OLD = "The nightly export lands in the bucket called ledger-exports-eu."
NEWER = Said("- The nightly export lands in ledger-exports-2 now.", "daily/2026-05-20.md", (date(2026, 5, 20), 1), None)


def _summary(*days: str) -> str:
    named = ", ".join(f"daily/{day}.md" for day in days)
    return f"# 2026-W12\n\n## Notes\n<!-- from {named} -->\n### Export\n- {OLD}\n### Other\n- The kiln is fired on Fridays.\n"


def test_a_summary_naming_a_day_that_is_no_day_is_retired_from_as_any_other() -> None:
    text = retire(_summary("2026-03-16", "2026-02-30"), {normalised(OLD): NEWER})
    current, retired = text.split(f"## {SUPERSEDED}", 1)
    assert OLD in retired and OLD not in current
    assert "The kiln is fired on Fridays." in current


def test_a_summary_naming_only_days_that_are_no_days_is_retired_from_too() -> None:
    text = retire(_summary("2026-02-30", "2026-13-01"), {normalised(OLD): NEWER})
    assert OLD in text.split(f"## {SUPERSEDED}", 1)[1]
