"""A clause that leans on its sentence's subject ("..., please don't hardcode them", "...; it never
goes in the repo", "..., wants an earlier breakfast") is no standing preference when the notes say
it beside facts of different subjects: cut from its line it means nothing. A rule that names what
it applies to is still one, wherever it is said, and so is a rule wrapped in a lead-in."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.promote import preferences

START = date(2026, 6, 1)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def _promoted(days: dict[int, list[str]]) -> list[str]:
    filler = ["Swapped the fan tray on rack R2.", "Quiet afternoon on the queue."]
    notes = {_day(n): "# Log\n\n" + "".join(f"- {ln}\n" for ln in [*filler, *lines]) for n, lines in days.items()}
    return [c.text for c in preferences(notes)]


def test_a_clause_standing_for_another_subject_is_no_preference() -> None:
    days = {
        0: ["The invoice worker reads its keys from Vault, please don't hardcode them."],
        6: ["The thumbnail service reads its tokens from Parameter Store, please don't hardcode them."],
        13: ["The export cron reads its passwords from Doppler, please don't hardcode them."],
    }
    assert _promoted(days) == []


def test_a_clause_after_a_semicolon_naming_its_subject_by_a_pronoun_is_no_preference() -> None:
    days = {
        1: ["The staging db password lives in 1Password; it never goes in the repo."],
        8: ["The release signing key sits on the Yubikey; it never goes in the repo."],
        15: ["The Sentry DSN for the kiosk app is in the CI vars; it never goes in the repo."],
    }
    assert _promoted(days) == []


def test_a_wish_whose_subject_is_another_clause_is_no_preference() -> None:
    days = {
        0: ["Lodging visit: Corrado with the Ashdowns, settled, wants an earlier breakfast."],
        3: ["Lodging visit: Ines with the Pellings, settled, wants an earlier breakfast."],
        9: ["Lodging visit: Tariq with the Ashdowns, settled, wants an earlier breakfast."],
        16: ["Lodging visit: Mirela with the Coombes, settled, wants an earlier breakfast."],
    }
    assert _promoted(days) == []


def test_a_rule_naming_what_it_applies_to_beside_other_facts_is_still_a_preference() -> None:
    days = {
        0: [
            "For anyone running reports: the ledger replica is pg-ledger-ro-4, please never point Metabase at the primary."
        ],
        7: [
            "For anyone running reports: the payouts replica is pg-payouts-ro-9, please never point Metabase at the primary."
        ],
        15: [
            "For anyone running reports: the vault replica is pg-vault-ro-2, please never point Metabase at the primary."
        ],
    }
    assert _promoted(days) == ["please never point Metabase at the primary"]


def test_a_rule_after_a_lead_in_closed_by_a_colon_is_still_a_preference() -> None:
    days = {
        2: [
            "Noor's standing ask, repeated after the Tern Labs call: please never restart the broker in a batch window."
        ],
        9: ["Noor's standing ask, repeated after the Halden call: please never restart the broker in a batch window."],
        16: [
            "Noor's standing ask, repeated after the Corvid Air call: please never restart the broker in a batch window."
        ],
    }
    assert _promoted(days) == ["please never restart the broker in a batch window"]


def test_a_leaning_clause_said_beside_one_fact_each_time_is_still_a_preference() -> None:
    days = {
        1: ["The prod deploy key sits in the team vault; never copy it to a laptop."],
        8: ["The prod deploy key sits in the team vault; never copy it to a laptop."],
        15: ["The prod deploy key sits in the team vault; never copy it to a laptop."],
    }
    assert _promoted(days) != []


def test_a_rule_whose_later_clause_holds_a_pronoun_is_still_a_preference() -> None:
    days = {
        0: ["The iOS train leaves on Thursdays, please never bump the build number by hand, the pipeline does it."],
        7: ["The Android train leaves on Tuesdays, please never bump the build number by hand, the pipeline does it."],
        15: ["The web train leaves on Mondays, please never bump the build number by hand, the pipeline does it."],
    }
    assert [text for text in _promoted(days) if "build number" in text] != []
