"""Jobs over the whole journal: decay-and-reinforce of importance, and compaction into the archive."""

from __future__ import annotations

from datetime import datetime, timedelta

import structlog

from sidecar.clock import age_days, utcnow
from sidecar.episodic.importance import decayed_importance
from sidecar.episodic.store import JournalStore
from sidecar.errors import BadRequest

__all__ = ["compact", "decay_and_reinforce"]

log = structlog.get_logger(__name__)


async def decay_and_reinforce(store: JournalStore, now: datetime | None = None) -> int:
    """Recompute every embedding's importance from its base, age since indexing and reference count.

    Idempotent for a given ``now`` (it never compounds), so running it more than nightly is harmless.
    Returns the number of rows updated.
    """
    now = now or utcnow()
    rows = await store.importance_rows()
    scores = [
        (r.entry_id, decayed_importance(r.base_importance, age_days(r.indexed_at, now), r.reference_count))
        for r in rows
    ]
    await store.set_importance(scores)
    log.info("episodic.decayed", rows=len(scores))
    return len(scores)


async def compact(store: JournalStore, older_than: timedelta, now: datetime | None = None) -> int:
    """Move entries older than ``older_than`` into the archive (payload cut to 400 characters) and
    delete them from the journal; their embeddings, relations and FTS rows go with them."""
    if older_than <= timedelta(0):
        raise BadRequest("compact: older_than must be positive", code="invalid_older_than")
    now = now or utcnow()
    moved = await store.compact(now - older_than, now)
    log.info("episodic.compacted", entries=moved, older_than_days=older_than.total_seconds() / 86400)
    return moved
