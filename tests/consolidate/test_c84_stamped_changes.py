"""A log that opens each line with the time it was written, and the tag of the hook that wrote
it ("- 09:38 [note] CI runs on the python:3.11-slim image"): the change search reads what the
line says, so a statement said at three times on three days is one standing line, and a later
line giving it another value changes it; its answer names the lines as written
(``supersede.as_read``). Two false reads that a line's time hid are guarded: the same statement in
another wrapper (``changes._rewrapped``) and one mould said of another subject
(``changes._reopened``)."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_signal, changed_by_value, reverted
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim, superseded
from tests.support.said import changed_after, said_on

START = date(2026, 5, 4)
FACTS = [
    "- 10:02 [note] The release train leaves on Thursdays.",
    "- 11:40 [note] Grafana lives at grafana.tide.internal.",
    "- 15:12 [note] The booking-api owner is Marta.",
]
PLAIN = [fact.split("] ", 1)[1] for fact in FACTS]


def _said(*lines: tuple[int, str]) -> list[Said]:
    return said_on(START, FACTS, *lines)


def _line(day: int, text: str, order: int = 50) -> Said:
    when = START + timedelta(days=day)
    return Said(text, f"daily/{when}.md", (when, order), claim(text))


def test_a_stamped_statement_given_another_value_is_changed_every_time_it_was_written() -> None:
    olds = ["- 09:38 [note] staging Postgres is pg-stg-1.", "- 14:02 [note] staging Postgres is pg-stg-1."]
    new = "- 16:20 [note] staging Postgres is pg-stg-4."
    said = _said((0, olds[0]), (8, olds[1]), (15, olds[0]), (40, new))
    found = {**changed_by_value(said), **superseded(said)}
    for old in olds:
        assert found[normalised(old)].text == new  # keyed and answered as written


def test_a_stamped_line_changed_by_a_signalled_line_of_another_hook() -> None:
    old = "- 09:38 [note] CI runs on the python:3.11-slim image."
    new = "- 16:46 [post-edit] CI runs on the python:3.13-slim image now, switched in ci.yml."
    said = _said((0, old), (8, old.replace("09:38", "13:10")), (15, old.replace("09:38", "17:56")), (40, new))
    found = changed_by_signal(said)
    assert found[normalised(old)].text == new


def test_unstamped_lines_read_as_before() -> None:
    old = "- staging Postgres is pg-stg-1."
    new = "- staging Postgres is pg-stg-4."
    said = _said((0, old), (8, old), (15, old), (40, new))
    assert {**changed_by_value(said), **superseded(said)}[normalised(old)].text == new


def test_a_change_taken_back_in_a_stamped_log() -> None:
    old = "- 09:10 [note] e2e tests run on Cypress."
    trial = "- 11:00 [note] e2e tests now run on Playwright."
    back = "- 17:30 [note] back on Cypress for the e2e tests, Playwright kept flaking."
    said = [_line(0, old), _line(8, old.replace("09:10", "10:20")), _line(15, old), _line(40, trial), _line(60, back)]
    stale = {normalised(old): said[3], normalised(old.replace("09:10", "10:20")): said[3]}
    found = reverted(said, stale)
    assert normalised(old) not in found
    assert found[normalised(trial)].text == back


def test_the_same_statement_under_another_wrapper_changes_nothing() -> None:
    old = "- heard on the bridge call - The fire panel code for hall B2 is 7731"
    new = "- per Jonas, The fire panel code for hall B2 is 7731"
    assert normalised(old) not in changed_after(START, PLAIN, old, new)
    stamped = "- 19:23 heard on the bridge call - The fire panel code for hall B2 is 7731"
    assert normalised(stamped) not in changed_after(START, FACTS, stamped, f"- 10:12 {new[2:]}")


def test_the_wrapped_statement_given_a_new_value_is_still_a_change() -> None:
    old = "- 19:23 heard on the bridge call - The fire panel code for hall B2 is 7731"
    new = "- 10:12 per Jonas, The fire panel code for hall B2 is now 7790"
    assert changed_after(START, FACTS, old, new)[normalised(old)].text == new


def test_one_mould_said_of_another_subject_changes_nothing() -> None:
    old = "- seatmap binds to port 6507 in docker-compose.yml."
    new = "- fare-engine binds to port 7487 in docker-compose.yml."
    assert normalised(old) not in changed_after(START, PLAIN, old, new)
    stamped = "- 16:55 [note] seatmap binds to port 6507 in docker-compose.yml."
    assert normalised(stamped) not in changed_after(START, FACTS, stamped, "- 09:12 [note] " + new[2:])


def test_the_subject_given_another_port_is_a_change() -> None:
    old = "- 16:55 [note] seatmap binds to port 6507 in docker-compose.yml."
    new = "- 09:12 [note] seatmap binds to port 7487 in docker-compose.yml now."
    assert changed_after(START, FACTS, old, new)[normalised(old)].text == new
