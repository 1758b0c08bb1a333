"""A person holds a role over many things at once: "Chen is the owner of gateway", then "Chen is
the owner of catalog", is a second fact, not a changed value. A subject that is a name (a word
the notes never write in lower case) whose two values differ only after "of" or "for" is read
so; a common word as the subject, another relation, or a change word still reads a change."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim, superseded

START = date(2026, 3, 2)


def _said(lines: list[tuple[int, str]]) -> list[Said]:
    out = []
    for order, (day, text) in enumerate(lines):
        when = START + timedelta(days=day)
        out.append(Said(text, f"daily/{when.isoformat()}.md", (when, order), claim(text)))
    return out


def _stale(lines: list[tuple[int, str]]) -> dict[str, str]:
    return {key: newer.text for key, newer in superseded(_said(lines)).items()}


def test_one_person_owning_two_things_is_two_facts() -> None:
    lines = [
        (0, "Chen is the owner of gateway."),
        (8, "Chen is the owner of gateway."),
        (9, "Restarted the gateway after the deploy."),
        (30, "Chen is the owner of catalog."),
    ]
    assert _stale(lines) == {}


def test_a_role_for_two_things_is_two_facts() -> None:
    lines = [(0, "Amara is the lead for payments."), (20, "Amara is the lead for search.")]
    assert _stale(lines) == {}


def test_a_person_moved_elsewhere_is_still_a_change() -> None:
    lines = [(0, "Dana is based in Leeds."), (20, "Dana is based in York.")]
    assert _stale(lines) == {normalised("Dana is based in Leeds."): "Dana is based in York."}


def test_a_role_said_to_change_is_still_a_change() -> None:
    lines = [(0, "Chen is the owner of gateway."), (20, "Chen is now the owner of catalog.")]
    assert _stale(lines) == {normalised("Chen is the owner of gateway."): "Chen is now the owner of catalog."}


def test_a_subject_written_in_lower_case_is_no_name() -> None:
    lines = [
        (0, "Staging is a mirror of prod-db-1."),
        (5, "Reset staging after the load test."),
        (20, "Staging is a mirror of prod-db-2."),
    ]
    assert _stale(lines) == {normalised("Staging is a mirror of prod-db-1."): "Staging is a mirror of prod-db-2."}


def test_the_owner_named_as_the_value_still_changes() -> None:
    lines = [(0, "The owner of gateway is Chen."), (20, "The owner of gateway is Dana.")]
    assert _stale(lines) == {normalised("The owner of gateway is Chen."): "The owner of gateway is Dana."}
