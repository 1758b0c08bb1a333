"""The journal's lifecycle in the app: its store, indexer and nudger under one cleanup_ctx, the
daily maintenance job, and the ``memory.updated`` entry every durable memory write leaves.
Its routes are in sidecar.http.journal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import structlog
from aiohttp import web

from sidecar.episodic.entry import JournalEntry
from sidecar.episodic.health import compute_health
from sidecar.episodic.indexer import DailyJob, Indexer
from sidecar.episodic.maintenance import compact, decay_and_reinforce
from sidecar.episodic.nudges import Nudger
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import JournalStore
from sidecar.keys import EMBEDDER, SETTINGS

if TYPE_CHECKING:
    from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal

__all__ = [
    "CREW_JOURNAL",
    "DEFAULT_WORKSPACE",
    "INDEXER",
    "JOURNAL",
    "JOURNAL_FILE",
    "JOURNAL_MIRROR",
    "NUDGER",
    "daily_job",
    "record_memory_updated",
    "setup_episodic",
]

log = structlog.get_logger(__name__)
#: Workspace of ``memory.updated`` entries written before the agent journaled anything itself.
DEFAULT_WORKSPACE = "default"
JOURNAL: web.AppKey[JournalStore] = web.AppKey("episodic_journal")
INDEXER: web.AppKey[Indexer] = web.AppKey("episodic_indexer")
NUDGER: web.AppKey[Nudger] = web.AppKey("episodic_nudger")
#: On a lead with a server crew store: the copy of the crew's entries into it.
JOURNAL_MIRROR: web.AppKey[CrewJournalMirror] = web.AppKey("episodic_journal_mirror")
#: On a member with a server crew store: the crew's entries there, which its crew recalls read.
CREW_JOURNAL: web.AppKey[PostgresCrewJournal] = web.AppKey("episodic_crew_journal")


def setup_episodic(app: web.Application) -> None:
    """Give ``app`` the journal's cleanup_ctx (store, indexer, nudger); the routes are
    ``sidecar.http.journal.routes``."""
    app.cleanup_ctx.append(_episodic_ctx)


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


async def record_memory_updated(app: web.Application, path: str, tier: str, seq: int) -> str | None:
    """Journal a ``memory.updated`` entry for a change the reindex queue applied to a memory file
    (a write through the sidecar, or an edit made outside it that the watcher saw).

    The entry goes to the workspace and agent of the newest entry the agent journaled (one sidecar
    serves one agent), or to the default workspace with no agent before it has journaled anything;
    it resets the agent's nudge count. Returns the entry id, or None when the
    journal is not running.
    """
    store = app.get(JOURNAL)
    if store is None:
        return None
    entry = JournalEntry(
        workspace_id=DEFAULT_WORKSPACE,
        entry_type="memory.updated",
        summary=f"memory updated: {tier} {path}",
        payload={"path": path, "tier": tier, "seq": seq},
    )
    return (await store.append(entry, as_latest=True)).id


async def _episodic_ctx(app: web.Application) -> AsyncIterator[None]:
    store = await SqliteJournalStore.open(app[SETTINGS].memory_dir / JOURNAL_FILE)
    settings = app[SETTINGS]
    indexer = Indexer(store, app.get(EMBEDDER), daily=daily_job(store, settings.journal_compact_days))
    try:
        app[JOURNAL] = store
        app[INDEXER] = indexer
        app[NUDGER] = Nudger(store)
        await indexer.start()
        log.info("episodic.started", path=str(store.path), embedder=app.get(EMBEDDER) is not None)
        yield
    finally:
        await indexer.stop()
        await store.aclose()
