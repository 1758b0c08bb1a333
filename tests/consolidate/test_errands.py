"""Errands an agent lists as instructions, one mould filled with the day's object, are no rules of
conduct: they never reach ``## Preferences``, while a bare instruction said again with its own
object still does."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.conduct import chores
from sidecar.consolidate.promote import preferences

_BEDS = ("Bed 4", "Bed 7", "Bed 11", "the polytunnel", "the herb spiral")


def _notes() -> dict[str, str]:
    """Twelve days over eleven weeks of a community garden's assistant: each day two errands for
    one of five places, and on six of them the same two standing instructions, bare."""
    texts = {}
    start = date(2026, 3, 2)
    for n in range(12):
        day = start + timedelta(days=6 * n + n % 3)
        place, other = _BEDS[n % len(_BEDS)], _BEDS[(n + 2) % len(_BEDS)]
        lines = [
            f"Water the seed trays in {place}",
            f"Weed the paths around {other}",
            "Sorted the volunteer rota for the weekend",
        ]
        if n % 2 == 0:
            lines += ["Store the seed packets in the tin box", "Lock the tool shed after every session"]
        texts[f"daily/{day.isoformat()}.md"] = f"# {day.isoformat()}\n\n## Log\n" + "".join(f"- {x}\n" for x in lines)
    return texts


def test_errands_filling_one_mould_are_not_promoted_as_rules() -> None:
    promoted = [c.text for c in preferences(_notes())]
    assert not [t for t in promoted if t.startswith(("Water the seed trays", "Weed the paths"))], promoted


def test_bare_instructions_said_again_in_their_own_words_stay_rules() -> None:
    promoted = [c.text for c in preferences(_notes())]
    assert "Store the seed packets in the tin box" in promoted, promoted
    assert "Lock the tool shed after every session" in promoted, promoted


def test_a_rule_reworded_keeps_its_object_and_fills_no_mould() -> None:
    said = [
        "Ring the client before any reprint",
        "Phone the client first before a reprint",
        "Ring the client before reprinting anything",
        "Ring the client if the proof changed",
        "Order a new fob for Flat 9",
        "Order a new fob for No 12",
        "Order a new fob for the office",
    ]
    assert chores(said) == {"Order a new fob for Flat 9", "Order a new fob for No 12", "Order a new fob for the office"}


def test_a_marked_rule_filled_with_places_is_no_errand() -> None:
    # "no <thing> in <place>" says what is ruled out wherever it is said: a rule by its opening,
    # as "please" or "don't" make one, however many places it names
    said = [
        "No barrows in Bed 4 after rain",
        "No barrows in Bed 7 after rain",
        "No barrows in the polytunnel after rain",
    ]
    assert chores(said) == set()


def test_a_request_to_be_told_filled_with_places_is_an_errand() -> None:
    said = [
        "Let me know when Bed 4 is dug",
        "Let me know when Bed 7 is dug",
        "Let me know when the polytunnel is aired",
    ]
    assert chores(said) == set(said)
