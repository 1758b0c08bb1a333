"""Facts that share a sentence frame stay facts through a real run: the same few lines said word
for word on several days are promoted with their provenance, a table of facts said on a few days
of a week is found by a search, and a mould whose values vary from day to day on most days still
goes to the week's log (``routine.py``)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from sidecar.consolidate.job import consolidate
from sidecar.consolidate.promote import consolidated_bullets
from sidecar.consolidate.summarise import ExtractiveSummariser
from sidecar.server.app import create_app
from sidecar.settings import load_settings

START = date(2026, 2, 2)  # a Monday
DAYS = 84
COVER = [
    "Weekend cover for the north depot is done by Priya, rota kept by the office.",
    "Weekend cover for the south depot is done by Gunnar, rota kept by the office.",
    "Weekend cover for the east depot is done by Ifeoma, rota kept by the office.",
    "Weekend cover for the harbour depot is done by Lucjan, rota kept by the office.",
]
#: The days each cover line is said on: three of one week, then once in two later weeks.
COVER_DAYS = [15, 16, 17, 43, 65]
BUCKETS = {
    "orders-svc": "bk-41-orders",
    "invoicer": "bk-07-inv",
    "route-planner": "bk-19-route",
    "fleet-tracker": "bk-22-fleet",
    "label-printer": "bk-33-label",
    "customs-desk": "bk-58-customs",
    "returns-portal": "bk-64-returns",
    "driver-app": "bk-71-driver",
}
#: The day each bucket line is said on: three days of one week.
BUCKET_DAYS = [29, 29, 29, 30, 30, 30, 31, 31]


def _note(n: int) -> str:
    lines = [
        f"Van {k} back at {14 + (n * 3 + k) % 5}:{(n * 7 + k * 11) % 60:02d} with {(n * 5 + k) % 9 + 1} returns."
        for k in (1, 2)
    ]
    lines.append(f"Spoke to customer number {n} about a delivery slot, day {n}.")
    if n in COVER_DAYS:
        lines += COVER
    lines += [
        f"{svc} keeps its backups in bucket {bucket}."
        for (svc, bucket), day in zip(BUCKETS.items(), BUCKET_DAYS, strict=True)
        if day == n
    ]
    return "## Log\n" + "".join(f"- {line}\n" for line in lines)


async def _run(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    for n in range(DAYS):
        (root / "daily" / f"{START + timedelta(days=n)}.md").write_text(_note(n))
    await consolidate(
        root, since=None, until=START + timedelta(days=DAYS), summariser=ExtractiveSummariser(), dry_run=False
    )
    return root


def _week_name(n: int) -> str:
    year, week, _ = (START + timedelta(days=n)).isocalendar()
    return f"{year}-W{week:02d}"


async def test_recurring_facts_sharing_a_frame_are_promoted_with_provenance(tmp_path: Path) -> None:
    root = await _run(tmp_path)
    promoted = dict(consolidated_bullets((root / "AGENT.md").read_text()))
    for fact in COVER:
        line = next((line for line in promoted if fact in line), None)
        assert line is not None, (fact, list(promoted))
        assert promoted[line], line
        assert all(s.startswith("daily/") for s in promoted[line]), promoted[line]
    log = (root / "daily" / "summaries" / f"{_week_name(15)}.md").read_text()
    facts_part, _, _ = log.partition("## Log (log)")
    assert all(fact in facts_part for fact in COVER), log


async def test_a_table_of_facts_is_found_by_search_and_a_varying_mould_stays_in_the_log(tmp_path: Path) -> None:
    root = await _run(tmp_path)
    summary = (root / "daily" / "summaries" / f"{_week_name(29)}.md").read_text()
    facts_part, _, log_part = summary.partition("## Log (log)")
    assert "Van 1 back at" in log_part and "Van 1 back at" not in facts_part, summary
    # each table line stands as a fact of its week, not a line of its log
    assert all(f"{svc} keeps its backups in bucket {bucket}." in facts_part for svc, bucket in BUCKETS.items()), summary
    assert not any(bucket in log_part for bucket in BUCKETS.values()), summary
    settings = load_settings(
        {"memory_dir": str(root), "crew_dir": str(tmp_path / "crew"), "embedder": "none", "watch": "false"},
        environ={},
    )
    async with TestClient(TestServer(create_app(settings))) as client:
        for svc, bucket in BUCKETS.items():
            resp = await client.post(
                "/memory/search", json={"query": f"which bucket does {svc} keep its backups in", "limit": 5}
            )
            body = await resp.json()
            assert resp.status == 200, body
            assert any(bucket in hit["snippet"] for hit in body["results"]), (svc, body["results"])
