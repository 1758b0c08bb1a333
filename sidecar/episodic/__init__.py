"""Episodic recall over the agent's journal.

Selective embedding of journal entries, an FTS5 mirror, scoped recall (cosine × importance, or
hybrid with BM25 by RRF), importance decay, ``similar``/``supports`` relations, a five-metric
health score, archive compaction and in-session nudges, all behind the :class:`JournalStore`
interface with a SQLite implementation in ``journal.sqlite``.

Each name below is imported from its module when first asked for (``from sidecar.episodic import
hybrid_recall``), not when the package is: a process that needs one module of the journal (consolidation's
child reads entries only) does not import them all. ``recall`` alone is imported
with the package: it is also a module's name, which importing that module binds here first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sidecar.episodic.recall import recall

if TYPE_CHECKING:
    from sidecar.episodic.cli import health_main
    from sidecar.episodic.entry import JournalEntry, StoredEntry
    from sidecar.episodic.health import compute_health, latest_health
    from sidecar.episodic.importance import base_importance, decayed_importance
    from sidecar.episodic.indexer import Indexer, index_new
    from sidecar.episodic.lifecycle import Journal, open_journal, record_memory_updated
    from sidecar.episodic.maintenance import compact, decay_and_reinforce
    from sidecar.episodic.nudges import Nudger
    from sidecar.episodic.query import Query, RecalledEntry, Scope, ScopeFilter
    from sidecar.episodic.recall import hybrid_recall
    from sidecar.episodic.relations import link_supports
    from sidecar.episodic.render import render_injection
    from sidecar.episodic.selection import should_embed, wants_embedding
    from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
    from sidecar.episodic.store import HealthSnapshot, JournalStore

_WHERE = {
    "HealthSnapshot": "store",
    "Indexer": "indexer",
    "JOURNAL_FILE": "sqlite_store",
    "Journal": "lifecycle",
    "JournalEntry": "entry",
    "JournalStore": "store",
    "Nudger": "nudges",
    "Query": "query",
    "RecalledEntry": "query",
    "Scope": "query",
    "ScopeFilter": "query",
    "SqliteJournalStore": "sqlite_store",
    "StoredEntry": "entry",
    "base_importance": "importance",
    "compact": "maintenance",
    "compute_health": "health",
    "decay_and_reinforce": "maintenance",
    "decayed_importance": "importance",
    "health_main": "cli",
    "hybrid_recall": "recall",
    "index_new": "indexer",
    "latest_health": "health",
    "link_supports": "relations",
    "open_journal": "lifecycle",
    "record_memory_updated": "lifecycle",
    "render_injection": "render",
    "should_embed": "selection",
    "wants_embedding": "selection",
}

__all__ = [
    "JOURNAL_FILE",
    "HealthSnapshot",
    "Indexer",
    "Journal",
    "JournalEntry",
    "JournalStore",
    "Nudger",
    "Query",
    "RecalledEntry",
    "Scope",
    "ScopeFilter",
    "SqliteJournalStore",
    "StoredEntry",
    "base_importance",
    "compact",
    "compute_health",
    "decay_and_reinforce",
    "decayed_importance",
    "health_main",
    "hybrid_recall",
    "index_new",
    "latest_health",
    "link_supports",
    "open_journal",
    "recall",
    "record_memory_updated",
    "render_injection",
    "should_embed",
    "wants_embedding",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
