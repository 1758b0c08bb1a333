"""Changed values found with no change word: a standing line restated later with another value
(``changes.changed_by_value``), and the week's routine lines told from its facts (``routine.py``),
so log lines that differ in a number every day are never changes and never crowd a summary's
facts out of its budget."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from sidecar.consolidate.changes import _content, _named_left, _values, changed_by_signal, changed_by_value, reverted
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import normalised
from sidecar.consolidate.routine import ROUTINE_LINES, routine
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import Said, claim

START = date(2026, 1, 5)


def _dated(*lines: tuple[int, str]) -> list[Said]:
    return [
        Said(text, f"daily/{(START + timedelta(days=d)).isoformat()}.md", (START + timedelta(days=d), n), claim(text))
        for n, (d, text) in enumerate(lines)
    ]


def _log(day: int, n: int) -> list[tuple[int, str]]:
    """A day's routine: moulds written over and over with other numbers and names."""
    names = ["billing", "ledger", "search", "auth", "mailer"]
    return [(day, f"Merge request {1000 + 37 * k + day} for {names[k % 5]} needs another look.") for k in range(n)] + [
        (day, f"Disk use on nas-{k % 3} is {40 + (k * 7 + day) % 50} percent.") for k in range(n)
    ]


def test_a_standing_line_restated_with_another_value_is_changed_without_a_change_word() -> None:
    old_tool = "For build pipelines the team relies on CircleCI."
    old_release = "The MongoDB servers are at release 5.0."
    old_redis = "We are on Redis 6.2."
    old_host = "recommender runs in ionos-de1."
    said = _dated(
        *[(d, line) for d in (0, 9) for line in (old_tool, old_release, old_redis, old_host)],
        (40, "Dropped CircleCI; build pipelines go through Woodpecker from today."),
        (41, "Finished the MongoDB rollout, the servers are at release 7.0."),
        (42, "We are on Redis 7.2."),
        (43, "recommender runs in equinix-ld5 since the cutover (it left ionos-de1)."),
    )
    stale = changed_by_value(said)
    assert stale[normalised(old_tool)].text.startswith("Dropped CircleCI")
    assert stale[normalised(old_release)].text.startswith("Finished the MongoDB rollout")
    assert stale[normalised(old_redis)].text == "We are on Redis 7.2."
    assert stale[normalised(old_host)].text.startswith("recommender runs in equinix-ld5")
    assert len(stale) == 4  # the newer lines are current


def test_other_subjects_and_lines_said_once_are_no_changes() -> None:
    said = _dated(
        # another subject in the same mould, the value shared: the name a line opens with is its subject
        (0, "ledger-db keeps 14 days of backups."),
        (8, "ledger-db keeps 14 days of backups."),
        (40, "audit-db keeps 14 days of backups."),
        # another subject in a word that is no value
        (1, "The runbook for pricing lives at runbooks/pricing-92.md."),
        (9, "The runbook for pricing lives at runbooks/pricing-92.md."),
        (41, "The runbook for mailer lives at runbooks/mailer-34.md."),
        # both values of a two-value line gone: another fact
        (2, "Reminder: the payments-8 rota hands over on Wednesday at 7:00."),
        (10, "Reminder: the payments-8 rota hands over on Wednesday at 7:00."),
        (42, "Reminder: the growth-2 rota hands over on Thursday at 9:00."),
        # two values lost: another subject, however alike the rest ("CI" is kept)
        (5, "The CI config for billing-api is ci/billing_api_12.yml."),
        (12, "The CI config for billing-api is ci/billing_api_12.yml."),
        (45, "The CI config for search-api is ci/search_api_40.yml."),
        # said once only: no standing line yet
        (3, "The staging proxy listens on port 8443."),
        (43, "The staging proxy listens on port 9443."),
        # said on the days of one week: that week's status
        (14, "Standup with the platform team, nothing blocking in sprint 10."),
        (15, "Standup with the platform team, nothing blocking in sprint 10."),
        (16, "Standup with the platform team, nothing blocking in sprint 10."),
        (21, "Standup with the platform team, nothing blocking in sprint 11."),
        # said again after the newer line: both current
        (4, "The sonde sits at buoy B7."),
        (11, "The sonde sits at buoy B7."),
        (44, "The sonde sits at buoy C2."),
        (50, "The sonde sits at buoy B7."),
    )
    assert changed_by_value(said) == {}
    # the same lines said in two weeks are standing: the restated one changes
    moved = [*said, *_dated((12, "Standup with the platform team, nothing blocking in sprint 10."))]
    assert set(changed_by_value(moved)) == {
        normalised("Standup with the platform team, nothing blocking in sprint 10.")
    }


def test_routine_lines_are_told_from_a_weeks_facts() -> None:
    week = [(f"daily/{day}.md", text) for day in range(5) for _, text in _log(day, 6)]
    facts = [
        ("daily/2.md", "The billing service listens on port 8080."),
        ("daily/3.md", "Disk quotas for billing: Priya."),
    ]
    flags = routine([*week, *facts])
    assert all(flags[: len(week)]) and not any(flags[len(week) :])
    assert not any(routine([("daily/0.md", text) for _, text in _log(0, ROUTINE_LINES // 2)]))  # a short week
    assert not any(routine([("daily/0.md", text) for _, text in _log(0, 30)]))  # a table of one note: no log


def test_routine_lines_said_twice_alike_are_no_changes() -> None:
    said = _dated(*[line for day in (0, 1, 2, 3, 40, 41, 42, 43) for line in _log(day, 6)])
    again = [s for s in said if s.when[0] == START]  # the same lines two weeks later
    said += [Said(s.text, "daily/2026-01-19.md", (START + timedelta(days=14), s.when[1]), s.claim) for s in again]
    assert changed_by_value(said) == {}


async def test_routine_lines_do_not_crowd_a_weeks_facts_out_of_its_summary(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    monday = START
    facts = [
        f"Point of contact for the {name} dashboard: {who}."
        for name, who in zip(
            ["ingest", "billing", "search", "quota", "export", "mail"],
            ["Priya", "Olu", "Chen", "Aiko", "Lena", "Kofi"],
            strict=True,
        )
    ]
    for day in range(5):
        lines = [text for _, text in _log(day, 30)] + [facts[day]] + ([facts[5]] if day == 4 else [])
        (root / "daily" / f"{monday + timedelta(days=day)}.md").write_text(
            "## Log\n" + "".join(f"- {line}\n" for line in lines)
        )
    await consolidate(
        root,
        since=None,
        until=monday + timedelta(days=30),
        summariser=ExtractiveSummariser(),
        dry_run=False,
        section_budget=600,
    )
    summary = (root / "daily" / "summaries" / "2026-W02.md").read_text()
    facts_part = summary.partition("## Log (log)")[0]
    assert all(fact in facts_part for fact in facts), summary
    assert "needs another look" not in facts_part and "Disk use on" not in facts_part
    assert "## Log (log)" in summary  # the routine is still summarised, within the log's budget


async def test_a_weeks_superseded_lines_are_held_to_a_sections_budget(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    old = [f"The alarm threshold of probe P{n} is {10 + n} degrees." for n in range(30)]
    new = [f"The alarm threshold of probe P{n} is {50 + n} degrees." for n in range(30)]
    for day, lines in ((0, old), (8, old), (35, new)):
        (root / "daily" / f"{START + timedelta(days=day)}.md").write_text(
            "## Probes\n" + "".join(f"- {line}\n" for line in lines)
        )
    report = await consolidate(
        root,
        since=None,
        until=START + timedelta(days=60),
        summariser=ExtractiveSummariser(),
        dry_run=False,
        section_budget=400,
    )
    summary = (root / "daily" / "summaries" / "2026-W02.md").read_text()
    head, _, superseded = summary.partition("## Superseded\n")
    assert superseded and len(superseded) <= 400
    assert not any(line in head for line in old)  # no old value is shown as current
    kept = [line for line in old if line in superseded]
    left_out = {d.text.lstrip("- ") for d in report.dropped if d.reason == "budget" and d.period == "2026-W02"}
    assert kept and set(old) == set(kept) | left_out  # each old line is kept or reported
    changed = (root / "daily" / "summaries" / "2026-W07.md").read_text()
    assert all(line in changed.partition("## Changed\n")[2] for line in new)  # the new values, never cut


def test_two_statements_of_one_change_do_not_change_each_other() -> None:
    first = "Jenkins is gone: Buildkite runs CI builds."
    said = _dated(
        (0, "We run CI builds on Jenkins."),
        (8, "We run CI builds on Jenkins."),
        (30, first),
        (40, "CI builds: Buildkite runs them, it took over from Jenkins last week."),
    )
    assert normalised(first) not in changed_by_signal(said)
    assert normalised(first) not in changed_by_value(said)


async def test_routine_lines_are_never_promoted(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    fact = "The tape library is cleaned on the first Monday of the month."
    for day in range(0, 21):
        if (START + timedelta(days=day)).weekday() > 4:
            continue
        lines = [f"Disk use on nas-{k % 2} is {40 + (day + k) % 3} percent." for k in range(4)]
        lines += [f"Lab meeting: {['Hana', 'Ewa'][(day + k) % 2]} presented the {k % 2} results." for k in range(4)]
        lines += [fact] if day % 7 == 1 else []
        (root / "daily" / f"{START + timedelta(days=day)}.md").write_text(
            "## Log\n" + "".join(f"- {line}\n" for line in lines)
        )
    report = await consolidate(
        root, since=None, until=START + timedelta(days=40), summariser=ExtractiveSummariser(), dry_run=False
    )
    agent = (root / "AGENT.md").read_text()
    assert fact in agent  # said on three days of three weeks: promoted
    assert "Disk use" not in agent and "Lab meeting" not in agent, agent  # said alike on many days, but a log
    assert [p.line for p in report.promoted] == [f"- {fact}"] or [p.line.lstrip("- ") for p in report.promoted] == [
        fact
    ]


def test_a_struck_out_statement_and_a_taken_over_duty_are_changes() -> None:
    old_site = "The glacier-cam footage is stored on tape-3."
    old_duty = "Ruiz runs the safety briefing."
    said = _dated(
        (0, old_site),
        (8, old_site),
        (1, old_duty),
        (9, old_duty),
        (40, "~~glacier-cam footage on tape-3~~ disk-array-7"),
        (41, "Mbeki has taken over the safety briefing from Ruiz."),
        # struck words that are not the older line's: no change of it
        (42, "~~glacier-cam drone on tape-3~~ disk-array-9"),
    )
    value, signal = changed_by_value(said), changed_by_signal(said)
    assert value[normalised(old_site)].text.startswith("~~glacier-cam footage")
    assert signal[normalised(old_duty)].text.startswith("Mbeki has taken over")
    assert set(value) == {normalised(old_site)} and set(signal) == {normalised(old_duty)}


def test_a_subject_named_by_its_noun_phrase_with_its_value_slot_refilled_is_changed() -> None:
    """The attribute words change too, or the older line opens with its value: the subject is
    matched by its noun phrase and the value by its slot (a time for a time, a name for a name)."""
    old_time = "The photo backup is planned for 01:30 each night."
    old_name = "Lindqvist runs the tool crib."
    said = _dated(
        *[(d, line) for d in (0, 9) for line in (old_time, old_name)],
        # the same moulds of other subjects, said alongside: they stay current
        *[(d, line) for d in (1, 10) for line in ("The video backup is planned for 02:30 each night.",)],
        *[(d, line) for d in (2, 11) for line in ("Moreno runs the paint shop.", "Moreno keeps the lathe logbook.")],
        (40, "Photo backup window: 23:15 from Monday."),
        (41, "tool crib keys go to Abebe."),
    )
    stale = changed_by_value(said)
    assert stale[normalised(old_time)].text.startswith("Photo backup window")
    assert stale[normalised(old_name)].text == "tool crib keys go to Abebe."
    assert len(stale) == 2


def test_a_noun_phrase_kept_is_no_change_without_the_same_kind_of_value_or_the_subjects_rarest_word() -> None:
    said = _dated(
        # the same subject, another attribute with a value of another kind (a count for a time)
        (0, "The photo backup is planned for 01:30 each night."),
        (9, "The photo backup is planned for 01:30 each night."),
        (40, "Photo backup retention: 30 days."),
        # the shared phrase is the mould's, not the subject's ("each night"; "photo" is the subject)
        (1, "The video backup is planned for 02:30 each night."),
        (10, "The video backup is planned for 02:30 each night."),
        (41, "The audio export runs at 04:45 each night."),
        # a line opening with its name, and another name opening the same mould: two subjects
        (2, "Moreno runs the paint shop."),
        (11, "Moreno runs the paint shop."),
        (42, "Abebe runs the paint shop."),
        # a capitalised opening word also written in lower case is no name ("Standup" / "standup"):
        # the line has no value whose slot a later one could fill
        (3, "Standup notes go to the team wiki."),
        (12, "Standup notes go to the team wiki."),
        (13, "Skipped the standup with the team today."),
        (14, "The team lunch moved to the canteen."),
        (43, "The notes go to the wiki kept by Priya."),
    )
    assert changed_by_value(said) == {}


def test_a_mirror_of_the_older_line_or_a_report_of_work_is_no_change_of_its_slot() -> None:
    said = _dated(
        *[
            (d, line)
            for d in (0, 9)
            for line in (
                "The shipping service is owned by Rafael.",
                "The shipping service listens on port 5119.",
                "The audit service listens on port 7863.",
                "The audit service is owned by Kofi.",
            )
        ],
        # the same mould of another subject, whose name is no rarer than "owned" among the facts
        (40, "The search service is owned by Dmitri."),
        # a report of work done names the subject and a number that is no port
        (41, "Reviewed PR #6592 for the audit service: slow changes."),
    )
    assert changed_by_value(said) == {}


def test_the_same_line_with_a_subject_word_swapped_and_every_value_kept_is_another_fact() -> None:
    said = _dated(
        (0, "The router warranty runs out in August 2028."),
        (9, "The router warranty runs out in August 2028."),
        (1, "The dishwasher warranty runs out in March 2028."),
        (10, "The dishwasher warranty runs out in March 2028."),
        (40, "The e-bike warranty runs out in August 2028."),
        # a value swapped is still a change
        (41, "The dishwasher warranty runs out in March 2030."),
    )
    assert set(changed_by_value(said)) == {normalised("The dishwasher warranty runs out in March 2028.")}


def test_word_forms_of_a_subject_are_its_words_and_names_are_not_stemmed() -> None:
    old = "The nightly backups run at 01:00."
    firm = "Glenrock Installs installed the fridge-freezer."
    said = _dated(
        (0, old),
        (8, old),
        (1, firm),
        (9, firm),
        (40, "The nightly backup runs at 03:00."),  # "backups run" / "backup runs": the subject's forms
        (41, "Glenrock Services installed the heat-pump."),  # "Installs" is a name, no form of "installed"
    )
    stale = changed_by_value(said)
    assert stale[normalised(old)].text == "The nightly backup runs at 03:00."
    assert set(stale) == {normalised(old)}


def _revert_said(later: str) -> tuple[list[Said], dict[str, Said]]:
    old = "The weekly groceries come from Ocado."
    trial = "Giving Waitrose a go for the weekly groceries this month."
    said = _dated((0, old), (8, old), (30, trial), (37, trial), (60, later))
    return said, {normalised(old): said[2]}


def test_a_later_line_naming_the_replaced_value_again_takes_the_change_back() -> None:
    said, stale = _revert_said("Back to Ocado for the weekly groceries - Waitrose substituted too much.")
    out = reverted(said, stale)
    assert normalised("The weekly groceries come from Ocado.") not in out  # current again
    assert out[normalised(said[2].text)].text.startswith("Back to Ocado")  # the trial is the old value now
    # the value named again of another subject, in a report of work: no revert
    for later in ("The office snacks come from Ocado.", "Returned the Ocado crates from the weekly groceries."):
        said, stale = _revert_said(later)
        assert reverted(said, stale) == stale, later
    # the older line's other value (its subject's name) not kept: another subject
    old = "The Leeds office groceries come from Ocado."
    said = _dated(
        (0, old),
        (8, old),
        (30, "Giving Waitrose a go for the Leeds office groceries."),
        (60, "The York office groceries come through Ocado."),
    )
    stale = {normalised(old): said[2]}
    assert reverted(said, stale) == stale
    # the replaced value named as the one left: the change said again
    old = "We run CI builds on Jenkins."
    said = _dated(
        (0, old),
        (8, old),
        (30, "Buildkite runs the CI builds now."),
        (60, "Buildkite runs the CI builds, it took over from Jenkins."),
    )
    stale = {normalised(old): said[2]}
    assert reverted(said, stale) == stale
    said = _dated(
        (0, old), (8, old), (30, "Buildkite runs the CI builds now."), (60, "Jenkins runs the CI builds again.")
    )
    assert normalised(old) not in reverted(said, {normalised(old): said[2]})


async def test_a_revert_is_read_by_the_job(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    days = {
        0: "The weekly groceries come from Ocado.",
        8: "The weekly groceries come from Ocado.",
        30: "Giving Waitrose a go for the weekly groceries this month.",
        60: "Back to Ocado for the weekly groceries - Waitrose substituted too much.",
    }
    for day, line in days.items():
        (root / "daily" / f"{START + timedelta(days=day)}.md").write_text(f"## Log\n- {line}\n")
    report = await consolidate(
        root, since=None, until=START + timedelta(days=90), summariser=ExtractiveSummariser(), dry_run=False
    )
    assert [(s.line.lstrip("- "), s.by.lstrip("- ")) for s in report.superseded] == [(days[30], days[60])]


def test_a_newer_line_naming_the_older_value_as_the_one_left_changes_it() -> None:
    old = "The car goes to Greenway Garage for its service."
    said = _dated(
        (0, old),
        (8, old),
        (40, "[x] Car service booked at Brightwell Motors, not Greenway this year"),
        (41, "Bike service booked at Brightwell Motors, not Greenway"),  # one word of the subject: another
    )
    stale = changed_by_value(said)
    assert stale[normalised(old)].text.startswith("[x] Car service")
    assert set(stale) == {normalised(old)}
    # a value the older line names in the same place is its mould, not a value left
    old = "The Leeds office groceries come from Ocado."

    def left(new: str) -> bool:
        return _named_left(
            old, new, old=_content(old), old_values=_values(old), new=_content(new), new_values=_values(new), weight={}
        )

    assert not left("The York office groceries come from Ocado.")
    assert left("The Leeds office groceries arrive with Waitrose, not Ocado.")


def test_short_routine_lines_with_a_frame_of_two_words_are_routine() -> None:
    names = ["Wren", "Nell", "Oisin", "Greta"]
    week = [
        (f"daily/{day}.md", text)
        for day in range(5)
        for k in range(4)
        for text in (
            f"Takings yesterday: £{300 + 97 * k + day}.",
            f"{names[(k + day) % 4]} in late, {5 + 7 * k + day} minutes.",
            f"Sold {3 + k + day} {['sausage rolls', 'flat whites'][k % 2]} by noon.",
        )
    ]
    facts = [
        # two frequent words of the log, but words of its own the week's notes do not write
        ("daily/2.md", "Wren takes the late delivery of oat milk on Fridays."),
        ("daily/3.md", "Takings go to the night safe at Barclays Kendal."),
        ("daily/4.md", "The late bus to Kendal runs every 20 minutes."),
    ]
    flags = routine([*week, *facts])
    assert all(flags[: len(week)]) and not any(flags[len(week) :]), [
        text for (_, text), flag in zip([*week, *facts], flags, strict=True) if not flag
    ]


def test_a_revert_naming_the_trial_too_needs_one_subject_word() -> None:
    """ "Lunches back with Chartwells, the Aspens ..." shares one word of the older line's subject,
    but names the trial's value beside the one it takes back: the change is taken back."""
    old = "School lunches are supplied by Chartwells for the juniors."
    trial = "Trying Aspens for school lunches this term, cheaper per head."
    said = _dated(
        (0, old), (8, old), (30, trial), (60, "Back with Chartwells for lunches, the Aspens portions were too small.")
    )
    out = reverted(said, {normalised(old): said[2]})
    assert normalised(old) not in out
    assert out[normalised(trial)].text.startswith("Back with Chartwells")
    # both values named without a word of the subject, or the old one named as the one left: no revert
    for later in (
        "Chartwells and Aspens both sent invoices today.",
        "Aspens do the lunches now, they took over from Chartwells.",
    ):
        said = _dated((0, old), (8, old), (30, trial), (60, later))
        stale = {normalised(old): said[2]}
        assert reverted(said, stale) == stale, later


def test_a_mould_is_routine_though_its_slot_is_written_more_often_than_its_words() -> None:
    """A courier depot's week: each customer is named in four moulds, so "Hartley" is written more
    often than "invoice", "paid" or "settled"; the invoice mould is routine all the same. The
    week's facts that name a customer and share one of the mould's words are not."""
    customers = ["Hartley", "Osei", "Brannigan"]
    week = [
        (f"daily/{day}.md", text)
        for day in range(4)
        for k in range(3)
        for text in (
            f"Invoice paid by {customers[(k + day) % 3]}, account settled.",
            f"Collected {3 + k + day} returns from {customers[(k + 1) % 3]}.",
            f"Pallet for {customers[(k + day + 2) % 3]} left on bay {k + 1}.",
            f"Rang {customers[k % 3]} about a missed slot at {8 + k}:{day}0.",
        )
    ]
    facts = [
        ("daily/1.md", "Hartley pays by standing order on the 1st, the account is in Rob's name."),
        ("daily/2.md", "Osei's account manager is Priya Shah, extension 214."),
        ("daily/3.md", "Brannigan pallets need a tail lift at the Leyton gate."),
    ]
    flags = routine([*week, *facts])
    assert all(flags[: len(week)]), [text for (_, text), flag in zip(week, flags, strict=False) if not flag][:5]
    assert not any(flags[len(week) :])


def _standing(*extra: tuple[int, str]) -> list[tuple[int, str]]:
    """A clinic's other standing facts, each said in three weeks: the words they share ("clinic",
    "account") are no line's rarest."""
    facts = [
        "The clinic's boiler is serviced by Hartfield Heating.",
        "The clinic's bank account is with Barclays Leeds.",
        "The clinic's waste goes out with Initial Medical.",
    ]
    return [(d, f) for d in (1, 9, 17) for f in facts] + list(extra)


def test_a_name_after_a_label_s_colon_is_a_value() -> None:
    """ "Surgery booking system: Pearl." gives its value after a colon: a capital there is read as a
    sentence's opening unless the tier never writes the word in lower case. A plain word the tier
    writes in lower case is no value ("Surgery booking system: Slow again")."""
    old = "The booking system for the surgery is Dentally."
    new = "Surgery booking system: Pearl. Logins in the top drawer."
    plain = "Surgery booking system: Slow again this morning, it was slow all week."
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, new))))
    assert out[normalised(old)].text == new
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, plain))))
    assert normalised(old) not in out


def test_a_name_of_several_words_is_one_slot_and_a_possessive_is_no_word() -> None:
    """ "The clinic's alarm company is Redline Security Systems" / "Clinic alarm callouts go to
    Vigilant, ...": the noun phrase "clinic alarm" is read across the possessive, and the three
    capitalised words are one value replaced. Values lost from two places of the line are two
    slots: no change."""
    old = "The clinic's alarm company is Redline Security Systems."
    new = "Clinic alarm callouts go to Vigilant, 0161 555 0199."
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, new))))
    assert out[normalised(old)].text == new
    two = "The clinic's alarm company is Redline, billed through Xero Payments."
    out = changed_by_value(_dated(*_standing((0, two), (8, two), (15, two), (40, new))))
    assert normalised(two) not in out


def test_a_report_of_work_done_that_says_it_changed_the_value_fills_its_slot() -> None:
    """ "Switched the trade account to Office Depot, ..." opens with a past tense, as a report of
    work done does, and says it changed the value: it changes "Our stationery comes on the Viking
    trade account". A report with no change word does not ("Ordered ... on the trade account")."""
    old = "Our stationery comes on the Viking trade account."
    new = "Switched the trade account to Office Depot, the login is in the safe."
    report = "Ordered paper from Office Depot on the trade account, three boxes."
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, new))))
    assert out[normalised(old)].text == new
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, report))))
    assert normalised(old) not in out


def test_a_plain_word_opening_a_line_is_read_as_its_form() -> None:
    """ "Evening deliveries leave at 18:30" opens with a capital; the newer line writes "evening" in
    lower case, so both read the same noun phrase ("evening deliveries", as the index stems it)
    and the newer line fills its slot with another time. A name that opens a line and is never
    written in lower case stays a name ("Brennan")."""
    old = "Evening deliveries leave at 18:30."
    new = "The van for evening deliveries goes at 19:15 from the 1st."
    out = changed_by_value(_dated(*_standing((0, old), (8, old), (15, old), (40, new))))
    assert out[normalised(old)].text == new
    named = "Brennan drives the evening deliveries at 18:30."
    other = "Okafor drives the evening deliveries at 19:15 from the 1st."
    out = changed_by_value(_dated(*_standing((0, named), (8, named), (15, named), (40, other))))
    assert normalised(named) not in out


def test_a_newer_line_naming_a_place_the_older_line_names_after_its_value_is_no_change_of_its_subject() -> None:
    """ "Our pipelines are orchestrated with Airflow on the ETL virtual machine": what it says is so
    is the pipelines' orchestration, the machine only where it runs. "Swapped the ETL virtual machine
    to Python 3.12 ..." changes the machine's Python, not the orchestrator, though it holds every
    word of the older line's rarest pair and a name where Airflow was. A newer line naming the
    subject before the older's copula still fills its slot ("Pipelines are now orchestrated by
    ...")."""
    pipelines = [
        "Our pipelines are orchestrated with Airflow on the ETL virtual machine.",
        "The ETL virtual machine runs Python 3.11.",
        "The finance pipelines are owned by Dana Whitlock.",
        "The marketing pipelines are owned by Omar Reyes.",
        "The logistics pipelines are owned by Lena Park.",
    ]
    old, python = pipelines[0], pipelines[1]
    swapped = "Swapped the ETL virtual machine to Python 3.12 as a trial for two weeks."
    lines = [(d, f) for d in (1, 9, 17) for f in pipelines] + [(40, swapped)]
    out = changed_by_value(_dated(*lines))
    assert out[normalised(python)].text == swapped
    assert normalised(old) not in out
    moved = "Our pipelines are orchestrated with Dagster on the ETL virtual machine from today."
    out = changed_by_value(_dated(*[(d, f) for d in (1, 9, 17) for f in pipelines], (40, moved)))
    assert out[normalised(old)].text == moved
