"""The journal's lifecycle: its store, indexer and nudger opened together (``open_journal``, which
the composition root enters), the daily maintenance job, and the ``memory.updated`` entry every
durable memory write leaves. Its operations are in sidecar.ops.journal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from sidecar.episodic.entry import JournalEntry
from sidecar.episodic.health import compute_health
from sidecar.episodic.indexer import DailyJob, Indexer
from sidecar.episodic.maintenance import compact, decay_and_reinforce
from sidecar.episodic.nudges import Nudger
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import JournalStore
from sidecar.retrieval.embed.base import Embedder
from sidecar.settings import Settings

__all__ = ["DEFAULT_WORKSPACE", "JOURNAL_FILE", "Journal", "daily_job", "open_journal", "record_memory_updated"]

log = structlog.get_logger(__name__)
#: Workspace of ``memory.updated`` entries written before the agent journaled anything itself.
DEFAULT_WORKSPACE = "default"


@dataclass(frozen=True, slots=True)
class Journal:
    """The journal, open: its store, the indexer that embeds its entries and runs the daily job,
    and the nudger."""

    store: JournalStore
    indexer: Indexer
    nudger: Nudger


@asynccontextmanager
async def open_journal(settings: Settings, embedder: Embedder | None) -> AsyncIterator[Journal]:
    """The journal in the agent dir, its indexer started; stopped and closed on exit."""
    store = await SqliteJournalStore.open(settings.memory_dir / JOURNAL_FILE)
    try:
        indexer = Indexer(store, embedder, daily=daily_job(store, settings.journal_compact_days))
        try:
            await indexer.start()
            log.info("episodic.started", path=str(store.path), embedder=embedder is not None)
            yield Journal(store, indexer, Nudger(store))
        finally:
            await indexer.stop()
    finally:
        await store.aclose()


def daily_job(store: JournalStore, compact_days: float = 0.0) -> DailyJob:
    """The journal's maintenance, run by the Indexer at start and then daily: expired entries are
    archived, old events compacted (``compact_days``, 0 = never), importance decayed and
    reinforced, and a health snapshot taken of every workspace."""

    async def run(now: datetime) -> None:
        expired = await store.prune_expired(now)
        if expired:
            log.info("episodic.pruned_expired", entries=len(expired))
        if compact_days > 0:
            await compact(store, timedelta(days=compact_days), now)
        await decay_and_reinforce(store, now)
        for workspace_id in await store.workspaces():
            await compute_health(store, workspace_id, None, now)

    return run


async def record_memory_updated(store: JournalStore, path: str, tier: str, seq: int) -> str:
    """Journal a ``memory.updated`` entry for a change the reindex queue applied to a memory file
    (a write through the sidecar, or an edit made outside it that the watcher saw).

    The entry goes to the workspace and agent of the newest entry the agent journaled (one sidecar
    serves one agent), or to the default workspace with no agent before it has journaled anything;
    it resets the agent's nudge count. Returns the entry id.
    """
    entry = JournalEntry(
        workspace_id=DEFAULT_WORKSPACE,
        entry_type="memory.updated",
        summary=f"memory updated: {tier} {path}",
        payload={"path": path, "tier": tier, "seq": seq},
    )
    return await store.record(entry, as_latest=True)
