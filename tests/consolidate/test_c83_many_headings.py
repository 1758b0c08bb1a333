"""A week whose notes give each session a heading of its own ("## Session 10:10: review the pull
request") has more headings than its summary's bound can write with their lines: the headings only
one note has are merged into one section, each line keeping its heading in its title, so the
summary holds lines, not headings alone. A week of a few headings keeps them as sections."""

from __future__ import annotations

from datetime import date, timedelta

from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.consolidate.weekly import WEEK_BOUND, summarise_week

MONDAY = date(2026, 3, 2)
BUDGET = 2000
TASKS = (
    "track down the 500s in staging",
    "add pagination to the list endpoint",
    "write tests for the retry logic",
    "make the startup less noisy",
    "review the pull request on the importer",
    "clean up dead code in the exporter",
)
FACTS = (
    "The orders-api tests run in the orders-int{n} job of the release workflow.",
    "Tomoko owns billing-worker{n} since the reorganisation.",
    "notify-svc keeps its data in the notify_main{n} database on pg-2.",
    "Lint config for files-svc lives in ruff-{n}.toml beside the package.",
    "The pricing-api protobuf stubs are regenerated with make proto-{n}, never by hand.",
    "Release branches for ui-kit are cut on Fridays by Hallie{n}.",
    "Search-indexer integration tests skip unless SEARCH_IT_RUN{n}=1 is set.",
    "Feature flag ff_export_{n} guards the bulk export in db-utils.",
)
FACTS_OPENINGS = tuple(fact.split("{")[0] for fact in FACTS)

DONE = (
    "Moved the importer's nightly run to 02:{n} UTC after the backup window.",
    "Asked Ravi about schema {n} since Ravi owns the ledger; got a thumbs up.",
    "Bumped the webhook timeout in search-indexer to {n} s.",
    "Rotated the signing key for the exporter, new key id k{n}.",
)


def _session(day: int, n: int) -> str:
    task = TASKS[(day * 3 + n) % len(TASKS)]
    fact = FACTS[(day + n) % len(FACTS)].format(n=day * 10 + n)
    done = DONE[(day + n) % len(DONE)].format(n=day * 10 + n)
    return f"\n## Session {9 + n:02d}:{(day * 7) % 60:02d}: {task}\n\n**Learned**\n- {fact}\n\n**Done**\n- {done}\n"


def _texts(sessions: int) -> dict[str, str]:
    out = {}
    for day in range(5):
        when = (MONDAY + timedelta(days=day)).isoformat()
        out[f"daily/{when}.md"] = f"# {when}\n" + "".join(_session(day, n) for n in range(sessions))
    return out


def _facts(texts: dict[str, str]) -> list[str]:
    return [line for text in texts.values() for line in text.splitlines() if line.startswith("- ")]


def _title_of(line: str, text: str) -> str:
    rows = text.splitlines()
    return rows[rows.index(line) - 1]


async def test_a_week_of_many_one_note_headings_keeps_lines_under_them() -> None:
    texts = _texts(6)
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET, threshold=0.6, stale={}
    )
    assert len(week.text) <= BUDGET * WEEK_BOUND
    kept = [line for line in _facts(texts) if line in week.text.splitlines()]
    assert len(kept) >= 10  # the summary holds the week's facts, not its headings alone
    assert "\n## Notes\n" in week.text
    # each line is titled with the session it was said in, and what it was read under there
    # what was done, a line of the week's log, is titled so too: its session is said
    learned = [line for line in kept if _title_of(line, week.text).startswith("### Session ")]
    assert len(learned) >= 10
    assert all("> Learned" in _title_of(line, week.text) for line in kept if line[2:].startswith(FACTS_OPENINGS))
    assert [line for line in kept if "> Done" in _title_of(line, week.text)]
    # what the bound left out is in the rest, titled so too
    learned_all = [line for line in _facts(texts) if line[2:].startswith(FACTS_OPENINGS)]
    assert all(line in week.text or line in week.rest for line in learned_all)


async def test_a_week_of_a_few_headings_keeps_its_sections() -> None:
    texts = _texts(1)
    week = await summarise_week(
        "2026-W10", sorted(texts), texts, ExtractiveSummariser(), budget=BUDGET, threshold=0.6, stale={}
    )
    assert "\n## Notes\n" not in week.text
    sections = [line for line in week.text.splitlines() if line.startswith("## Session ")]
    assert len([line for line in sections if not line.endswith(" (log)")]) == 5
