"""SQL text of the SQLite journal store, and the helpers that build its bound-parameter clauses.

Only constants and ``?`` placeholders are ever spliced into SQL here; every value (user text
included) is a bound parameter, and FTS5 queries are built from individually quoted tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sidecar.clock import to_iso, utcnow
from sidecar.episodic.query import ScopeFilter

__all__ = [
    "ENTRY_COLUMNS",
    "chunks",
    "fts_match",
    "placeholders",
    "scope_clause",
]

ENTRY_COLUMNS = (
    "e.seq, e.id, e.workspace_id, e.crew_id, e.agent_id, e.ts, e.entry_type, e.severity,"
    " e.summary, e.payload, e.refs, e.priority, e.embeddable, e.memory_type, e.level, e.confidence, e.tags,"
    " e.expires_at, e.topic_key, e.namespace, e.status, e.superseded_by, e.importance, e.positive, e.negative,"
    " e.access_count, e.accessed_at"
)
_TOKEN = re.compile(r"\w+")
_MAX_TOKENS = 32
#: A word in more entries than this is no evidence for the BM25 leg of recall: scoring every entry
#: that holds it is what makes a query of common words slow on a large journal (the dense leg still
#: finds by meaning). Below it every word counts, so a small journal is searched as before.
MAX_TERM_DOCS = 5000
TERM_DOCS = "SELECT term, doc FROM journal_entries_vocab WHERE term = ?"

INSERT_ENTRY = """
INSERT INTO journal_entries
    (id, workspace_id, crew_id, agent_id, ts, entry_type, severity, summary, payload, refs, priority, embeddable,
     memory_type, level, confidence, tags, expires_at, topic_key, namespace, importance, access_count)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
BUMP_GENERATION = "UPDATE journal_meta SET value = value + 1 WHERE key = 'generation' RETURNING value"
GENERATION = "SELECT value FROM journal_meta WHERE key = 'generation'"
#: The live entry holding a topic key in a workspace's namespace and scope (a crew's, or '' for
#: the agent's own): at most one, by a unique index.
LIVE_TOPIC = (
    "SELECT id, access_count FROM journal_entries WHERE workspace_id = ? AND namespace = ? AND topic_key = ?"
    " AND COALESCE(crew_id, '') = ? AND (crew_id IS NOT NULL OR COALESCE(agent_id, '') = ?) AND status = 'live'"
)
UPSERT_EMBEDDING = """
INSERT INTO journal_embeddings
    (entry_id, vector, dim, model, indexed_at, importance_score, base_importance, reference_count)
SELECT ?, ?, ?, ?, ?, ?, ?, access_count FROM journal_entries WHERE id = ?
ON CONFLICT (entry_id) DO UPDATE SET
    vector = excluded.vector, dim = excluded.dim, model = excluded.model,
    indexed_at = excluded.indexed_at, importance_score = excluded.importance_score,
    base_importance = excluded.base_importance
"""
UPSERT_RELATION = """
INSERT INTO memory_relations (src_entry_id, dst_entry_id, relation, weight, created_at)
SELECT ?, ?, ?, ?, ?
WHERE EXISTS (SELECT 1 FROM journal_entries WHERE id = ?) AND EXISTS (SELECT 1 FROM journal_entries WHERE id = ?)
ON CONFLICT (src_entry_id, dst_entry_id, relation) DO UPDATE SET weight = excluded.weight
"""
#: Live embeddable entries with no vector (on the partial index journal_entries_unembedded).
UNINDEXED = f"""
SELECT {ENTRY_COLUMNS} FROM journal_entries e
WHERE e.embeddable = 1 AND e.status = 'live' AND e.vector_model IS NULL
ORDER BY e.seq LIMIT ?
"""
#: Whether any vector is of another model than ``?`` (two range scans of journal_embeddings_model).
OTHER_MODEL = "SELECT 1 FROM journal_embeddings WHERE model < ?1 OR model > ?1 LIMIT 1"
#: Live embeddable entries whose vector is of another model: after the model changed.
OTHER_MODEL_ENTRIES = f"""
SELECT {ENTRY_COLUMNS} FROM journal_entries e
WHERE e.embeddable = 1 AND e.status = 'live' AND e.vector_model IS NOT NULL AND e.vector_model != ?
ORDER BY e.seq LIMIT ?
"""
#: One row of a cached vector matrix (see vector_set.VectorRow), live entries only.
VECTOR_ROW = """
SELECT j.entry_id, e.agent_id, e.crew_id, e.namespace, e.memory_type, e.expires_at, j.importance_score,
    j.vector, j.dim
FROM journal_embeddings j JOIN journal_entries e ON e.id = j.entry_id
"""
_LOAD_WHERE = "WHERE e.workspace_id = ? AND j.model = ? AND e.status = 'live'"
LOAD_VECTORS = f"{VECTOR_ROW} {_LOAD_WHERE} ORDER BY e.seq"
COUNT_VECTORS = f"SELECT COUNT(*) FROM journal_embeddings j JOIN journal_entries e ON e.id = j.entry_id {_LOAD_WHERE}"
# What compaction may archive by age: journal events (not priority permanent), and typed memories
# only once they are no longer served (superseded or retired); a live memory expires instead.
_COMPACTABLE = "ts < ? AND COALESCE(priority, '') != 'permanent' AND (memory_type IS NULL OR status != 'live')"
ARCHIVE_COLUMNS = (
    "id, workspace_id, crew_id, agent_id, ts, entry_type, severity, summary, payload, archived_at, reason,"
    " memory_type, topic_key, namespace"
)
#: Copy entries into the archive: (payload chars, archived_at, reason) then the WHERE's parameters.
ARCHIVE_WHERE = f"""
INSERT OR REPLACE INTO journal_entries_archived ({ARCHIVE_COLUMNS})
SELECT id, workspace_id, crew_id, agent_id, ts, entry_type, severity, summary, substr(payload, 1, ?), ?, ?,
    memory_type, topic_key, namespace
FROM journal_entries WHERE {{where}}
"""
ARCHIVE = ARCHIVE_WHERE.format(where=_COMPACTABLE)
# The newest entry the agent wrote itself; index journal_entries_own (migration 2) holds just those.
LATEST_IDENTITY = (
    "SELECT workspace_id, agent_id FROM journal_entries WHERE entry_type != 'memory.updated' ORDER BY seq DESC LIMIT 1"
)
DELETE_ARCHIVED = f"DELETE FROM journal_entries WHERE {_COMPACTABLE}"
EXPIRED = "expires_at IS NOT NULL AND expires_at <= ?"
COST = """
SELECT COUNT(*), COALESCE(SUM(tokens), 0), COALESCE(SUM(cost), 0.0) FROM (
    SELECT
        CASE WHEN json_type(payload, '$.cost_usd') IN ('integer', 'real')
             THEN json_extract(payload, '$.cost_usd') END AS cost,
        CASE WHEN json_type(payload, '$.tokens') IN ('integer', 'real')
             THEN json_extract(payload, '$.tokens') END AS tokens
    FROM journal_entries WHERE workspace_id = ? AND agent_id = ? AND ts >= ?
) WHERE cost IS NOT NULL OR tokens IS NOT NULL
"""
DOMINANT_MODEL = """
SELECT j.model FROM journal_embeddings j JOIN journal_entries e ON e.id = j.entry_id
WHERE {scope} GROUP BY j.model ORDER BY COUNT(*) DESC, j.model LIMIT 1
"""
HEALTH_ROWS = """
SELECT e.ts, j.vector, j.dim,
    EXISTS (SELECT 1 FROM memory_relations r WHERE r.src_entry_id = e.id OR r.dst_entry_id = e.id)
FROM journal_embeddings j JOIN journal_entries e ON e.id = j.entry_id
WHERE {scope} AND e.embeddable = 1 AND j.model = ?
ORDER BY e.seq
"""
SAVE_HEALTH = """
INSERT OR REPLACE INTO memory_health_snapshots
    (workspace_id, crew_id, snapshot_date, freshness, coverage, coherence, efficiency, reachability, score)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
HEALTH_HISTORY = """
SELECT workspace_id, crew_id, snapshot_date, freshness, coverage, coherence, efficiency, reachability, score
FROM memory_health_snapshots WHERE workspace_id = ? AND crew_id = ?
ORDER BY snapshot_date DESC LIMIT ?
"""
LATEST_HEALTH = """
SELECT workspace_id, crew_id, snapshot_date, freshness, coverage, coherence, efficiency, reachability, score
FROM memory_health_snapshots WHERE workspace_id = ? AND crew_id = ?
ORDER BY snapshot_date DESC LIMIT 1
"""


def placeholders(count: int) -> str:
    """``?, ?, ?`` for ``count`` bound values (never user text)."""
    return ", ".join("?" * count)


def scope_clause(where: ScopeFilter) -> tuple[str, list[object]]:
    """The WHERE fragment (over alias ``e``) and parameters for a scope: always the workspace, and
    only entries that are served (live, not expired)."""
    sql = "e.workspace_id = ? AND e.status = 'live' AND (e.expires_at IS NULL OR e.expires_at > ?)"
    params: list[object] = [where.workspace_id, to_iso(where.now or utcnow())]
    if where.namespace is not None:
        sql += " AND e.namespace = ?"
        params.append(where.namespace)
    if where.memory_types is not None:
        sql += f" AND e.memory_type IN ({placeholders(len(where.memory_types))})"
        params += list(where.memory_types)
    own = "(e.agent_id = ? AND e.crew_id IS NULL)" if where.private else "e.agent_id = ?"
    if where.crew_id is not None and where.agent_id is not None:
        sql += f" AND (e.crew_id = ? OR {own})"
        params += [where.crew_id, where.agent_id]
    elif where.crew_id is not None:
        sql += " AND e.crew_id = ?"
        params.append(where.crew_id)
    elif where.agent_id is not None:
        sql += f" AND {own}"
        params.append(where.agent_id)
    return sql, params


def tokens(text: str) -> list[str]:
    """The words of ``text`` as the journal's FTS5 index holds them (case-folded), at most 32."""
    return [t.lower() for t in _TOKEN.findall(text)[:_MAX_TOKENS]]


def fts_match(text: str, *, any_token: bool) -> str | None:
    """An FTS5 MATCH expression with every word double-quoted (so no FTS5 syntax gets through).

    Words are joined by AND (journal search) or OR (the BM25 leg of recall, where BM25 then favours
    entries matching more of them). None when the text holds no word at all.
    """
    tokens = _TOKEN.findall(text)[:_MAX_TOKENS]
    if not tokens:
        return None
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    return (" OR " if any_token else " AND ").join(quoted)


def chunks(values: Sequence[str], size: int = 500) -> list[Sequence[str]]:
    """Split an id list so an ``IN (...)`` stays under SQLite's bound-parameter limit."""
    return [values[i : i + size] for i in range(0, len(values), size)]
