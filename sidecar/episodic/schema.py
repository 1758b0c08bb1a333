"""The journal database's schema: its numbered migrations (applied by :class:`sidecar.db.Database`).

``journal_entries`` keys rows by an INTEGER ``seq`` (stable across VACUUM, unlike an implicit
rowid) that the FTS5 external-content mirror uses as its rowid; triggers keep the mirror in
lockstep (an update only when it changes a column the mirror holds). ``memory_health_snapshots.crew_id`` is ``''`` for the workspace aggregate rather than
NULL, because NULLs would not collide in the primary key and a day could get two aggregates.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[str, ...] = (
    # 1: journal, FTS5 mirror, embeddings, archive, relations, health snapshots.
    """
    CREATE TABLE journal_entries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        workspace_id TEXT NOT NULL,
        crew_id TEXT,
        agent_id TEXT,
        ts TEXT NOT NULL,
        entry_type TEXT NOT NULL,
        severity TEXT NOT NULL,
        summary TEXT NOT NULL,
        payload TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
        refs TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(refs)),
        priority TEXT,
        embeddable INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX journal_entries_agent ON journal_entries(workspace_id, agent_id, seq);
    CREATE INDEX journal_entries_crew ON journal_entries(workspace_id, crew_id, seq);
    CREATE INDEX journal_entries_ts ON journal_entries(ts);
    CREATE INDEX journal_entries_embeddable ON journal_entries(seq) WHERE embeddable = 1;
    CREATE VIRTUAL TABLE journal_entries_fts USING fts5(
        summary, payload, content='journal_entries', content_rowid='seq'
    );
    CREATE TRIGGER journal_entries_ai AFTER INSERT ON journal_entries BEGIN
        INSERT INTO journal_entries_fts(rowid, summary, payload) VALUES (new.seq, new.summary, new.payload);
    END;
    CREATE TRIGGER journal_entries_ad AFTER DELETE ON journal_entries BEGIN
        INSERT INTO journal_entries_fts(journal_entries_fts, rowid, summary, payload)
        VALUES ('delete', old.seq, old.summary, old.payload);
    END;
    CREATE TRIGGER journal_entries_au AFTER UPDATE ON journal_entries BEGIN
        INSERT INTO journal_entries_fts(journal_entries_fts, rowid, summary, payload)
        VALUES ('delete', old.seq, old.summary, old.payload);
        INSERT INTO journal_entries_fts(rowid, summary, payload) VALUES (new.seq, new.summary, new.payload);
    END;
    CREATE TABLE journal_embeddings (
        entry_id TEXT PRIMARY KEY REFERENCES journal_entries(id) ON DELETE CASCADE,
        vector BLOB NOT NULL,
        dim INTEGER NOT NULL,
        model TEXT NOT NULL,
        indexed_at TEXT NOT NULL,
        importance_score REAL NOT NULL DEFAULT 0.5,
        base_importance REAL NOT NULL DEFAULT 0.5,
        reference_count INTEGER NOT NULL DEFAULT 0,
        last_referenced_at TEXT
    );
    CREATE INDEX journal_embeddings_model ON journal_embeddings(model);
    CREATE TABLE journal_entries_archived (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        crew_id TEXT,
        agent_id TEXT,
        ts TEXT NOT NULL,
        entry_type TEXT NOT NULL,
        severity TEXT NOT NULL,
        summary TEXT NOT NULL,
        payload TEXT NOT NULL,
        archived_at TEXT NOT NULL
    );
    CREATE TABLE memory_relations (
        src_entry_id TEXT NOT NULL REFERENCES journal_entries(id) ON DELETE CASCADE,
        dst_entry_id TEXT NOT NULL REFERENCES journal_entries(id) ON DELETE CASCADE,
        relation TEXT NOT NULL CHECK (relation IN ('similar', 'supports', 'contradicts')),
        weight REAL NOT NULL DEFAULT 0.0,
        created_at TEXT NOT NULL,
        PRIMARY KEY (src_entry_id, dst_entry_id, relation)
    );
    CREATE INDEX memory_relations_dst ON memory_relations(dst_entry_id, relation);
    CREATE TABLE memory_health_snapshots (
        workspace_id TEXT NOT NULL,
        crew_id TEXT NOT NULL DEFAULT '',
        snapshot_date TEXT NOT NULL,
        freshness REAL NOT NULL,
        coverage REAL NOT NULL,
        coherence REAL NOT NULL,
        efficiency REAL NOT NULL,
        reachability REAL NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (workspace_id, crew_id, snapshot_date)
    );
    """,
    # 2: the newest entry the agent wrote itself (latest_identity, asked on every memory write)
    # without walking back over every memory.updated entry the sidecar journaled since.
    """
    CREATE INDEX journal_entries_own ON journal_entries(seq) WHERE entry_type != 'memory.updated';
    """,
    # 3: typed memories in the same journal: type, numeric priority, confidence, tags,
    # expiry, topic key and namespace; the live/superseded/retired status with its history link;
    # the importance seed feedback moves; access counts for activation scoring; a generation
    # counter every change to what recall serves bumps, so a cached vector matrix knows it is stale
    # (also when another process, the CLI, wrote); the model of its stored vector, so the entries the
    # indexer still has to embed are found on a partial index, not by reading the whole journal;
    # the FTS5 vocabulary, whose document counts tell recall which words are too common to score. A topic key is unique among live entries per
    # workspace, namespace and scope (the agent's own, or a crew's). Existing rows become live journal events in the
    # default namespace.
    """
    ALTER TABLE journal_entries ADD COLUMN memory_type TEXT;
    ALTER TABLE journal_entries ADD COLUMN level INTEGER;
    ALTER TABLE journal_entries ADD COLUMN confidence REAL NOT NULL DEFAULT 1.0;
    ALTER TABLE journal_entries ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE journal_entries ADD COLUMN expires_at TEXT;
    ALTER TABLE journal_entries ADD COLUMN topic_key TEXT;
    ALTER TABLE journal_entries ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE journal_entries ADD COLUMN status TEXT NOT NULL DEFAULT 'live';
    ALTER TABLE journal_entries ADD COLUMN superseded_by TEXT;
    ALTER TABLE journal_entries ADD COLUMN importance REAL;
    ALTER TABLE journal_entries ADD COLUMN positive INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE journal_entries ADD COLUMN negative INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE journal_entries ADD COLUMN access_count INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE journal_entries ADD COLUMN accessed_at TEXT;
    ALTER TABLE journal_entries ADD COLUMN vector_model TEXT;
    UPDATE journal_entries SET vector_model = (SELECT model FROM journal_embeddings WHERE entry_id = id);
    CREATE INDEX journal_entries_unembedded ON journal_entries(seq)
        WHERE embeddable = 1 AND status = 'live' AND vector_model IS NULL;
    CREATE UNIQUE INDEX journal_entries_topic
        ON journal_entries(workspace_id, namespace, COALESCE(crew_id, ''), topic_key)
        WHERE topic_key IS NOT NULL AND status = 'live';
    CREATE INDEX journal_entries_topic_history ON journal_entries(workspace_id, namespace, topic_key, seq)
        WHERE topic_key IS NOT NULL;
    CREATE INDEX journal_entries_expiry ON journal_entries(expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX journal_entries_memories ON journal_entries(workspace_id, namespace, seq)
        WHERE memory_type IS NOT NULL;
    ALTER TABLE journal_entries_archived ADD COLUMN reason TEXT NOT NULL DEFAULT 'compacted';
    ALTER TABLE journal_entries_archived ADD COLUMN memory_type TEXT;
    ALTER TABLE journal_entries_archived ADD COLUMN topic_key TEXT;
    ALTER TABLE journal_entries_archived ADD COLUMN namespace TEXT NOT NULL DEFAULT 'default';
    CREATE VIRTUAL TABLE journal_entries_vocab USING fts5vocab(journal_entries_fts, 'row');
    CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    INSERT INTO journal_meta (key, value) VALUES ('generation', 0);
    """,
    # 4: a topic key outside a crew is one agent's own: two agents of a workspace may each hold a
    # live memory under the same key (a crew's key stays one for the whole crew).
    """
    DROP INDEX journal_entries_topic;
    CREATE UNIQUE INDEX journal_entries_topic
        ON journal_entries(
            workspace_id, namespace, COALESCE(crew_id, ''), CASE WHEN crew_id IS NULL THEN COALESCE(agent_id, '') ELSE '' END, topic_key
        )
        WHERE topic_key IS NOT NULL AND status = 'live';
    """,
    # 5: the entries a newer one superseded, by that one (the knowledge graph ends their facts
    # once it has read the newer one).
    """
    CREATE INDEX journal_entries_superseded_by ON journal_entries(superseded_by) WHERE superseded_by IS NOT NULL;
    """,
    # 6: the FTS5 mirror is rewritten only when a column it holds (summary, payload) changes: not
    # when a recall marks its hits, a feedback moves importance or the indexer stores a vector, each
    # of which rewrote the rows' postings into new segments for the mirror to merge later.
    """
    DROP TRIGGER journal_entries_au;
    CREATE TRIGGER journal_entries_au AFTER UPDATE OF summary, payload ON journal_entries BEGIN
        INSERT INTO journal_entries_fts(journal_entries_fts, rowid, summary, payload)
        VALUES ('delete', old.seq, old.summary, old.payload);
        INSERT INTO journal_entries_fts(rowid, summary, payload) VALUES (new.seq, new.summary, new.payload);
    END;
    """,
)
