"""Health on a constructed journal (each metric against hand-computed values) and the nudges."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from sidecar.episodic import JournalEntry, Nudger, SqliteJournalStore, compute_health, latest_health
from sidecar.episodic.health import metrics
from sidecar.episodic.store import HealthInputs, NewEmbedding, Relation

NOW = datetime(2025, 6, 1, 12, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteJournalStore]:
    opened = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    yield opened
    await opened.aclose()


async def add(store: SqliteJournalStore, kind: str, days_old: float, **kw: object) -> str:
    values: dict[str, object] = {"workspace_id": "w", "agent_id": "a", "summary": f"{kind} entry"}
    values.update(kw)
    entry = JournalEntry(entry_type=kind, ts=NOW - timedelta(days=days_old), **values)  # type: ignore[arg-type]
    return (await store.append(entry)).id


async def constructed(store: SqliteJournalStore) -> dict[str, str]:
    """Four embedded entries with hand-picked unit vectors, one embeddable entry left unindexed,
    non-embeddable noise, one similar edge, and a second workspace that must not count."""
    ids = {
        "e1": await add(store, "peer.escalation", 10, crew_id="c"),
        "e2": await add(store, "peer.escalation", 20, crew_id="c"),
        "e3": await add(store, "summary.generated", 30),
        "e4": await add(store, "approval.denied", 100),
        "e5": await add(store, "peer.escalation", 5),  # embeddable, not indexed
    }
    for _ in range(3):
        await add(store, "exec.output_chunk", 1)
    other = await add(store, "peer.escalation", 400, workspace_id="w2")
    vectors = {"e1": [1, 0, 0], "e2": [0.8, 0.6, 0], "e3": [0, 1, 0], "e4": [0, 0, 1]}
    rows = [NewEmbedding(ids[k], np.array(v, np.float32), "m", 0.9) for k, v in vectors.items()]
    rows.append(NewEmbedding(other, np.array([1, 0, 0], np.float32), "m", 0.9))
    await store.add_embeddings(rows, [Relation(ids["e2"], ids["e1"], "similar", 0.8)], NOW)
    return ids


async def test_health_metrics_match_hand_computed_values(store: SqliteJournalStore) -> None:
    await constructed(store)
    snapshot = await compute_health(store, "w", now=NOW)
    # Ages 10, 20, 30, 100 days: median 25.
    assert snapshot.freshness == pytest.approx(100 * (1 - 25 / 180))
    # 4 of the 5 embeddable entries are indexed; the exec chatter does not count.
    assert snapshot.coverage == pytest.approx(80.0)
    # Pairwise cosines: e1·e2 = 0.8, e2·e3 = 0.6, all others 0. Nearest neighbours 0.8, 0.8, 0.6, 0.
    assert snapshot.coherence == pytest.approx(100 * (0.8 + 0.8 + 0.6 + 0) / 4)
    # K = min(5, 3) = 3 nearest: e1 (0.8+0+0)/3, e2 (0.8+0.6+0)/3, e3 (0.6+0+0)/3, e4 0.
    assert snapshot.efficiency == pytest.approx(100 * (0.8 / 3 + 1.4 / 3 + 0.6 / 3 + 0) / 4)
    # e1 and e2 touch the similar edge: 2 of 4.
    assert snapshot.reachability == pytest.approx(50.0)
    expected = 0.25 * (100 * (1 - 25 / 180)) + 0.25 * 80 + 0.20 * 55 + 0.15 * (100 * 2.8 / 12) + 0.15 * 50
    assert snapshot.score == pytest.approx(expected)
    assert snapshot.band == "yellow" and snapshot.snapshot_date == "2025-06-01"
    assert await latest_health(store, "w") == snapshot


async def test_crew_health_counts_only_the_crew(store: SqliteJournalStore) -> None:
    await constructed(store)
    snapshot = await compute_health(store, "w", "c", now=NOW)
    assert snapshot.crew_id == "c"
    assert snapshot.freshness == pytest.approx(100 * (1 - 15 / 180))
    assert snapshot.coverage == pytest.approx(100.0)
    assert snapshot.coherence == pytest.approx(80.0) and snapshot.efficiency == pytest.approx(80.0)
    assert snapshot.reachability == pytest.approx(100.0)
    assert snapshot.band == "green"
    assert (await latest_health(store, "w", "c")) == snapshot
    assert await latest_health(store, "w") is None  # the aggregate was never computed


async def test_latest_health_reads_without_recomputing_and_keeps_one_row_a_day(store: SqliteJournalStore) -> None:
    assert await latest_health(store, "w") is None
    first = await compute_health(store, "w", now=NOW)
    assert first.band == "red" and first.coverage == 100.0 and first.freshness == 0.0  # empty journal
    await constructed(store)
    assert await latest_health(store, "w") == first  # reading never recomputes
    second = await compute_health(store, "w", now=NOW + timedelta(hours=1))
    assert await latest_health(store, "w") == second != first
    third = await compute_health(store, "w", now=NOW + timedelta(days=1))
    assert (await latest_health(store, "w")) == third and third.snapshot_date == "2025-06-02"


def test_metric_edge_cases() -> None:
    empty = HealthInputs(0, 0, [], np.zeros((0, 0), np.float32), 0)
    assert metrics(empty, NOW) == {
        "freshness": 0.0,
        "coverage": 100.0,
        "coherence": 0.0,
        "efficiency": 0.0,
        "reachability": 0.0,
    }
    one = HealthInputs(2, 1, [NOW - timedelta(days=400)], np.ones((1, 3), np.float32), 0)
    assert metrics(one, NOW) == {
        "freshness": 0.0,
        "coverage": 50.0,
        "coherence": 0.0,
        "efficiency": 0.0,
        "reachability": 0.0,
    }


# -- nudges -------------------------------------------------------------------------------------
async def test_update_nudge_threshold_once_per_session_and_reset(store: SqliteJournalStore) -> None:
    nudger = Nudger(store)
    await add(store, "memory.updated", 2)
    for _ in range(29):
        await add(store, "exec.output_chunk", 1)
    await add(store, "exec.output_chunk", 1, agent_id="someone-else")
    assert await nudger.nudges("w", "a", "s1", NOW) == []
    await add(store, "exec.output_chunk", 1)
    line = (
        "You have 30 new journal entries since your last memory update. Consider summarising what you’ve "
        "learned with summary.generated so future sessions can recall it."
    )
    assert await nudger.nudges("w", "a", "s1", NOW) == [line]
    assert await nudger.nudges("w", "a", "s1", NOW) == []  # once per session
    assert await nudger.nudges("w", "a", "s2", NOW) == [line]  # a new session hears it again
    await add(store, "summary.generated", 0)
    assert await nudger.nudges("w", "a", "s3", NOW) == []  # the summary reset the count
    assert await nudger.nudges("w2", "a", "s4", NOW) == []  # another workspace has its own count


async def test_cost_nudge_over_the_last_24_hours(store: SqliteJournalStore) -> None:
    nudger = Nudger(store)
    await add(store, "llm.call", 0.5, payload={"cost_usd": 0.6, "tokens": 1_200_000})
    await add(store, "llm.call", 0.1, payload={"cost_usd": 0.4, "tokens": 2_200_000})
    await add(store, "llm.call", 2, payload={"cost_usd": 5.0, "tokens": 9_000_000})  # older than 24 h
    await add(store, "llm.call", 0.1, payload={"cost_usd": "lots"})  # not a number: ignored
    assert await nudger.nudges("w", "a", "s1", NOW) == []  # exactly $1.00 does not pass the threshold
    await add(store, "llm.call", 0.1, payload={"tokens": 500})
    await add(store, "llm.call", 0.1, payload={"cost_usd": 0.01})
    line = (
        "Last 24h: 4 calls, 3.4M tokens, $1.01. Watch for runaway loops — the consolidator will "
        "summarise this batch on the next tick."
    )
    assert await nudger.nudges("w", "a", "s1", NOW) == [line]
    assert await nudger.nudges("w", "a", "s1", NOW) == []
    assert await nudger.nudges("w", "a", "s2", NOW, cost_threshold=2.0) == []
