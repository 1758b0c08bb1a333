"""The crew store on PostgreSQL: tsvector + GIN for keyword search, pgvector (HNSW, cosine) for
dense, and the embedded index's fusion and answer shape on top (``ranking``).

asyncpg and one small pool per process. Nothing connects at start: the first call connects (and,
for a writer, applies the migrations; a reader checks the schema is current), so a sidecar starts (and serves its own tier) while the database is down;
each call that cannot reach it, or is not answered within ``timeout``, raises
``StoreUnavailable``, and the next call tries again.

Keyword search is BM25-like, not FTS5's BM25: ``ts_rank`` with the heading weighing 4x the body
and normalised by the log of the chunk's length, over PostgreSQL's ``english`` configuration
(Snowball stems, English stopwords) of text whose diacritics are folded here first. A query word
also finds its irregular forms, as the embedded index's BM25 does (``came`` for ``come``;
:func:`~sidecar.index.tokens.with_forms`), each at ``FORM_WEIGHT`` of its own score.
"""

from __future__ import annotations

import asyncio
import json
import math
import struct
import unicodedata
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import numpy as np
import structlog

from sidecar.errors import BadRequest
from sidecar.index.query import terms
from sidecar.index.snippet import query_tokens
from sidecar.index.tier_index import RankedChunk
from sidecar.index.tokens import FORM_WEIGHT, QueryTokens, with_forms
from sidecar.retrieval.lift import BoostPlan, wanted
from sidecar.retrieval.standing import SLACK
from sidecar.store.base import (
    OPERATORS_DIR,
    ChunkRow,
    FileRow,
    Floats,
    RowRefused,
    StoreUnavailable,
    VectorRow,
    unstorable,
)
from sidecar.store.migrations import FILE_DIGEST, MIGRATIONS, hnsw_index, migrate, schema_version
from sidecar.store.ranking import Candidates, mark_flagged, rank

__all__ = ["PostgresCrewStore", "fold"]

log = structlog.get_logger("sidecar.store.postgres")
#: ts_rank weights for D, C, B, A: headings (A) weigh 4x bodies (B), as in the FTS5 index.
_WEIGHTS = "{0.1, 0.2, 0.25, 1.0}"
_CANDIDATES = 100
#: maintenance_work_mem for building an HNSW index: room for the whole graph (each vector and its
#: neighbour lists, about 2.4 KB per 384-wide vector), within these bounds. A graph that does not
#: fit is built on disk, many times slower.
_BUILD_MEMORY_MB = (64, 4096)


def build_memory_mb(rows: int, dim: int) -> int:
    """maintenance_work_mem, in MB, for building the HNSW index of ``rows`` vectors of width ``dim``."""
    low, high = _BUILD_MEMORY_MB
    return max(low, min(high, math.ceil(rows * (4 * dim + 512) * 1.2 / 2**20)))


#: The longest the compare's read of every file's digest may take (it hashes every chunk's text).
_VERIFY_S = 120.0
#: The first key of the per-crew advisory lock a change of the chunks takes ("ms" in ASCII).
_WRITE_LOCK = 0x6D73
#: The chunks a crew search may find: not the operator models', which only the block reads.
_SHARED = f"lower(path) NOT LIKE '{OPERATORS_DIR}%'"
#: How many chunks the keyword leg's finding words may hold between them (see ``_bm25``).
_MATCH_BUDGET = 5000


def fold(text: str) -> str:
    """``text`` with its diacritics removed (the FTS5 index's ``remove_diacritics``)."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def _encode_vector(value: Any) -> bytes:
    vec = np.asarray(value, dtype=">f4").reshape(-1)
    return struct.pack(">HH", len(vec), 0) + vec.tobytes()


def _decode_vector(data: bytes) -> Floats:
    (dim,) = struct.unpack_from(">H", data)
    return np.frombuffer(data, dtype=">f4", count=dim, offset=4).astype(np.float32)


class PostgresCrewStore:
    """One crew's shared tier in one PostgreSQL database (``dsn``)."""

    def __init__(self, dsn: str, crew: str, *, timeout: float = 2.0, max_size: int = 4, migrate: bool = True) -> None:
        self.dsn = dsn
        self.crew = crew
        self.timeout = timeout
        self.max_size = max_size
        # The writers (the lead, ``store migrate``) bring the schema up to date when they first
        # connect; a reader (a member, ``reader()``) never changes it, and waits for the lead.
        self.migrate = migrate
        self._pool: Any = None
        self._lock = asyncio.Lock()
        self._indexed_dims: set[int] = set()
        self._tokens = QueryTokens()  # query words' index tokens, which find their irregular forms
        # A bulk load (store migrate) builds the HNSW indexes once at its end (``build_indexes``).
        self.defer_indexes = False
        # What this process's copies (the lead's mirrors) last had to leave out, by kind: the
        # lead's own status reads it here, a member's from the store (``status``).
        self.copy_skipped: dict[str, int] = {"files": 0, "memories": 0}

    # -- connections -------------------------------------------------------------------------
    async def _ready(self) -> Any:
        if self._pool is not None:
            return self._pool
        async with self._lock:
            if self._pool is None:
                import asyncpg  # loaded only by a sidecar configured with a PostgreSQL store

                conn = await asyncpg.connect(self.dsn, timeout=self.timeout)
                try:
                    if self.migrate:
                        await migrate(conn)
                    elif (version := await schema_version(conn)) < len(MIGRATIONS):
                        raise StoreUnavailable(
                            f"the crew store's schema is at version {version}, this sidecar reads "
                            f"version {len(MIGRATIONS)}: the lead brings it up to date when it connects"
                        )
                finally:
                    await conn.close()
                self._pool = await asyncpg.create_pool(
                    self.dsn,
                    min_size=0,
                    max_size=self.max_size,
                    timeout=self.timeout,
                    command_timeout=self.timeout,
                    init=self._init_connection,
                    server_settings={"client_min_messages": "warning"},
                )
        return self._pool

    def reader(self) -> PostgresCrewStore:
        """The same store for a reader (a member): it never migrates the schema, and needs only
        the read-only role with the narrow grant docs/store.md lists."""
        return PostgresCrewStore(self.dsn, self.crew, timeout=self.timeout, max_size=self.max_size, migrate=False)

    @staticmethod
    async def _init_connection(conn: Any) -> None:
        await conn.set_type_codec(
            "vector", schema="public", encoder=_encode_vector, decoder=_decode_vector, format="binary"
        )
        # HNSW returns at most ef_search rows: give the dense leg its hundred candidates.
        await conn.execute(f"SET hnsw.ef_search = {_CANDIDATES}; SET hnsw.iterative_scan = relaxed_order")

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[Any]:
        """A pooled connection; any failure to reach or hear from the database is StoreUnavailable."""
        import asyncpg

        # InternalClientError: a connection the server dropped in the middle of an operation
        # ("cannot switch to state ...; another operation is in progress").
        failures = (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
        try:
            async with asyncio.timeout(self.timeout * 2):
                pool = await self._ready()
            conn = await pool.acquire(timeout=self.timeout)
        except (*failures, ValueError) as exc:  # ValueError: a new connection's codec found no vector type
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc
        try:
            yield conn
        except (asyncpg.DataError, UnicodeEncodeError) as exc:  # a value sent, not the store
            raise RowRefused(f"{type(exc).__name__}: {exc}") from exc
        except failures as exc:
            raise StoreUnavailable(f"{type(exc).__name__}: {exc}") from exc
        finally:
            try:
                await pool.release(conn)
            except failures as exc:  # a broken connection: the pool has closed it, the work is done
                log.info("store.connection_dropped", error=f"{type(exc).__name__}: {exc}")

    def connection(self) -> AbstractAsyncContextManager[Any]:
        """A pooled connection for the crew's other tables in the same database (the journal's,
        ``episodic.crew_store``; the knowledge graph's, ``kg.pg_kg``): StoreUnavailable as for the
        store's own calls."""
        return self._conn()

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                async with asyncio.timeout(self.timeout):
                    await pool.close()
            except Exception:  # a dead server: drop the connections
                pool.terminate()

    # -- write side --------------------------------------------------------------------------
    async def files(self, *, verify: bool = False) -> dict[str, str]:
        """Each file's content hash. ``verify``: a file whose rows are no longer what the lead
        wrote (``FILE_DIGEST``: changed in the database by someone else) maps to "" instead,
        which no index hash equals, so the lead's compare sends it again."""
        if not verify:
            async with self._conn() as conn:
                rows = await conn.fetch("SELECT path, hash FROM crew_files WHERE crew = $1", self.crew)
            return {r["path"]: r["hash"] for r in rows}
        async with self._conn() as conn:
            rows = await conn.fetch(
                f"SELECT f.path, f.hash, f.written IS NOT DISTINCT FROM {FILE_DIGEST} AS intact "
                "FROM crew_files f WHERE f.crew = $1",
                self.crew,
                timeout=max(self.timeout, _VERIFY_S),
            )
        changed = sorted(r["path"] for r in rows if not r["intact"])
        if changed:
            log.warning("store.changed_in_store", files=len(changed), first=changed[:20])
        return {r["path"]: r["hash"] if r["intact"] else "" for r in rows}

    async def replace_files(
        self,
        files: list[tuple[FileRow, list[ChunkRow]]],
        model: str | None,
        vectors: dict[str, VectorRow],
        flags: dict[str, list[dict[str, Any]]] | None = None,
        contents: dict[str, bytes] | None = None,
    ) -> None:
        """Put each file with exactly its chunks (and its flagged sections and bytes), all in one
        transaction that moves the files' version."""
        flagged = flags or {}
        data = contents or {}
        paths = [f.path for f, _ in files]
        rows = [
            (self.crew, c.path, c.ord, c.heading, c.body, c.line_start, c.line_end, c.hash, c.plain,
             fold(c.heading), fold(c.body), *self._vector_fields(model, vectors.get(c.hash)))
            for _, chunks in files for c in chunks
        ]  # fmt: skip
        await self._index_dims({r[12] for r in rows if r[12] is not None})
        async with self._conn() as conn, conn.transaction():
            await self._take_turn(conn)
            await conn.executemany(
                "INSERT INTO crew_files (crew, path, hash, size, flags, content) "
                "VALUES ($1, $2, $3, $4, $5::text::jsonb, $6) ON CONFLICT (crew, path) DO UPDATE "
                "SET hash = $3, size = $4, flags = $5::text::jsonb, content = $6, indexed_at = now()",
                [
                    (self.crew, f.path, f.hash, f.size, json.dumps(flagged.get(f.path, [])), data.get(f.path))
                    for f, _ in files
                ],
            )
            await self._count_words(conn, paths, -1)
            await conn.execute("DELETE FROM crew_chunks WHERE crew = $1 AND path = ANY($2::text[])", self.crew, paths)
            await conn.executemany(
                "INSERT INTO crew_chunks (crew, path, ord, heading, body, line_start, line_end, hash, plain, tsv, "
                "model, dim, embedding, sentences) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
                "setweight(to_tsvector('english', $10), 'A') || setweight(to_tsvector('english', $11), 'B'), "
                "$12, $13, $14, $15)",
                rows,
            )
            await self._count_words(conn, paths, 1)
            await conn.execute(
                f"UPDATE crew_files f SET written = {FILE_DIGEST} WHERE f.crew = $1 AND f.path = ANY($2::text[])",
                self.crew,
                paths,
            )
            await self._bump_version(conn)

    async def set_skipped(self, kind: str, count: int) -> None:
        """How many of ``kind`` (``files``, ``memories``) the lead's copy had to leave out, for the
        status (the lead's from ``copy_skipped``, members' from the store)."""
        self.copy_skipped[kind] = count
        async with self._conn() as conn:
            await conn.execute(
                "INSERT INTO crew_state (crew, skipped) VALUES ($1, jsonb_build_object($2::text, $3::int)) "
                "ON CONFLICT (crew) DO UPDATE SET skipped = crew_state.skipped || excluded.skipped",
                self.crew, kind, count,
            )  # fmt: skip

    async def _count_words(self, conn: Any, paths: list[str], sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) the chunks of ``paths`` in the crew's word and chunk
        counts (``crew_words``, ``crew_state.chunks``), in the transaction that changes them."""
        await conn.execute(
            "INSERT INTO crew_words (crew, word, ndoc) SELECT $1, l.lexeme, $3 * count(*) "
            "FROM crew_chunks c, unnest(c.tsv) l WHERE c.crew = $1 AND c.path = ANY($2::text[]) "
            "GROUP BY l.lexeme ORDER BY l.lexeme "
            "ON CONFLICT (crew, word) DO UPDATE SET ndoc = crew_words.ndoc + excluded.ndoc",
            self.crew, paths, sign,
        )  # fmt: skip
        await conn.execute(
            "INSERT INTO crew_state (crew, chunks) SELECT $1, $3 * count(*) FROM crew_chunks "
            "WHERE crew = $1 AND path = ANY($2::text[]) "
            "ON CONFLICT (crew) DO UPDATE SET chunks = crew_state.chunks + excluded.chunks",
            self.crew, paths, sign,
        )  # fmt: skip

    async def _take_turn(self, conn: Any) -> None:
        """Changes of one crew's files take turns (a transaction-scoped advisory lock per crew):
        two writers (a lead and a ``store migrate``) would otherwise lock the same word counts in
        opposite orders, one taking them away before adding others, and deadlock."""
        await conn.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", _WRITE_LOCK, self.crew)

    @staticmethod
    def _vector_fields(model: str | None, vec: VectorRow | None) -> tuple[Any, ...]:
        if model is None or vec is None:
            return (None, None, None, None)
        return (model, len(vec.vector), vec.vector, vec.sentences)

    async def _index_dims(self, dims: set[int]) -> None:
        if self.defer_indexes:
            return
        for dim in dims - self._indexed_dims:
            async with self._conn() as conn:
                await conn.execute(hnsw_index(dim), timeout=600)
            self._indexed_dims.add(dim)

    async def build_indexes(self) -> None:
        """The HNSW index of every vector width the store holds, built now if missing: after a bulk
        load, building it once is an order of magnitude faster than inserting into it row by row."""
        async with self._conn() as conn:
            rows = await conn.fetch("SELECT dim, count(*) AS n FROM crew_chunks WHERE dim IS NOT NULL GROUP BY dim")
            for row in rows:
                dim = int(row["dim"])
                await conn.execute(f"SET maintenance_work_mem = '{build_memory_mb(int(row['n']), dim)}MB'")
                await conn.execute(hnsw_index(dim), timeout=4 * 3600)
                await conn.execute("RESET maintenance_work_mem")
                self._indexed_dims.add(dim)

    async def analyze(self) -> None:
        """Refresh the planner's statistics after a bulk load (else it may scan and sort where the
        HNSW index answers in a few milliseconds)."""
        async with self._conn() as conn:
            await conn.execute("ANALYZE crew_files, crew_chunks", timeout=600)

    async def remove_files(self, paths: list[str]) -> None:
        if not paths:
            return
        async with self._conn() as conn, conn.transaction():
            await self._take_turn(conn)
            await self._count_words(conn, paths, -1)
            await conn.execute("DELETE FROM crew_files WHERE crew = $1 AND path = ANY($2::text[])", self.crew, paths)
            await self._bump_version(conn)

    async def _bump_version(self, conn: Any) -> None:
        await conn.execute(
            "INSERT INTO crew_state (crew, version) VALUES ($1, 1) "
            "ON CONFLICT (crew) DO UPDATE SET version = crew_state.version + 1",
            self.crew,
        )

    async def version(self) -> int:
        """Moves with every change of the crew's files."""
        async with self._conn() as conn:
            value = await conn.fetchval("SELECT version FROM crew_state WHERE crew = $1", self.crew)
        return int(value or 0)

    async def file_contents(self, paths: list[str]) -> dict[str, tuple[str, bytes | None]]:
        """Each file's content hash and bytes (None: the lead sent none)."""
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT path, hash, content FROM crew_files WHERE crew = $1 AND path = ANY($2::text[])",
                self.crew, paths,
            )  # fmt: skip
        return {r["path"]: (r["hash"], r["content"]) for r in rows}

    async def missing_vectors(self, model: str, limit: int) -> list[str]:
        async with self._conn() as conn:
            rows = await conn.fetch(
                "SELECT DISTINCT hash FROM crew_chunks WHERE crew = $1 AND (model IS DISTINCT FROM $2) LIMIT $3",
                self.crew, model, limit,
            )  # fmt: skip
        return [r["hash"] for r in rows]

    async def put_vectors(self, model: str, vectors: dict[str, VectorRow]) -> int:
        if not vectors:
            return 0
        await self._index_dims({len(v.vector) for v in vectors.values()})
        async with self._conn() as conn, conn.transaction():
            await conn.executemany(
                "UPDATE crew_chunks SET model = $3, dim = $4, embedding = $5, sentences = $6 "
                "WHERE crew = $1 AND hash = $2",
                [(self.crew, v.hash, model, len(v.vector), v.vector, v.sentences) for v in vectors.values()],
            )
            # What the lead wrote of these files now includes the vectors (``FILE_DIGEST``).
            await conn.execute(
                f"UPDATE crew_files f SET written = {FILE_DIGEST} WHERE f.crew = $1 AND f.path IN "
                "(SELECT DISTINCT c.path FROM crew_chunks c WHERE c.crew = $1 AND c.hash = ANY($2::text[]))",
                self.crew, list(vectors),
            )  # fmt: skip
        return len(vectors)

    async def seq(self) -> int:
        async with self._conn() as conn:
            value = await conn.fetchval("SELECT seq FROM crew_state WHERE crew = $1", self.crew)
        return int(value or 0)

    async def set_seq(self, seq: int) -> None:
        async with self._conn() as conn:
            await conn.execute(
                "INSERT INTO crew_state (crew, seq) VALUES ($1, $2) "
                "ON CONFLICT (crew) DO UPDATE SET seq = $2, updated_at = now()",
                self.crew, seq,
            )  # fmt: skip

    async def wait_for_seq(self, seq: int, limit_s: float, step: float = 0.02) -> bool:
        """Wait until the store holds the lead's write ``seq``; False if ``limit_s`` passed first."""
        try:
            async with asyncio.timeout(limit_s):
                # The write lands in the database from another host: polled, a small read each step.
                while await self.seq() < seq:  # noqa: ASYNC110
                    await asyncio.sleep(step)
        except TimeoutError:
            return False
        return True

    # -- read side ---------------------------------------------------------------------------
    async def search(
        self,
        query: str,
        limit: int,
        *,
        qvec: Floats | None,
        model: str | None,
        fusion: str,
        explain: bool,
        plan: BoostPlan | None = None,
    ) -> list[dict[str, Any]]:
        problem = unstorable(query)
        if problem is not None:  # the database would refuse it: the query's fault, not a store down
            raise BadRequest(f"query: {problem}", code="invalid_query", field="query")
        words = terms(query)
        if not words:
            return []
        # The irregular forms of the words, found by the embedded index's tokens of them.
        forms = [form for form, _ in with_forms(list(zip(words, self._tokens(words), strict=True)))]
        want = wanted(plan, limit)
        wide = max(_CANDIDATES, want) if qvec is not None else want + SLACK
        async with self._conn() as conn:
            cands = Candidates(await self._bm25(conn, words, wide, want + SLACK, forms))
            if qvec is not None and model is not None:
                cands.qvec = np.asarray(qvec, dtype=np.float32)
                await self._dense(conn, cands, cands.qvec, model)
            hits = rank(cands, words, limit, fusion=fusion if cands.dense_used else "bm25", explain=explain, plan=plan)
            if forms:
                _show_forms(hits, cands, words + forms)
            if hits:
                rows = await conn.fetch(
                    "SELECT path, flags::text AS flags FROM crew_files WHERE crew = $1 AND path = ANY($2::text[]) "
                    "AND flags <> '[]'::jsonb",
                    self.crew, list({h["path"] for h in hits}),
                )  # fmt: skip
                mark_flagged(hits, {r["path"]: json.loads(r["flags"]) for r in rows})
        return hits

    async def _bm25(self, conn: Any, words: list[str], limit: int, enough: int, forms: list[str]) -> list[Any]:
        """BM25-like: per query word, its inverse document frequency times ``ts_rank`` (term
        frequency saturated, heading 4x, normalised by the log of the chunk's length), summed; each
        of the words' irregular ``forms`` adds ``FORM_WEIGHT`` of its own, as the embedded index
        adds them. A row's ``own`` is what its query words score (0 for a chunk holding only forms).

        Candidates are the chunks holding the query's weightier words (and forms): they are taken
        by weight (a form at ``FORM_WEIGHT`` of its IDF, so for words alone rarest first) while the
        chunks they are in stay within ``_MATCH_BUDGET`` (always at least the first), and every
        query word and form counts in the score of those chunks. A word in a large share of the
        crew's chunks finds nothing by itself that a rarer word of the query would not rank above
        it, and ranking every chunk that holds it is what costs: its chunks are found only when the
        query has no rarer word, or the rarer ones find fewer than ``enough`` (the hits a search
        shows, and the spare ones it reorders)."""
        folded = list(dict.fromkeys(fold(w) for w in words))
        others = [f for f in dict.fromkeys(fold(f) for f in forms) if f not in folded]
        df, idf = await self._idf(conn, folded + others)
        weight = {w: idf[w] for w in folded} | {f: FORM_WEIGHT * idf[f] for f in others}
        finders: list[str] = []
        matched = 0
        for word in sorted(folded + others, key=lambda w: -weight[w]):
            if finders and matched + df[word] > _MATCH_BUDGET:
                break
            finders.append(word)
            matched += df[word]
        rows = await self._ranked(conn, finders, folded, others, weight=weight, limit=limit)
        if len(rows) < min(limit, enough) and len(finders) < len(folded) + len(others):
            rows = await self._ranked(conn, folded + others, folded, others, weight=weight, limit=limit)
        return rows

    async def _ranked(
        self,
        conn: Any,
        finders: list[str],
        folded: list[str],
        forms: list[str],
        *,
        weight: dict[str, float],
        limit: int,
    ) -> list[Any]:
        """The top ``limit`` chunks holding any of ``finders``, scored by every word of ``folded``
        and every form of ``forms``, each times its ``weight``; ``own`` the words' share."""

        # One ts_rank per word, each times its weight: the statement is built from the word count
        # alone (words and weights are bound parameters), so it never holds client text.
        def parts(first: int, count: int) -> str:
            return (
                " + ".join(
                    f"${first + 2 * i + 1}::float8 * ts_rank('{_WEIGHTS}', c.tsv, plainto_tsquery('english', ${first + 2 * i}), 1)"
                    for i in range(count)
                )
                or "0::float8"
            )

        own = parts(4, len(folded))
        other = parts(4 + 2 * len(folded), len(forms))
        args = [a for w in folded + forms for a in (w, weight[w])]
        return list(
            await conn.fetch(
                "WITH allq AS (SELECT crew_tsquery_any(plainto_tsquery('english', t)) AS q FROM unnest($2::text[]) t) "
                "SELECT c.id, c.path, c.ord, c.heading, c.body, c.line_start, c.line_end, c.hash, c.plain, "
                "s.own, s.own + s.other AS score FROM crew_chunks c CROSS JOIN allq "
                f"CROSS JOIN LATERAL (SELECT {own} AS own, {other} AS other) s "
                f"WHERE c.crew = $1 AND c.tsv @@ allq.q AND {_SHARED} "
                "ORDER BY score DESC, c.id LIMIT $3",
                self.crew, finders, limit, *args,
            )
        )  # fmt: skip

    async def _idf(self, conn: Any, words: list[str]) -> tuple[dict[str, int], dict[str, float]]:
        """Each word's document count among the crew's chunks and its inverse document frequency
        (BM25's, as Lucene keeps it positive), from the counts the writes keep (``_count_words``).
        A word the text search splits into several lexemes counts the chunks of its rarest one."""
        rows = await conn.fetch(
            "SELECT t, (SELECT coalesce(min(coalesce(w.ndoc, 0)), 0) FROM unnest(to_tsvector('english', t)) l "
            "LEFT JOIN crew_words w ON w.crew = $1 AND w.word = l.lexeme) AS df, "
            "(SELECT chunks FROM crew_state WHERE crew = $1) AS total FROM unnest($2::text[]) t",
            self.crew, words,
        )  # fmt: skip
        df = {r["t"]: max(int(r["df"]), 0) for r in rows}
        n = max(int(rows[0]["total"] or 0), 1) if rows else 1
        return df, {w: math.log(1 + max(n - df[w] + 0.5, 0.5) / (df[w] + 0.5)) for w in words}

    async def _dense(self, conn: Any, cands: Candidates, qvec: Floats, model: str) -> None:
        """The dense leg (HNSW), the cosines of the BM25 candidates, the neighbours of the earned
        chunks with their headings (which are a dialogue's turns) and the rows of the chunks only
        the dense leg found."""
        dim = len(qvec)
        cast = f"vector({dim})"
        dense = await conn.fetch(
            f"SELECT id, 1 - (embedding::{cast} <=> $2::{cast}) AS cos FROM crew_chunks "
            f"WHERE crew = $1 AND dim = {dim} AND model = $3 AND {_SHARED} "
            f"ORDER BY embedding::{cast} <=> $2::{cast} LIMIT $4",
            self.crew, qvec, model, _CANDIDATES,
        )  # fmt: skip
        if not dense and not await conn.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM crew_chunks WHERE crew = $1 AND dim = {dim} AND model = $2)",
            self.crew,
            model,
        ):
            return  # no vector of this model in the store: a BM25 answer, as the embedded index gives
        cands.dense = [(r["id"], float(r["cos"])) for r in dense]
        bm_ids = [r["id"] for r in cands.bm25]
        scored = await conn.fetch(
            f"SELECT id, 1 - (embedding::{cast} <=> $2::{cast}) AS cos FROM crew_chunks "
            f"WHERE id = ANY($1::bigint[]) AND dim = {dim} AND model = $3",
            bm_ids, qvec, model,
        )  # fmt: skip
        cands.cosines = {r["id"]: float(r["cos"]) for r in scored} | dict(cands.dense)
        earned = cands.earned()
        near = await conn.fetch(
            "SELECT c.id, c.heading, n.id AS other, n.heading AS other_heading, n.ord - c.ord AS offset "
            "FROM crew_chunks c JOIN crew_chunks n "
            "ON n.crew = c.crew AND n.path = c.path AND n.ord BETWEEN c.ord - 2 AND c.ord + 2 AND n.id <> c.id "
            "WHERE c.id = ANY($1::bigint[])",
            earned,
        )
        for r in near:
            cands.neighbours.setdefault(r["id"], {})[r["offset"]] = r["other"]
            cands.headings[r["id"]], cands.headings[r["other"]] = r["heading"], r["other_heading"]
        others = [cid for cid, _ in cands.dense if cid not in set(bm_ids)]
        rows = await conn.fetch(
            "SELECT id, path, ord, heading, body, line_start, line_end, hash, plain, sentences "
            "FROM crew_chunks WHERE id = ANY($1::bigint[])",
            others,
        )
        cands.rows = {r["id"]: r for r in rows}

    async def status(self) -> dict[str, Any]:
        async with self._conn() as conn:
            row = await conn.fetchrow(
                "SELECT (SELECT count(*) FROM crew_files WHERE crew = $1) AS files, "
                "(SELECT coalesce(sum(size), 0) FROM crew_files WHERE crew = $1) AS bytes, "
                "count(*) AS chunks, count(embedding) AS vectors, "
                "(SELECT seq FROM crew_state WHERE crew = $1) AS seq, "
                "(SELECT skipped::text FROM crew_state WHERE crew = $1) AS skipped, "
                "(SELECT max(indexed_at) FROM crew_files WHERE crew = $1) AS last "
                "FROM crew_chunks WHERE crew = $1",
                self.crew,
            )
        return {
            "tier": "crew",
            "store": "postgres",
            "integrity": "ok",  # it answered; PostgreSQL checks its own pages
            "crew": self.crew,
            "files": int(row["files"]),
            "bytes": int(row["bytes"]),
            "chunks": int(row["chunks"]),
            "vectors": int(row["vectors"]),
            "seq": int(row["seq"] or 0),
            # Rows the lead's copy left out (text the database cannot hold): files, memories.
            "copy_skipped": {"files": 0, "memories": 0, **json.loads(row["skipped"] or "{}")},
            "last_indexed": row["last"].isoformat() if row["last"] is not None else None,
        }


def _show_forms(hits: list[dict[str, Any]], cands: Candidates, shown: list[str]) -> None:
    """A hit holding an irregular form and none of the query's words shows the form (``shown``:
    the words and their forms) in its snippet, as the embedded index's hits do; the others keep
    the query's words."""
    alone = {(r["path"], r["line_start"], r["line_end"]): r for r in cands.bm25 if not r["own"]}
    if not alone:
        return
    tokens = query_tokens(shown)
    for hit in hits:
        row = alone.get((hit["path"], hit["line_start"], hit["line_end"]))
        if row is None:
            continue
        text = row["body"] or row["heading"]
        chunk = RankedChunk(
            row["id"], row["path"], row["heading"], row["line_start"], row["line_end"], text, 0.0, row["hash"],
            row["plain"], tokens,
        )  # fmt: skip
        window = chunk.window()
        hit["snippet"] = window.text
        hit["highlights"] = [[a, b] for a, b in window.highlights]
