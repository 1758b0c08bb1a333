"""Episodic recall over the agent's journal.

Selective embedding of journal entries, an FTS5 mirror, scoped recall (cosine × importance, or
hybrid with BM25 by RRF), importance decay, ``similar``/``supports`` relations, a five-metric
health score, archive compaction and in-session nudges, all behind the :class:`JournalStore`
interface with a SQLite implementation in ``journal.sqlite``.
"""

from __future__ import annotations

from sidecar.episodic.cli import health_main
from sidecar.episodic.entry import JournalEntry, StoredEntry
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.importance import base_importance, decayed_importance
from sidecar.episodic.indexer import Indexer, index_new
from sidecar.episodic.lifecycle import Journal, open_journal, record_memory_updated
from sidecar.episodic.maintenance import compact, decay_and_reinforce
from sidecar.episodic.nudges import Nudger
from sidecar.episodic.query import Query, RecalledEntry, Scope, ScopeFilter
from sidecar.episodic.recall import hybrid_recall, recall
from sidecar.episodic.relations import link_supports
from sidecar.episodic.render import render_injection
from sidecar.episodic.selection import should_embed, wants_embedding
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import HealthSnapshot, JournalStore

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
