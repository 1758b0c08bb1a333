"""The job on notes written as prose paragraphs, one paragraph a line: a fact said as one sentence
of a routine paragraph is read as a statement of its own (it recurs, changes, is kept and is
preferred as a line is), on real tiers in tmp dirs with the extractive summariser."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from sidecar.consolidate.bound import Part, needed, shared
from sidecar.consolidate.cluster import Cluster
from sidecar.consolidate.job import consolidate
from sidecar.consolidate.periods import Line, section_lines, statement_text
from sidecar.consolidate.report import Report
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.supersede import SUPERSEDED

FIRST_DAY = date(2026, 1, 5)  # a Monday
WEEKS = 6
UNTIL = date(2026, 2, 23)
RECURRING = "The weekly trading review with the commercial team is held in the Skylark room."
PREFERENCE = "I prefer that you give every time in UTC when you write up an incident."
OLD = "The data team standup happens every morning at 9:30, on the usual Meet link."
NEW = "The data team standup now happens every morning at 10:05, on the usual Meet link."
BESIDE_OLD = "Invoices for the warehouse credits are approved by Ottoline Marsh."
RECURRING_DAYS = (0, 9, 16, 23, 30)
PREFERENCE_DAYS = (1, 8, 15, 22)
OLD_DAYS = (2, 3, 9)
NEW_DAYS = (29, 31)
ASIDE = "No one seemed worried about it at the time."  # the writer's manner, said every third day
LEAD_INS = ("Handoff for whoever picks this up next.", "Quick summary of the shift before I log off.")


def _routine(day: date, n: int) -> str:
    k = day.toordinal() % 997 + n
    return (
        f"Loaded {k * 113:,} rows into stg_orders_{n}; the run took {k % 50 + 3} minutes. "
        f"Ticket DATA-{k * 7} closed after the {day.strftime('%A')} review of backlog item {k}. "
        f"Answered a question from Dana about {k % 40 + 2} duplicate keys in dim_store_{n}."
    )


def _note(day: date) -> str:
    offset = (day - FIRST_DAY).days
    paragraphs = [f"{LEAD_INS[n % 2]} {_routine(day, n)}" for n in range(3)]
    if offset in RECURRING_DAYS:  # the last sentence of a different paragraph each time
        paragraphs[offset % 3] += f" {RECURRING}"
    if offset in PREFERENCE_DAYS:
        paragraphs[(offset + 1) % 3] += f" {PREFERENCE}"
    if offset in OLD_DAYS:
        paragraphs[(offset + 2) % 3] += f" {OLD} {BESIDE_OLD}"
    if offset in NEW_DAYS:
        paragraphs[offset % 3] += f" {NEW}"
    if offset % 3 == 0:
        paragraphs[1] += f" {ASIDE}"
    return f"# {day.isoformat()}\n\n## Handoff\n\n" + "\n\n".join(paragraphs) + "\n"


def _make_tier(root: Path) -> None:
    (root / "daily").mkdir(parents=True)
    (root / "AGENT.md").write_text("# Agent\n\n- I answer in English.\n")
    for w in range(WEEKS):
        for d in range(5):
            day = FIRST_DAY + timedelta(days=w * 7 + d)
            (root / "daily" / f"{day.isoformat()}.md").write_text(_note(day))


async def _run(root: Path) -> Report:
    return await consolidate(root, since=None, until=UNTIL, summariser=ExtractiveSummariser(), dry_run=False)


def _sections(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    title = ""
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
        out[title] = out.get(title, "") + line + "\n"
    return out


def test_a_paragraph_line_is_its_sentences_and_a_short_line_stays_whole() -> None:
    text = (
        "# 2026-01-05\n\n## Log\n"
        "- Card machine: Zettle. Receipt roll in the till drawer.\n"
        f'Quiet stretch overall. Loaded 12 rows into stg_orders. Pia wrote in the channel: "{RECURRING}"\n'
        "```\nbot | build 12. ok. done.\n```\n"
        "Q (Dana): what came of item 12? A: The index rebuild is done.\n"
        "- Caroline: I went to the group. It was great. Everyone was kind and I felt at home there.\n"
    )
    said = [line.text for line in section_lines("daily/2026-01-05.md", text)]
    assert said == [
        "- Card machine: Zettle. Receipt roll in the till drawer.",
        "Quiet stretch overall.",
        "Loaded 12 rows into stg_orders.",
        RECURRING,  # the quoted message is the statement; its attribution differs from day to day
        "```\nbot | build 12. ok. done.\n```",
        "Q (Dana): what came of item 12?",
        "The index rebuild is done.",  # an answer after its question, without its label
        "- Caroline: I went to the group. It was great. Everyone was kind and I felt at home there.",  # a turn
    ]
    assert statement_text(text).splitlines()[4:7] == said[1:4]


async def test_a_fact_said_inside_different_paragraphs_is_promoted(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    await _run(root)
    agent = (root / "AGENT.md").read_text()
    promoted = [line for line in agent.splitlines() if RECURRING.rstrip(".") in line]
    assert len(promoted) == 1 and "<!-- from daily/2026-01-05.md" in promoted[0]
    assert not [line for line in agent.splitlines() if "Loaded" in line or "Handoff" in line]


async def test_a_preference_said_inside_paragraphs_reaches_the_preferences(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    await _run(root)
    preferences = _sections((root / "AGENT.md").read_text()).get("Preferences", "")
    assert "give every time in UTC" in preferences
    assert "Loaded" not in preferences


async def test_a_changed_value_retires_its_sentence_not_its_paragraph(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    await _run(root)
    old_week = (root / "daily" / "summaries" / "2026-W02.md").read_text()
    sections = _sections(old_week)
    assert OLD.rstrip(".") in sections.get(SUPERSEDED, "")
    current = "".join(body for title, body in sections.items() if title != SUPERSEDED)
    assert BESIDE_OLD in current  # said beside the old value, it is still a current fact
    assert OLD.rstrip(".") not in current
    assert BESIDE_OLD not in sections.get(SUPERSEDED, "")


async def test_an_aside_said_day_after_day_is_neither_a_fact_nor_a_preference(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    _make_tier(root)
    await _run(root)
    agent = (root / "AGENT.md").read_text()
    assert ASIDE.rstrip(".") not in agent  # said on ten of thirty days: boilerplate (routine.routine_by)
    assert RECURRING.rstrip(".") in agent


MONTHS = ("January", "February", "March")
DECIDED = (
    "release train",
    "hotfix window",
    "schema freeze",
    "canary rollout",
    "search reindex",
    "vendor audit",
    "cache warmup",
)


def _minutes(day: date) -> str:
    """A day's meeting minutes under a heading naming the day in words, with a long log in eight
    sections."""
    k = day.toordinal() % 997
    logs = "".join(
        f"### {topic}\n\n"
        + "".join(
            f"- {topic} item {k * 31 + n}: stg_table_{n} reloaded, ticket DATA-{k + n} seen by Dana.\n"
            for n in range(30)
        )
        + "\n"
        for topic in ("Updates", "Risks", "Blockers", "Follow-ups", "Costs", "Hiring", "Vendors", "Security")
    )
    # a decision of its own each day: one mould said every day with other values is a reading
    # (``changes.reading_keys``), the week's log
    decision = f"- The {DECIDED[day.toordinal() % len(DECIDED)]} for build {k} ships from branch rel-{k}.\n"
    return (
        f"# {day.isoformat()}\n\n## {day.strftime('%A')} sync, {MONTHS[day.month - 1]} {day.day}\n\n"
        f"Attendees: Ade, Bea, Cato\n\n### Decisions\n\n{decision}\n{logs}"
    )


@pytest.mark.slow
async def test_a_week_of_minutes_is_summarised_by_its_sections_within_one_sections_bound(tmp_path: Path) -> None:
    root = tmp_path / "tier"
    (root / "daily").mkdir(parents=True)
    # The week checked, Monday to Sunday (2026-W02): with the next week beside it (14 days) the
    # run wrote the same week file, left out the same lines and archived the same notes, for
    # twice the CPU (some 6 s).
    for n in range(7):
        day = FIRST_DAY + timedelta(days=n)
        (root / "daily" / f"{day.isoformat()}.md").write_text(_minutes(day))
    report = await _run(root)
    week = (root / "daily" / "summaries" / "2026-W02.md").read_text()
    titles = [line for line in week.splitlines() if line.startswith("## ")]
    assert "## Decisions" in titles and not [t for t in titles if "sync" in t]  # one section per topic, not per day
    for n in range(5):
        day = FIRST_DAY + timedelta(days=n)
        decided = DECIDED[day.toordinal() % len(DECIDED)]
        assert f"{decided} for build {day.toordinal() % 997} ships" in week  # the facts are all kept
    # the week's sections share what one section of standing lines holds (``bound.shared``, two
    # section budgets); the rest is in the archive
    body = sum(len(line) + 1 for line in week.splitlines() if line.startswith("- "))
    assert body <= 2000 * 2
    left_out = [d for d in report.dropped if d.period == "2026-W02" and d.reason == "budget"]
    assert left_out and all(" item " in d.text for d in left_out)
    assert all(d.text.strip() in (root / "archive" / d.sources[0]).read_text() for d in left_out)


def test_sections_share_the_bound_a_small_one_whole() -> None:
    def part(title: str, texts: list[str], allowed: int) -> Part:
        lines = [Line(t, "daily/2026-01-05.md", title) for t in texts]
        return (title, [Cluster(line, frozenset(), frozenset(), [line]) for line in lines], allowed)

    small = part("Decisions", ["The release ships from rel-4."], 4000)
    long_logs = [part(f"Log {n} (log)", [f"line {n}-{k} " + "x" * 90 for k in range(40)], 1000) for n in range(8)]
    parts = shared([small, *long_logs], 6000)
    assert parts[0][2] == needed(small[1])  # a section of one fact keeps it whole
    assert sum(allowed for _, _, allowed in parts) <= 6000
    assert len({allowed for _, _, allowed in parts[1:]}) == 1  # the logs share the rest alike
    one = [small, long_logs[0]]
    assert shared(one, 6000) == one  # what fits is left as it is
