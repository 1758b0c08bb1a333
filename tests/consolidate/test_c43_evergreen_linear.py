"""The evergreen file is weighed against its cap once per candidate by the bytes of that
candidate's own section, not by writing the whole file again for each: a run with many recurring
lines stays linear in them. The file it writes is the one the cap rule always wrote (the cases
under tests/data/c43/ hold files written before, with the cap binding at several points, a
section written the older way, a preferences section placed before the facts, a retired line and
a cap that fits the file to the byte)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.consolidate import promote
from sidecar.consolidate.promote import Candidate, update_evergreen

CASES = Path(__file__).resolve().parents[1] / "data" / "c43" / "evergreen_cases.json"
_DATA: dict[str, Any] = json.loads(CASES.read_text(encoding="utf-8"))


def _candidates(name: str) -> list[Candidate]:
    return [Candidate(c["text"], tuple(c["sources"])) for c in _DATA["candidates"][name]]


@pytest.mark.parametrize("case", _DATA["cases"], ids=lambda c: str(c["name"]))
def test_the_file_written_is_byte_for_byte_the_cap_rules(case: dict[str, Any]) -> None:
    update = update_evergreen(
        case["current"],
        _candidates(case["candidates"]),
        case["cap"],
        retire=set(case["retire"]),
        heading=case["heading"],
    )
    assert update.text == case["text"]
    assert [c.text for c in update.added] == case["added"]
    assert [c.text for c in update.present] == case["present"]
    assert [c.text for c in update.over_cap] == case["over_cap"]
    assert list(update.removed) == case["removed"]
    if update.text is not None:
        assert len(update.text.encode("utf-8")) <= max(case["cap"], len(case["current"].encode("utf-8")))


def test_the_cases_bind_the_cap_where_a_byte_decides() -> None:
    """The fixture holds a cap the file fits to the byte and one a byte short of it."""
    by_name = {c["name"]: c for c in _DATA["cases"]}
    fits, short = by_name["boundary_0"], by_name["boundary_-1"]
    assert len(fits["text"].encode("utf-8")) == fits["cap"] and not fits["over_cap"]
    assert len(short["over_cap"]) == 1


def test_the_whole_section_is_written_a_fixed_number_of_times_however_many_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written = 0
    render = promote._render_section

    def counted(heading: str, hand: list[str], entries: list[str]) -> str:
        nonlocal written
        written += 1
        return render(heading, hand, entries)

    monkeypatch.setattr(promote, "_render_section", counted)
    days = ("daily/2026-03-02.md", "daily/2026-03-11.md", "daily/2026-03-20.md")
    many = [
        Candidate(f"Locker {n} in the east corridor belongs to the night porter team {n % 7}.", days)
        for n in range(400)
    ]
    update = update_evergreen("# Agent\n", many, 16_384)
    assert update.added and update.over_cap  # the cap binds inside the run of candidates
    assert written <= 3
