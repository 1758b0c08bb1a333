"""A 120-day simulation of an agent writing daily notes, consolidated every simulated week.

A real sidecar app runs in-process (BM25 only, no watcher, no reconcile timer, no consolidation
schedule) on a loopback aiohttp server over a fresh tier dir. Each simulated day the agent
appends a note to ``daily/YYYY-MM-DD.md`` through ``POST /memory/write``: 5-15 lines of routine
work log, planted facts (ports, owners, paths...), planted preferences repeated on several days,
facts repeated on later days (inside the day's note, or appended alone word for word, which the
write path must refuse with ``duplicate_of``), and facts contradicted later ("the staging db is
db-stage-3", then on day 80 "the staging db moved to db-stage-9"). Every simulated Monday the
consolidation job runs on the tier dir with ``until`` = that day (``POST /memory/consolidate``
uses the real clock, so the job is called directly, as the route calls it: extractive
summariser, the app's journal, the evergreen cap from the settings), then ``POST
/memory/reindex`` rebuilds the index.

On day 120: the tier's memory bytes against the tier cap, planted facts found by ``POST
/memory/search`` in the top 10 (for contradicted facts, the latest value found and ranked above
the old one), the top planted preferences in ``POST /memory/block`` (default budget), duplicate
appends refused, and the consolidation runs' wall and CPU time. Seeded: the same notes every run.

    python -m tests.bench consolidation
"""

from __future__ import annotations

import asyncio
import random
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.episodic.lifecycle import JOURNAL
from sidecar.index.files import scan_tier
from sidecar.logs import configure_logging
from sidecar.server.app import create_app
from sidecar.settings import Settings, load_settings
from tests.bench.util import report

SEED = 20
DAYS = 120
START = date(2026, 1, 5)  # a Monday
CONTRADICTION_DAY = 80  # the staging db moves on this day

SERVICES = [
    "billing",
    "ledger",
    "search",
    "auth",
    "notifier",
    "gateway",
    "scheduler",
    "exporter",
    "thumbnailer",
    "payments",
    "inventory",
    "catalog",
    "reports",
    "webhooks",
    "audit",
]
PEOPLE = ["Alice", "Bogdan", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lupe"]
REPOS = ["infra-terraform", "mobile-app", "data-pipeline", "design-system", "ops-scripts", "sdk-python", "sdk-go"]
VENDORS = ["stripe", "sendgrid", "twilio", "datadog", "sentry", "algolia", "mapbox"]
DATABASES = ["orders-db", "users-db", "events-db", "analytics-db", "sessions-db", "billing-db"]
TEAMS = ["platform", "growth", "mobile", "data", "security", "support"]
TOPICS = [
    "retry budget",
    "schema migration",
    "cache eviction",
    "log retention",
    "rate limiting",
    "flaky CI",
    "cost report",
    "on-call handover",
    "dependency upgrade",
    "load test",
    "error budget",
    "SLO review",
]
ROUTINE = ["Standup: nothing blocking.", "Checked the CI dashboard, all green.", "Cleared the review queue."]

PREFERENCES = [  # (text, days it is written on)
    ("The user prefers short answers.", 8),
    ("The user wants code examples in Python rather than shell where possible.", 6),
    ("The user likes a summary table at the end of long reports.", 5),
    ("Never push directly to main; the user wants a pull request for every change.", 3),
    ("The user prefers ISO dates (YYYY-MM-DD) in written reports.", 2),
]
TOP_PREFERENCES = 4  # the ones written on at least three days

CONTRADICTIONS = [  # (old line, new line, query, old value, new value)
    ("The staging db is db-stage-3.", "The staging db moved to db-stage-9.", "staging db", "db-stage-3", "db-stage-9"),
    (
        "The metrics dashboard is at grafana-1.corp:3000.",
        "The metrics dashboard moved to grafana-2.corp:3000.",
        "metrics dashboard",
        "grafana-1.corp",
        "grafana-2.corp",
    ),
    (
        "The on-call lead this quarter is Priya.",
        "The on-call lead this quarter is now Marcus.",
        "on-call lead",
        "Priya",
        "Marcus",
    ),
    (
        "The public API rate limit is 500 requests per minute.",
        "The public API rate limit was raised to 1200 requests per minute.",
        "public API rate limit",
        "500 requests",
        "1200 requests",
    ),
    (
        "The docs site is built with mkdocs.",
        "The docs site was switched to sphinx.",
        "docs site built with",
        "mkdocs",
        "sphinx",
    ),
    (
        "Feature flags are served by LaunchDarkly.",
        "Feature flags are now served by Unleash, self-hosted.",
        "feature flags served by",
        "LaunchDarkly",
        "Unleash",
    ),
    (
        "The weekly sync is on Tuesday at 14:00.",
        "The weekly sync moved to Thursday at 10:00.",
        "weekly sync",
        "Tuesday at 14:00",
        "Thursday at 10:00",
    ),
    (
        "Release branches are cut as release/2026.1.",
        "Release branches are now cut as release/2026.2.",
        "release branches cut",
        "release/2026.1",
        "release/2026.2",
    ),
]


@dataclass(frozen=True, slots=True)
class Fact:
    text: str
    query: str
    value: str


@dataclass(slots=True)
class Day:
    """What the agent writes on one simulated day."""

    log: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)  # inside the day's note
    alone_new: list[str] = field(default_factory=list)  # new facts appended on their own
    alone_repeat: list[str] = field(default_factory=list)  # word-for-word repeats appended on their own


@dataclass(slots=True)
class Tally:
    appends: int = 0
    written: int = 0
    repeat_attempts: int = 0
    repeat_refused: int = 0
    new_alone: int = 0
    new_alone_refused: int = 0
    consolidations: int = 0
    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    reindex_s: list[float] = field(default_factory=list)
    promoted: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)


def make_facts(rng: random.Random) -> list[Fact]:
    """Forty stable planted facts, each with a distinctive value and an agent-style query."""
    facts: list[Fact] = []
    for svc in rng.sample(SERVICES, 10):
        port = rng.randrange(3000, 9999)
        facts.append(Fact(f"The {svc} service listens on port {port}.", f"{svc} service port", str(port)))
    for repo in REPOS:
        who = rng.choice(PEOPLE)
        facts.append(Fact(f"{who} owns the {repo} repository and reviews its releases.", f"who owns {repo}", who))
    for svc in rng.sample(SERVICES, 8):
        slug = f"{svc}-{rng.choice(['deploy', 'rollback', 'failover', 'restore'])}"
        facts.append(
            Fact(f"The {svc} runbook is docs/runbooks/{slug}.md.", f"{svc} runbook", f"docs/runbooks/{slug}.md")
        )
    for vendor in VENDORS[:5]:
        path = f"secret/{vendor}/{rng.choice(['prod', 'live', 'main'])}-{rng.randrange(10, 99)}"
        facts.append(Fact(f"The {vendor} API key is kept in vault at {path}.", f"{vendor} API key vault", path))
    for db in DATABASES[:5]:
        at = f"{rng.randrange(0, 24):02d}:{rng.choice(['00', '15', '30', '45'])}"
        facts.append(Fact(f"The nightly backup of {db} runs at {at} UTC.", f"{db} nightly backup", f"{at} UTC"))
    for team in TEAMS[:5]:
        code = f"P{rng.randrange(100000, 999999)}"
        facts.append(Fact(f"The {team} team's on-call schedule is PagerDuty {code}.", f"{team} on-call schedule", code))
    return facts


def noise(rng: random.Random) -> str:
    """One routine work-log line, fresh each time (numbers, names, hashes)."""
    kind = rng.randrange(7)
    if kind == 0:
        return f"Ran the test suite: {rng.randrange(380, 460)} passed, {rng.randrange(0, 4)} failed in {rng.randrange(2, 9)}m{rng.randrange(60):02d}s."
    if kind == 1:
        return f"Reviewed PR #{rng.randrange(1000, 9999)} ({rng.choice(TOPICS)}), left {rng.randrange(1, 9)} comments."
    if kind == 2:
        a, b = rng.sample(["cache", "retry", "queue", "token", "upload", "locale", "timer", "index"], 2)
        return f"Fixed flaky test test_{a}_{b}_{rng.randrange(100)} (a timing assumption)."
    if kind == 3:
        return f"Talked with {rng.choice(PEOPLE)} about the {rng.choice(TOPICS)}; follow-up on {rng.choice(REPOS)}."
    if kind == 4:
        return f"Deployed {rng.choice(SERVICES)} build {rng.getrandbits(28):07x} to staging."
    if kind == 5:
        return f"Triaged {rng.randrange(2, 14)} new issues, {rng.randrange(0, 3)} marked urgent."
    return f"Spent {rng.randrange(1, 4)}h on the {rng.choice(TOPICS)} for {rng.choice(TEAMS)}."


def plan_days(rng: random.Random, facts: list[Fact]) -> tuple[list[Day], dict[str, Any]]:
    """Every day's lines, and what was planted where."""
    days = [Day() for _ in range(DAYS)]
    for fact in facts:
        first = rng.randrange(0, 100)
        (days[first].alone_new if rng.random() < 0.3 else days[first].facts).append(fact.text)
    repeated = rng.sample(facts, 16)
    for fact in repeated:  # repeated on 2-4 later days, half inside a note and half appended alone
        first = next(i for i, d in enumerate(days) if fact.text in d.facts or fact.text in d.alone_new)
        for later in rng.sample(range(first + 1, DAYS), min(rng.randrange(2, 5), DAYS - first - 1)):
            (days[later].facts if rng.random() < 0.5 else days[later].alone_repeat).append(fact.text)
    for n, (old, new, *_rest) in enumerate(CONTRADICTIONS):
        start = rng.randrange(0, 35)
        change = CONTRADICTION_DAY if n == 0 else rng.randrange(55, 105)
        days[start].facts.append(old)
        for later in rng.sample(range(start + 1, change), 2 + n % 3 if n % 2 == 0 else n % 2):
            days[later].facts.append(old)  # the even ones recur on 3+ days before they change: promoted
        days[change].alone_new.append(new)
        for later in rng.sample(range(change + 1, DAYS), n % 3):
            days[later].facts.append(new)
    for text, count in PREFERENCES:
        for day in rng.sample(range(0, 110), count):
            days[day].facts.append(text)
        days[rng.randrange(60, DAYS)].alone_repeat.append(text)  # said again, word for word
    for day in days:
        routine = [line for line in ROUTINE if rng.random() < 0.4]
        planted = len(day.facts) + len(day.alone_new) + len(day.alone_repeat)
        count = max(len(routine) + 1, rng.randrange(5, 16) - planted)
        day.log = routine + [noise(rng) for _ in range(count - len(routine))]
    weekly = {}
    for text, _ in PREFERENCES:
        weeks: dict[tuple[int, int], int] = {}
        for n, day in enumerate(days):
            if text in day.facts:
                key = (START + timedelta(days=n)).isocalendar()[:2]
                weeks[key] = weeks.get(key, 0) + 1
        weekly[text] = (sum(weeks.values()), max(weeks.values()))
    return days, {"repeated": repeated, "weekly": weekly}


def tier_bytes(root: Path) -> tuple[int, int, int]:
    """The tier's memory bytes (what the tier cap counts), those outside archive/, and the archive's."""
    files = scan_tier(root)
    archived = sum(f.size for rel, f in files.items() if rel.startswith("archive/"))
    total = sum(f.size for f in files.values())
    return total, total - archived, archived


def chunk_text(root: Path, hit: dict[str, Any]) -> str:
    lines = (root / hit["path"]).read_text(encoding="utf-8").splitlines()
    return "\n".join(lines[hit["line_start"] - 1 : hit["line_end"]])


async def search(client: TestClient[Any, Any], root: Path, query: str) -> list[tuple[str, str]]:
    resp = await client.post("/memory/search", json={"query": query, "limit": 10})
    body = await resp.json()
    assert resp.status == 200, body
    return [(hit["path"], chunk_text(root, hit)) for hit in body["results"]]


def first_rank(hits: list[tuple[str, str]], value: str) -> int | None:
    return next((i for i, (_, text) in enumerate(hits) if value in text), None)


async def write(client: TestClient[Any, Any], path: str, content: str, tally: Tally) -> dict[str, Any]:
    resp = await client.post("/memory/write", json={"path": path, "content": content, "mode": "append"})
    body = await resp.json()
    assert resp.status in (200, 201), body
    tally.appends += 1
    tally.written += "duplicate_of" not in body
    return body


async def run_consolidation(
    client: TestClient[Any, Any], settings: Settings, root: Path, until: date, tally: Tally
) -> None:
    """The job as the route runs it, with a simulated ``until``; then the index is rebuilt."""
    app = client.server.app
    wall, cpu = time.perf_counter(), time.process_time()
    result = await consolidate(
        root,
        since=None,
        until=until,
        summariser=ExtractiveSummariser(),
        dry_run=False,
        evergreen="AGENT.md",
        journal=app.get(JOURNAL),
        workspace_id=settings.workspace_id,
        agent_id=settings.agent_id,
        evergreen_cap_bytes=settings.evergreen_cap_bytes,
    )
    tally.wall_s.append(time.perf_counter() - wall)
    tally.cpu_s.append(time.process_time() - cpu)
    tally.consolidations += 1
    tally.promoted += [p.line for p in result.promoted]
    for line in result.dropped:
        tally.dropped[line.reason] = tally.dropped.get(line.reason, 0) + 1
    started = time.perf_counter()
    resp = await client.post("/memory/reindex")
    assert resp.status == 200, await resp.text()
    tally.reindex_s.append(time.perf_counter() - started)


async def simulate(root: Path) -> None:
    rng = random.Random(SEED)
    facts = make_facts(rng)
    days, planted = plan_days(rng, facts)
    settings = load_settings(
        {
            "memory_dir": str(root),
            "crew_dir": str(root.parent / "crew"),
            "embedder": "none",
            "watch": "false",
            "reconcile_interval": "0",
            "crew_reindex_interval": "0",
            "consolidate_interval": "0",
        },
        environ={},
    )
    tally = Tally()
    started = time.perf_counter()
    async with TestClient(TestServer(create_app(settings))) as client:
        for n, day in enumerate(days):
            today = START + timedelta(days=n)
            if n and today.weekday() == 0:
                await run_consolidation(client, settings, root, today, tally)
            path = f"daily/{today.isoformat()}.md"
            note = f"# {today.isoformat()}\n\n## Work log\n" + "".join(f"- {line}\n" for line in day.log)
            if day.facts:
                note += "\n## Notes\n" + "".join(f"- {line}\n" for line in day.facts)
            last = await write(client, path, note, tally)
            for line in day.alone_new:
                last = await write(client, path, f"- {line}\n", tally)
                tally.new_alone += 1
                tally.new_alone_refused += "duplicate_of" in last
            for line in day.alone_repeat:
                answer = await write(client, path, f"- {line}\n", tally)
                tally.repeat_attempts += 1
                tally.repeat_refused += "duplicate_of" in answer
            # read-your-writes: the day's notes are indexed before the next day's dedup checks
            await client.post("/memory/search", json={"query": "test suite", "after_seq": last["seq"]})
        last_day = START + timedelta(days=DAYS)
        await run_consolidation(client, settings, root, last_day, tally)
        simulated_s = time.perf_counter() - started
        await measure(client, settings, root, facts, planted, tally, simulated_s)


async def measure(
    client: TestClient[Any, Any],
    settings: Settings,
    root: Path,
    facts: list[Fact],
    planted: dict[str, Any],
    tally: Tally,
    simulated_s: float,
) -> None:
    cap = settings.tier_cap_bytes
    total, live, archived = tier_bytes(root)
    agent_md = (root / "AGENT.md").read_text(encoding="utf-8") if (root / "AGENT.md").exists() else ""
    daily_left = sorted(p.name for p in (root / "daily").glob("*.md"))
    report("days simulated / appends / written", f"{DAYS} / {tally.appends} / {tally.written}")
    report(
        "tier memory bytes on day 120 (with archive/)",
        f"{total:,} B = {100 * total / cap:.2f}% of the {cap:,} B cap",
        "< 50% of cap",
    )
    report("  live bytes outside archive/", f"{live:,} B = {100 * live / cap:.2f}% of cap", "< 50% of cap")
    report("  archive/ bytes", f"{archived:,} B ({len(list((root / 'archive' / 'daily').glob('*.md')))} notes)")
    per_day = total / DAYS
    report("  growth per simulated day, all / live", f"{per_day:,.0f} B / {live / DAYS:,.0f} B")
    report("  days until 50% of cap at this rate", f"{cap / 2 / per_day:,.0f} (all bytes)")
    report("  daily/ notes left unconsolidated", f"{len(daily_left)} ({daily_left[0]} .. {daily_left[-1]})")
    report("  AGENT.md bytes", f"{len(agent_md.encode()):,} B of {settings.evergreen_cap_bytes:,} B evergreen cap")

    stable = list(facts)
    found = 0
    missed = []
    for fact in stable:
        hits = await search(client, root, fact.query)
        if first_rank(hits, fact.value) is not None:
            found += 1
        else:
            missed.append(fact.query)
    report(
        "planted facts found by search, top 10", f"{found}/{len(stable)} = {100 * found / len(stable):.1f}%", ">= 95%"
    )
    if missed:
        report("  missed queries", "; ".join(missed)[:200])
    summaries = "\n".join(p.read_text(encoding="utf-8") for p in sorted((root / "daily" / "summaries").glob("*.md")))
    live_notes = "\n".join(p.read_text(encoding="utf-8") for p in (root / "daily").glob("*.md"))
    kept = sum(f.text in summaries or f.text in live_notes for f in stable)
    report("  of them in a weekly summary or a live note", f"{kept}/{len(stable)} (the rest: archive/ only)")
    repeated = planted["repeated"]
    rep_found = sum([first_rank(await search(client, root, f.query), f.value) is not None for f in repeated], start=0)
    report("  of them repeated on later days", f"{rep_found}/{len(repeated)}")

    latest_found = latest_above = 0
    stale_in_agent = []
    details = []
    for _old, _new, query, old_value, new_value in CONTRADICTIONS:
        hits = await search(client, root, query)
        r_new, r_old = first_rank(hits, new_value), first_rank(hits, old_value)
        latest_found += r_new is not None
        above = r_new is not None and (r_old is None or r_new < r_old)
        latest_above += above
        details.append(
            f"{query}: new #{'-' if r_new is None else r_new + 1} old #{'-' if r_old is None else r_old + 1}"
        )
        if old_value in agent_md:
            stale_in_agent.append(old_value)
    n = len(CONTRADICTIONS)
    report(
        "contradicted facts: latest value in top 10", f"{latest_found}/{n} = {100 * latest_found / n:.0f}%", ">= 95%"
    )
    report("contradicted facts: latest ranked above old", f"{latest_above}/{n} = {100 * latest_above / n:.0f}%", "all")
    for line in details:
        report("  rank (1-based) of first chunk with value", line)
    report(
        "old (contradicted) values still in AGENT.md",
        f"{len(stale_in_agent)}/{n}: {', '.join(stale_in_agent) or '-'}",
        "0",
    )

    resp = await client.post("/memory/block", json={})
    block = (await resp.json())["text"]
    top = [text for text, _ in PREFERENCES[:TOP_PREFERENCES]]
    in_block = [text for text in top if text in block]
    report(
        "top planted preferences in the memory block",
        f"{len(in_block)}/{len(top)} (default budget {settings.prompt_budget:,}, used {len(block):,})",
        "all",
    )
    in_agent = sum(text in agent_md for text in top)
    report("  of them promoted to AGENT.md", f"{in_agent}/{len(top)}")
    spread = ", ".join(f"{planted['weekly'][text][0]}/{planted['weekly'][text][1]}" for text in top)
    report("  notes each was written in / most in one ISO week", spread, "promoted at 3 sources: notes or earlier weeks")
    new_in_block = [v for *_rest, v in CONTRADICTIONS if v in block]
    report("  latest (contradicting) values in the block", f"{len(new_in_block)}/{len(CONTRADICTIONS)}")
    stale_in_block = [v for _, _, _, v, _ in CONTRADICTIONS if v in block]
    report("  old (contradicted) values in the block", f"{len(stale_in_block)}/{n}")

    report("duplicate appends refused (word-for-word, alone)", f"{tally.repeat_refused}/{tally.repeat_attempts}", "all")
    report("new facts appended alone, wrongly refused", f"{tally.new_alone_refused}/{tally.new_alone}", "0")
    planted_lines = (
        {f.text for f in facts}
        | {t for t, _ in PREFERENCES}
        | {c[0] for c in CONTRADICTIONS}
        | {c[1] for c in CONTRADICTIONS}
    )
    routine = [p for p in tally.promoted if re.sub(r"^- ", "", p) in ROUTINE]
    planted_promoted = [p for p in tally.promoted if re.sub(r"^- ", "", p) in planted_lines]
    report(
        "lines promoted to AGENT.md: planted / routine / total",
        f"{len(planted_promoted)} / {len(routine)} / {len(tally.promoted)}",
    )
    left_out = ", ".join(f"{n} {reason}" for reason, n in sorted(tally.dropped.items())) or "none"
    report("lines left out of summaries (listed in reports)", left_out)

    wall, cpu = sum(tally.wall_s), sum(tally.cpu_s)
    report("consolidation runs", f"{tally.consolidations}")
    report(
        "  wall time: total / mean / max per run",
        f"{wall * 1000:.0f} / {wall * 1000 / len(tally.wall_s):.1f} / {max(tally.wall_s) * 1000:.1f} ms",
    )
    report(
        "  CPU time: total / mean / max per run",
        f"{cpu * 1000:.0f} / {cpu * 1000 / len(tally.cpu_s):.1f} / {max(tally.cpu_s) * 1000:.1f} ms",
    )
    report(
        "  reindex after each run (POST /memory/reindex), mean",
        f"{1000 * sum(tally.reindex_s) / len(tally.reindex_s):.1f} ms",
    )
    report("simulation wall time (writes, runs, reindexes)", f"{simulated_s:.1f} s")


def main() -> None:
    configure_logging("console", "warning")
    with tempfile.TemporaryDirectory(prefix="bench-consolidation-") as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        asyncio.run(simulate(root))


if __name__ == "__main__":
    main()
