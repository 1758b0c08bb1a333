"""Two facts in one mould with their subjects said before the verb: "Extra matrix bands are kept
in drawer 12c in the store" and, later, "Extra local anaesthetic cartridges are kept in drawer
10c in the store" share "kept in drawer" and a value's slot, not a subject; the newer line
changes nothing (``changes._same_slot``). The subject said again with another value still does."""

from __future__ import annotations

from datetime import date

from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said
from tests.support.said import changed_after

START = date(2026, 5, 4)
FACTS = [
    "Sterilisation pouches are ordered from Henry Schein.",
    "The compressor is serviced by Medivac every March.",
    "The practice alarm code is held by Ottoline Vance.",
]
OLD = "Extra matrix bands are kept in drawer 12c in the store."


def _changed(old: str, new: str) -> dict[str, Said]:
    return changed_after(START, FACTS, old, new)


def test_another_thing_kept_in_another_drawer_is_no_change() -> None:
    new = "Extra local anaesthetic cartridges are kept in drawer 10c in the store."
    assert normalised(OLD) not in _changed(OLD, new)


def test_the_same_thing_kept_elsewhere_is_a_change() -> None:
    new = "Extra matrix bands are now kept in drawer 14a in the store."
    assert _changed(OLD, new)[normalised(OLD)].text == new
