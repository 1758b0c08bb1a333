"""A clause that is a rule only with its line's subject ("..., please don't hardcode them", "...;
it never goes in the repo") is no standing preference when the notes say it of different subjects:
cut from its line it means nothing. A rule wrapped in a lead-in or an aside that names no subject,
or said beside one fact every time, is still promoted."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.cores import rule_cores
from sidecar.consolidate.promote import preferences

START = date(2026, 6, 1)  # a Monday


def _day(n: int) -> str:
    return f"daily/{(START + timedelta(days=n)).isoformat()}.md"


def _notes(days: dict[int, list[str]]) -> dict[str, str]:
    filler = ["Swapped the fan tray on rack R2.", "Quiet afternoon on the queue."]
    return {_day(n): "# Log\n\n" + "".join(f"- {ln}\n" for ln in [*filler, *lines]) for n, lines in days.items()}


def _promoted(days: dict[int, list[str]]) -> list[str]:
    return [c.text for c in preferences(_notes(days))]


def test_a_tail_clause_said_of_three_subjects_is_no_preference() -> None:
    days = {
        0: ["The invoice worker reads its keys from Vault, please don't hardcode them."],
        6: ["The thumbnail service reads its tokens from Parameter Store, please don't hardcode them."],
        13: ["The export cron reads its passwords from Doppler, please don't hardcode them."],
    }
    assert _promoted(days) == []


def test_a_clause_after_a_semicolon_said_of_three_subjects_is_no_preference() -> None:
    days = {
        1: ["The staging db password lives in 1Password; it never goes in the repo."],
        8: ["The release signing key sits on the Yubikey; it never goes in the repo."],
        15: ["The Sentry DSN for the kiosk app is in the CI vars; it never goes in the repo."],
    }
    assert _promoted(days) == []


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


def test_a_wish_closing_a_check_of_other_people_each_day_is_no_preference() -> None:
    days = {
        0: ["Lodging visit: Corrado with the Ashdowns, settled, wants an earlier breakfast."],
        3: ["Lodging visit: Ines with the Pellings, settled, wants an earlier breakfast."],
        9: ["Lodging visit: Tariq with the Ashdowns, settled, wants an earlier breakfast."],
        16: ["Lodging visit: Mirela with the Coombes, settled, wants an earlier breakfast."],
    }
    assert _promoted(days) == []


def test_the_lines_of_a_check_whose_only_wish_is_such_a_clause_are_no_preferences() -> None:
    guests = ["Corrado", "Ines", "Tariq", "Mirela"]
    hosts = ["Ashdowns", "Pellings", "Coombes"]
    days = {
        n: [f"Lodging visit: {guests[n % 4]} with the {hosts[n % 3]}, settled, wants an earlier breakfast."]
        for n in range(0, 40, 2)
    }
    assert _promoted(days) == []


def test_a_rule_wrapped_in_lead_ins_that_name_no_subject_is_still_a_preference() -> None:
    days = {
        0: ["Ilse again: please never restart the broker during a batch window."],
        6: ["Reminder from Ilse - please never restart the broker during a batch window."],
        13: ["please never restart the broker during a batch window (she means it)"],
    }
    assert _promoted(days) == ["please never restart the broker during a batch window"]


def test_a_rule_said_beside_the_same_fact_each_time_is_still_a_preference() -> None:
    days = {
        1: ["The broker admin password is in Bitwarden; it never goes in a ticket."],
        8: ["The broker admin password is in Bitwarden; it never goes in a ticket."],
        15: ["The broker admin password is in Bitwarden; it never goes in a ticket."],
    }
    assert len(_promoted(days)) == 1


def test_a_clause_said_alone_counts_while_its_lines_beside_other_facts_do_not() -> None:
    said = [
        ("The invoice worker reads its keys from Vault, please don't hardcode them.", _day(0), False),
        ("The export cron reads its passwords from Doppler, please don't hardcode them.", _day(6), False),
        ("Ilse again: please never restart the broker during a batch window.", _day(7), True),
        ("Reminder from Ilse - please never restart the broker during a batch window.", _day(13), True),
    ]
    out = rule_cores(said)
    assert [line for line, _, _ in out[:2]] == [said[0][0], said[1][0]]  # left whole, as facts
    assert [as_rule for _, _, as_rule in out[:2]] == [False, False]
    assert [line for line, _, _ in out[2:]] == ["please never restart the broker during a batch window"] * 2


def test_a_rule_said_after_other_sentences_each_day_is_still_a_preference() -> None:
    days = {
        0: ["Edge certs on lb-2 expire on 14 March. Please never restart the broker during a batch window."],
        6: ["Queue depth back under 300 by noon. Please never restart the broker during a batch window."],
        13: ["Kafka topic retention is 7 days on prod. Please never restart the broker during a batch window."],
    }
    assert _promoted(days) == ["Please never restart the broker during a batch window"]
