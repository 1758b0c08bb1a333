"""Changes written the way people write them, read by ``changes.changed_by_value`` from values
and subjects alone: a value only the older line names, named anew beside a value of its own (a
rename, a buyout, a supplier swapped); the subject said again in fewer words with another value;
the subject given as a label with a value after it. And the lines that look like them but change
nothing: a value other lines name too, a trial's value named on the way back, part of a longer
name, a weekday, the same mould said of another subject."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.changes import changed_by_value
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 1, 5)


def _dated(*lines: tuple[int, str]) -> list[Said]:
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), n), claim(text))
        for n, (d, text) in enumerate(lines)
    ]


def _standing(*lines: str) -> list[tuple[int, str]]:
    """Each line said on three days over three weeks: a standing fact."""
    return [(d, line) for d in (0, 8, 16) for line in lines]


def test_a_value_only_the_older_line_names_said_beside_a_new_one_changes_it() -> None:
    insurer = "Our insurance partner for new bikes is Pedalsure, leaflets on the counter."
    service = "The espresso machine is serviced by BeanTech."
    channel = "alerts land in #plat-alerts, that's the channel to keep an eye on."
    said = _dated(
        *_standing(insurer, service, channel),
        (40, "Pedalsure is Velocover since the buyout, new leaflets came in the post."),
        (41, "Coffee machine maintenance is with Crema Engineering now, BeanTech never turned up."),
        # no word of the subject: the old value opens the line, which says it changed
        (42, "#plat-alerts is #platform-pager now, IT renamed a batch of channels over the weekend."),
    )
    stale = changed_by_value(said)
    assert stale[normalised(insurer)].text.startswith("Pedalsure is Velocover")
    assert stale[normalised(service)].text.startswith("Coffee machine maintenance")
    assert stale[normalised(channel)].text.startswith("#plat-alerts is #platform-pager")
    assert len(stale) == 3


def test_a_value_named_beside_another_that_is_no_new_value_changes_nothing() -> None:
    impressions = "Impressions are taken in Impregum, the blue cartridges."
    service = "The espresso machine is serviced by BeanTech."
    machine = "The ice machine came from Bakery Exchange Leeds second-hand in 2019."
    feeding = "Gethin does the calf feeding on Mondays."
    said = _dated(
        *_standing(impressions, machine, feeding),
        *_standing(service),
        (5, "BeanTech also fixed the dishwasher door."),  # a firm with several jobs names no one subject
        (30, "Giving Aquasil a go for impressions this month, samples in surgery 1."),
        # the trial's value, said before, is the one left: Impregum is current again
        (44, "Gone back to Impregum for impressions, Aquasil kept tearing at the margins."),
        (45, "Coffee machine descaled, BeanTech and Crema Engineering both quoted for a grinder."),
        (46, "The milk-frother came from Kitchen Direct Leeds."),  # one word of a longer name
        (47, "Mondays from now on for the feed rep, he's changed his round."),  # a weekday is no name
    )
    stale = changed_by_value(said)
    for line in (impressions, service, machine, feeding):
        assert normalised(line) not in stale


def test_the_subject_said_again_in_fewer_words_with_another_value_changes_it() -> None:
    standup = "The data team standup happens every morning at 9:30, on the usual Meet link."
    backups = "ledger-db keeps 14 days of backups."
    said = _dated(
        *_standing(standup, backups),
        (40, "The data team standup is at 10:05."),
        (41, "audit-db keeps 30 days of backups."),  # the same mould, another subject
        (42, "The data team standup is at 11:00 today."),  # a word of its own: no restatement
    )
    stale = changed_by_value(said)
    assert stale[normalised(standup)].text == "The data team standup is at 10:05."
    assert normalised(backups) not in stale


def test_one_off_restatement_with_words_of_its_own_is_no_narrowing() -> None:
    standup = "The data team standup happens every morning at 9:30, on the usual Meet link."
    said = _dated(*_standing(standup), (40, "The data team standup is at 11:00 today."))
    assert normalised(standup) not in changed_by_value(said)


def test_the_subject_as_a_label_with_a_value_of_its_own_changes_it() -> None:
    contact = "Nina Castell is our finance contact for the monthly revenue extract."
    said = _dated(*_standing(contact), (40, "Finance contact for the monthly revenue extract: Tobias Wren."))
    assert changed_by_value(said)[normalised(contact)].text.startswith("Finance contact")


def test_another_version_of_a_name_the_older_line_alone_names_changes_it() -> None:
    registers = "Registers are kept in ClassBook 2."
    parlour = "Parlour software is DairyPlan 5."
    quotes = "Quotes are typed up in MoveMan 3."
    stand = "Wheels get trued on the Park TS-2.2 in the corner."
    said = _dated(
        *_standing(registers, parlour, quotes, stand),
        (39, "Truing stand upgraded to the TS-4.2 at last, the wobble's gone."),
        (40, "ClassBook 3 logs everyone out at five, tell the teachers to save their registers."),
        (41, "Upgraded the parlour computer to DairyPlan 7 on Sunday, took the dealer all afternoon."),
        (42, "MoveMan 4 installed on the office PC; quotes print the new header."),
    )
    stale = changed_by_value(said)
    assert stale[normalised(registers)].text.startswith("ClassBook 3")
    assert stale[normalised(parlour)].text.startswith("Upgraded the parlour computer")
    assert stale[normalised(quotes)].text.startswith("MoveMan 4")
    assert stale[normalised(stand)].text.startswith("Truing stand upgraded")


def test_a_version_of_a_name_other_lines_name_too_changes_nothing() -> None:
    registers = "Registers are kept in ClassBook 2."
    said = _dated(
        *_standing(registers),
        (4, "ClassBook 2 and Moodle both need the new term's groups."),  # ClassBook named by another line
        (40, "ClassBook 3 trial for the registers next term, ask Paula."),
    )
    assert normalised(registers) not in changed_by_value(said)


def test_a_bold_label_reads_as_a_label() -> None:
    contact = "Nina Castell is our finance contact for the monthly revenue extract."
    supplier = "- **Dialysis supplies:** Baxter, delivered Tuesdays."
    said = _dated(
        *_standing(contact, supplier),
        (40, "**Finance contact for the monthly revenue extract:** Tobias Wren"),
        (41, "- **Dialysis supplies:** Fresenius, delivered Tuesdays."),
    )
    stale = changed_by_value(said)
    assert stale[normalised(contact)].text.startswith("**Finance contact")
    assert stale[normalised(supplier)].text.startswith("- **Dialysis supplies:** Fresenius")


def test_a_report_of_work_done_that_names_the_old_value_beside_a_new_one_changes_it() -> None:
    key = "Mrs Patel at number 12 has our spare key."
    reminders = "Patient text reminders go out from Exact, two days before."
    service = "The espresso machine is serviced by BeanTech."
    said = _dated(
        *_standing(key, reminders, service),
        (40, "Collected the spare key from Mrs Patel and left it with the Hendersons across the road."),
        (41, "Ditched Exact's reminders for Dentally, Rhys set the message wording."),
        (42, "Rang BeanTech, Crema Engineering sent a quote too."),  # no word of the subject: no change
    )
    stale = changed_by_value(said)
    assert stale[normalised(key)].text.startswith("Collected the spare key")
    assert stale[normalised(reminders)].text.startswith("Ditched Exact's reminders")
    assert normalised(service) not in stale


def test_two_serial_numbers_in_one_mould_are_two_facts() -> None:
    outage = "The checkout outage was INC-3849 and the review doc has the full timeline."
    scare = "The ledger failover scare was INC-3412 and the review doc has the full timeline."
    said = _dated(*_standing(outage), *[(d, scare) for d in (30, 38)])
    assert normalised(outage) not in changed_by_value(said)
