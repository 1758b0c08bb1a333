"""The PostgreSQL store's schema: numbered migrations, recorded in ``store_migrations`` and
applied by the writers alone (the lead when it first connects, and ``store migrate``) under an
advisory lock (a lead and a ``store migrate`` may start at once; one applies them, the other finds
them applied). Members only read the store, with a role that may not change its schema: they
check its version (``schema_version``) and wait for the lead.

Every table is keyed by crew, so one database can hold several crews. Chunk vectors sit in the
chunk rows; their column has no fixed width (a crew may change models), so each width gets its own
partial HNSW index over the column cast to that width (``hnsw_index``), made when the first vector
of that width arrives.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FILE_DIGEST", "LOCK_KEY", "MIGRATIONS", "hnsw_index", "migrate", "schema_version"]

#: pg_advisory_xact_lock key of the migrations ("mscrew" in ASCII).
LOCK_KEY = 0x6D7363726577

#: What the lead wrote of one file (the ``crew_files`` row ``f``), hashed in the database: its
#: bytes, its flagged sections, and each chunk's text, tsvector, place, hash and vectors (the
#: chunk's and its sentences', with the model) in file order. The lead sets ``written`` to it in
#: the transaction that writes the file or its vectors, and its compare recomputes it: a row
#: changed in the database by anyone else no longer matches, and the lead sends the file again.
#: (Changing this expression needs a migration that recomputes ``written``.)
FILE_DIGEST = (
    "md5(coalesce(md5(f.content), '-') || '|' || f.flags::text || '|' || coalesce(("
    "SELECT string_agg(concat_ws(':', c.ord, c.line_start, c.line_end, c.hash, c.plain, md5(c.heading), "
    "md5(c.body), md5(c.tsv::text), coalesce(c.model, '-'), coalesce(md5(c.embedding::text), '-'), "
    "coalesce(md5(c.sentences), '-')), ',' ORDER BY c.ord) FROM crew_chunks c "
    "WHERE c.crew = f.crew AND c.path = f.path), ''))"
)
#: ``FILE_DIGEST`` before it covered the vectors (migration 8 computed it).
_FILE_DIGEST_8 = (
    "md5(coalesce(md5(f.content), '-') || '|' || f.flags::text || '|' || coalesce(("
    "SELECT string_agg(concat_ws(':', c.ord, c.line_start, c.line_end, c.hash, c.plain, md5(c.heading), "
    "md5(c.body), md5(c.tsv::text)), ',' ORDER BY c.ord) FROM crew_chunks c "
    "WHERE c.crew = f.crew AND c.path = f.path), ''))"
)

MIGRATIONS: tuple[str, ...] = (
    # 1: files, chunks (tsvector of heading (weight A) and body (weight B), GIN-indexed), vectors
    # beside them, the sequence of the lead's writes the store holds, and an OR aggregate of
    # tsqueries (user words are OR-ed, as FTS5 queries are).
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE crew_files (
        crew TEXT NOT NULL,
        path TEXT NOT NULL,
        hash TEXT NOT NULL,
        size BIGINT NOT NULL,
        indexed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        PRIMARY KEY (crew, path)
    );
    CREATE TABLE crew_chunks (
        id BIGSERIAL PRIMARY KEY,
        crew TEXT NOT NULL,
        path TEXT NOT NULL,
        ord INTEGER NOT NULL,
        heading TEXT NOT NULL,
        body TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        hash TEXT NOT NULL,
        plain BOOLEAN NOT NULL,
        tsv TSVECTOR NOT NULL,
        model TEXT,
        dim INTEGER,
        embedding VECTOR,
        sentences BYTEA,
        FOREIGN KEY (crew, path) REFERENCES crew_files (crew, path) ON DELETE CASCADE
    );
    CREATE INDEX crew_chunks_tsv ON crew_chunks USING gin (tsv);
    CREATE INDEX crew_chunks_path ON crew_chunks (crew, path, ord);
    CREATE INDEX crew_chunks_hash ON crew_chunks (crew, hash);
    CREATE TABLE crew_state (
        crew TEXT PRIMARY KEY,
        seq BIGINT NOT NULL DEFAULT 0,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE AGGREGATE crew_tsquery_any (tsquery) (SFUNC = tsquery_or, STYPE = tsquery);
    """,
    # 2: the injection scanner's flagged sections of each file (as the answers show them), judged
    # on the lead, so a member marks crew hits as the lead's own crew search does.
    """
    ALTER TABLE crew_files ADD COLUMN flags JSONB NOT NULL DEFAULT '[]';
    """,
    # 3: each file's bytes, so a member on another host keeps a copy of the crew's files (its
    # memory block reads them), and a version every change of the files moves, which it watches.
    """
    ALTER TABLE crew_files ADD COLUMN content BYTEA;
    ALTER TABLE crew_state ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
    """,
    # 4: the crew's journal entries (its typed memories), as the lead's journal holds them: the
    # entry itself (JSON), the columns recall filters on, a tsvector of summary and payload
    # ('simple': the journal's own index neither stems nor drops stopwords), its vector under one
    # model, the importance recall weighs by, access counts members' recalls move, and the
    # fingerprint the lead's mirror compares.
    """
    CREATE TABLE crew_journal (
        crew TEXT NOT NULL,
        id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        workspace_id TEXT NOT NULL,
        agent_id TEXT,
        namespace TEXT NOT NULL,
        memory_type TEXT,
        status TEXT NOT NULL,
        expires_at TIMESTAMPTZ,
        embeddable BOOLEAN NOT NULL,
        entry JSONB NOT NULL,
        tsv TSVECTOR NOT NULL,
        model TEXT,
        embedding VECTOR,
        importance REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        accessed_at TIMESTAMPTZ,
        fingerprint TEXT NOT NULL,
        PRIMARY KEY (crew, id)
    );
    CREATE INDEX crew_journal_tsv ON crew_journal USING gin (tsv);
    CREATE INDEX crew_journal_served ON crew_journal (crew, workspace_id, namespace) WHERE status = 'live';
    """,
    # 5: the crew's knowledge graph, copied by the lead from its kg.sqlite with its ids (kg.pg_mirror):
    # entities, aliases (pos: the order the lead learnt them), facts with their validity windows.
    # Text compared or ordered by is COLLATE "C", the byte order SQLite compares in.
    """
    CREATE TABLE crew_kg_entities (
        crew TEXT NOT NULL,
        id BIGINT NOT NULL,
        workspace_id TEXT NOT NULL,
        key TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        type TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (crew, id)
    );
    CREATE TABLE crew_kg_aliases (
        crew TEXT NOT NULL,
        workspace_id TEXT NOT NULL,
        alias TEXT COLLATE "C" NOT NULL,
        entity_id BIGINT NOT NULL,
        pos BIGINT NOT NULL,
        PRIMARY KEY (crew, workspace_id, alias)
    );
    CREATE INDEX crew_kg_aliases_entity ON crew_kg_aliases (crew, entity_id, pos);
    CREATE TABLE crew_kg_facts (
        crew TEXT NOT NULL,
        id BIGINT NOT NULL,
        workspace_id TEXT NOT NULL,
        subject_id BIGINT NOT NULL,
        predicate TEXT COLLATE "C" NOT NULL,
        object_id BIGINT NOT NULL,
        valid_from TEXT COLLATE "C" NOT NULL,
        valid_to TEXT COLLATE "C",
        confidence DOUBLE PRECISION NOT NULL,
        source TEXT COLLATE "C" NOT NULL,
        room TEXT COLLATE "C" NOT NULL,
        text TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        invalidated_by BIGINT,
        PRIMARY KEY (crew, id)
    );
    CREATE INDEX crew_kg_facts_subject ON crew_kg_facts (crew, workspace_id, subject_id, predicate, valid_from);
    CREATE INDEX crew_kg_facts_object ON crew_kg_facts (crew, workspace_id, object_id, valid_from);
    CREATE INDEX crew_kg_facts_room ON crew_kg_facts (crew, workspace_id, room);
    """,
    # 6: a crew memory's vector stays in its row (MAIN: inline unless the row cannot hold it
    # otherwise): recall reads the vectors of every served entry, and fetching each from the TOAST
    # table tripled its cost.
    """
    ALTER TABLE crew_journal ALTER COLUMN embedding SET STORAGE MAIN;
    """,
    # 7: how many chunks hold each word (lexeme) and how many chunks the crew has, kept by every
    # change of the chunks in the same transaction: the keyword leg's IDF reads them instead of
    # counting a word's chunks in the GIN index, which walks the word's whole posting list (half a
    # second for a common word at a million chunks). Filled here from the chunks already stored.
    """
    CREATE TABLE crew_words (
        crew TEXT NOT NULL,
        word TEXT NOT NULL,
        ndoc BIGINT NOT NULL,
        PRIMARY KEY (crew, word)
    );
    ALTER TABLE crew_state ADD COLUMN chunks BIGINT NOT NULL DEFAULT 0;
    INSERT INTO crew_words (crew, word, ndoc)
        SELECT c.crew, l.lexeme, count(*) FROM crew_chunks c, unnest(c.tsv) l GROUP BY c.crew, l.lexeme;
    INSERT INTO crew_state (crew, chunks) SELECT crew, count(*) FROM crew_chunks GROUP BY crew
        ON CONFLICT (crew) DO UPDATE SET chunks = excluded.chunks;
    """,
    # 8: the digest of what the lead wrote of each file (``FILE_DIGEST``; the rows already here are
    # taken as written), and what the lead's copies had to leave out (rows whose text the database
    # cannot hold), by kind, for the status.
    f"""
    ALTER TABLE crew_files ADD COLUMN written TEXT;
    UPDATE crew_files f SET written = {_FILE_DIGEST_8};
    ALTER TABLE crew_state ADD COLUMN skipped JSONB NOT NULL DEFAULT '{{}}';
    """,
    # 9: the digest covers the chunks' vectors too (``FILE_DIGEST``): recomputed for the rows here,
    # those whose text no longer matched what the lead wrote left unmatched, so they are sent again.
    f"""
    UPDATE crew_files f SET written = CASE WHEN f.written IS NOT DISTINCT FROM {_FILE_DIGEST_8} THEN {FILE_DIGEST} END;
    """,
)


async def schema_version(conn: Any) -> int:
    """The store's schema version (0: never migrated)."""
    exists = await conn.fetchval("SELECT to_regclass('store_migrations') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM store_migrations"))


def hnsw_index(dim: int) -> str:
    """The statement making the HNSW (cosine) index for vectors of width ``dim``."""
    width = int(dim)  # an int the store computed, never client text
    return (
        f"CREATE INDEX IF NOT EXISTS crew_chunks_hnsw_{width} ON crew_chunks "
        f"USING hnsw ((embedding::vector({width})) vector_cosine_ops) WHERE dim = {width}"
    )


async def migrate(conn: Any, migrations: tuple[str, ...] = MIGRATIONS) -> int:
    """Apply every migration not yet recorded, each in its own transaction; return the version."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK_KEY)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS store_migrations (version INTEGER PRIMARY KEY, "
            "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
        )
    current = await conn.fetchval("SELECT COALESCE(MAX(version), 0) FROM store_migrations")
    for version, sql in enumerate(migrations, start=1):
        if version <= current:
            continue
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK_KEY)
            if await conn.fetchval("SELECT 1 FROM store_migrations WHERE version = $1", version):
                continue  # another sidecar applied it meanwhile
            await conn.execute(sql)
            await conn.execute("INSERT INTO store_migrations (version) VALUES ($1)", version)
    return len(migrations)
