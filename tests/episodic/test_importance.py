"""Importance: the baseline table, the decay-and-reinforce formula, and its effect on recall."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidecar.episodic import (
    JournalEntry,
    Query,
    SqliteJournalStore,
    base_importance,
    decay_and_reinforce,
    decayed_importance,
    index_new,
    recall,
)
from sidecar.episodic.importance import recency_factor, reference_boost
from sidecar.retrieval.embed import OnnxEmbedder

T0 = datetime(2025, 1, 1, tzinfo=UTC)
TEXT = "Checkout service OOM killed in production"


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteJournalStore]:
    opened = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    yield opened
    await opened.aclose()


@pytest.fixture(scope="module")
def embedder(onnx_model: OnnxEmbedder) -> OnnxEmbedder:
    """The worker's model (``onnx_model``, skipped without the [embed] extra): these tests only embed with it."""
    return onnx_model


@pytest.mark.parametrize(
    ("entry_type", "severity", "priority", "expected"),
    [
        ("peer.escalation", "info", None, 0.9),
        ("eval.regression_detected", "info", None, 0.9),
        ("approval.denied", "info", None, 0.8),
        ("summary.generated", "info", None, 0.7),
        ("keeper.decision", "warn", None, 0.65),
        ("keeper.decision", "error", None, 0.8),
        ("ops.note", "info", None, 0.5),
        ("ops.note", "info", "normal", 0.5),
        ("ops.note", "info", "pin", 0.80),
        ("ops.note", "info", "high", 0.85),
        ("ops.note", "debug", "permanent", 0.95),
        ("peer.escalation", "info", "pin", 0.9),  # a floor never lowers
    ],
)
def test_base_importance(entry_type: str, severity: str, priority: str | None, expected: float) -> None:
    assert base_importance(entry_type, severity, priority) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("base", "days", "refs", "expected"),
    [
        (0.9, 0, 0, 0.9),
        (0.5, 90, 0, 0.25),  # half way to the horizon
        (0.5, 162, 0, 0.05),  # 1 - 162/180 = 0.1, exactly the floor
        (0.5, 400, 0, 0.05),  # floored, never zero
        (0.5, 0, 1, 0.5 * 1.125),  # log2(2) / 8
        (0.5, 0, 3, 0.5 * 1.25),  # log2(4) / 8
        (0.9, 180, 26, 0.9 * 0.1 * (1 + math.log2(27) / 8)),
        (0.8, 45, 7, 0.8 * 0.75 * 1.375),
    ],
)
def test_decay_formula(base: float, days: float, refs: int, expected: float) -> None:
    assert decayed_importance(base, days, refs) == pytest.approx(expected)
    assert recency_factor(days) == pytest.approx(max(0.1, 1 - days / 180))
    assert reference_boost(refs) == pytest.approx(math.log2(refs + 1))


async def test_six_month_old_escalation_recalled_weekly_outranks_stale_info(
    store: SqliteJournalStore, embedder: OnnxEmbedder
) -> None:
    async def add(kind: str, ts: datetime, **kw: object) -> str:
        entry = JournalEntry(workspace_id="w", agent_id="a", entry_type=kind, summary=TEXT, ts=ts, **kw)  # type: ignore[arg-type]
        return (await store.append(entry)).id

    escalation = await add("peer.escalation", T0)
    await index_new(store, embedder, now=T0)
    unrecalled = await add("peer.escalation", T0)
    await index_new(store, embedder, now=T0)
    stale = await add("ops.note", T0 + timedelta(days=32), refs={"episodic": True})  # info, base 0.5
    await index_new(store, embedder, now=T0 + timedelta(days=32))
    for week in range(26):  # recalled once a week, as a prompt injection would
        await store.mark_referenced("w", [escalation], T0 + timedelta(weeks=week + 1))

    now = T0 + timedelta(days=182)
    assert await decay_and_reinforce(store, now) == 3
    hits = await recall(store, embedder, Query("w", TEXT, agent_id="a", k=3), now=now)
    scores = {r.entry_id: r for r in await store.importance_rows()}
    importance = {h.entry_id: h.importance for h in hits}
    assert importance[escalation] == pytest.approx(0.9 * 0.1 * (1 + math.log2(27) / 8))
    assert importance[unrecalled] == pytest.approx(0.9 * 0.1)
    assert importance[stale] == pytest.approx(0.5 * (1 - 150 / 180))
    assert scores[escalation].reference_count == 26 + 1  # this recall counted too
    assert [h.entry_id for h in hits] == [escalation, unrecalled, stale]
