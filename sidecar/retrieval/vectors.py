"""Chunk vectors of one tier: float32 blobs in ``index.sqlite`` and a normalised matrix in memory.

The ``embeddings`` table, keyed by (model, chunk hash), is the embedding cache: an unchanged chunk
is never embedded twice, across reindexes and restarts. ``VectorIndex`` holds the vectors of the
current model only (two models are never compared), row-aligned to chunk ids, and follows the
index cheaply: ``PRAGMA data_version`` says whether anything was committed, and only chunks whose
hash is new are read back from the table. From ``INT8_FROM`` rows a search reads an int8 copy of
the matrix first (``sidecar.retrieval.int8``) and scores exactly only the rows its bounds leave.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import numpy as np
import numpy.typing as npt
import structlog

from sidecar.index.db import chunks_gen, connect_reader
from sidecar.index.snippet import sentence_spans
from sidecar.retrieval.embed.base import from_blob, to_blob
from sidecar.retrieval.int8 import Int8Pass

if TYPE_CHECKING:
    from sidecar.index.sync import ChunkDelta, ChunkDeltas

__all__ = ["ChunkRow", "PendingChunk", "VectorIndex", "dialogue_turns", "embed_text", "from_blob", "to_blob"]

log = structlog.get_logger("sidecar.retrieval.vectors")

Floats = npt.NDArray[np.float32]
Ids = npt.NDArray[np.int64]
T = TypeVar("T")
# SQLite's default limit on bound parameters is 999 on old builds; stay under it.
_IN_BATCH = 900
#: Most chunks whose neighbours and turns ``context`` keeps (about 0.5 kB each); past it, it starts over.
_CONTEXT_CACHE = 50_000
#: Fewest rows for which a search reads the matrix's int8 copy first (``sidecar.retrieval.int8``):
#: under it, one float32 product costs about what the copy's pass does.
INT8_FROM = 4096


def embed_text(heading: str, body: str) -> str:
    """What is embedded for a chunk: its heading path, then its body (exactly what its hash covers)."""
    if not heading:
        return body
    return f"{heading}\n{body}" if body else heading


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A chunk hash lacking a vector for the current model, with the text to embed and the
    ``[start, end)`` spans of its sentences in that text (what a dense-only hit's snippet shows)."""

    hash: str
    text: str
    sentences: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """What a search result shows of a chunk."""

    id: int
    path: str
    heading: str
    body: str
    line_start: int
    line_end: int
    hash: str = ""


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """Immutable: searches read one while a refresh builds the next."""

    ids: Ids  # chunk ids that have a vector, row-aligned with ``matrix``
    matrix: Floats  # (n, dim), unit rows
    row_of: dict[int, int]
    hashes: dict[int, str]  # every chunk of the index: id -> hash
    missing: frozenset[str] = field(default_factory=frozenset)  # hashes without a vector
    gen: int | None = None  # the index's chunks_gen that ``hashes`` describe (None: unknown)
    at: float = 0.0  # time.monotonic() when ``hashes`` were read
    # Each row's serial: given when its vector is laid in, kept while the row is (int8 copies map by it).
    serials: Ids = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls, dim: int) -> _Snapshot:
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, dim), dtype=np.float32), {}, {})


class VectorIndex:
    """The current model's vectors of one tier index, for dense search and its backlog.

    Reads (``refresh``, ``search``, ``scores``, ``missing``) may come from any thread and use the
    index's own read-only connection; what a search reads beside the matrix (``chunk_rows``,
    ``neighbours``, ``turns``, ``sentence_vectors``) has a read-only connection of its own, so a search never
    waits while the background embedder rereads the chunks. ``store`` and ``prune`` write through
    the connection the caller gives, which is the tier's one writer.
    """

    def __init__(self, path: Path, model: str | None = None, dim: int = 0, deltas: ChunkDeltas | None = None) -> None:
        self.path = path
        self._model = model
        self._dim = dim
        # The index's own record of what its commits did to the chunks (this process's writer): a
        # refresh after a few changed chunks reads those, not every chunk's hash. None: read whole.
        self._deltas = deltas
        self._snap = _Snapshot.empty(dim)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode: int | None = None
        self._rows_lock = threading.Lock()  # the searches' connection
        self._rows_conn: sqlite3.Connection | None = None
        self._rows_inode: int | None = None
        self._data_version: int | None = None
        self._context: _Context | None = None  # neighbours and turns kept between searches (``context``)
        self._buf: Floats | None = None  # the rows of the current snapshot, plus spare capacity
        self._serial = 0  # the next row serial
        self._int8: _Copy | None = None
        self._int8_lock = threading.Lock()  # one copy made at a time
        self._int8_off = False  # making a copy failed: none is tried again

    @property
    def model(self) -> str | None:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def size(self) -> int:
        """Chunks with a vector of the current model."""
        return len(self._snap.ids)

    @property
    def matrix(self) -> Floats:
        """The current model's unit rows as of the last refresh (read-only: shared with searches)."""
        return self._snap.matrix

    @property
    def backlog(self) -> int:
        """Chunks (distinct hashes) still lacking a vector of the current model, as of the last refresh."""
        return len(self._snap.missing) if self._model else 0

    def counts(self) -> tuple[int, int]:
        """``(size, backlog)`` from one snapshot: they agree even while a refresh replaces it."""
        snap = self._snap
        return len(snap.ids), (len(snap.missing) if self._model else 0)

    def set_model(self, model: str | None, dim: int = 0) -> None:
        """Serve ``model`` from now on; vectors of any other model are dropped from memory."""
        with self._lock:
            if (model, dim) == (self._model, self._dim):
                return
            self._model, self._dim = model, dim
            self._snap = _Snapshot.empty(dim)
            self._data_version = None

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._data_version = None
        with self._rows_lock:
            if self._rows_conn is not None:
                self._rows_conn.close()
            self._rows_conn = None

    # -- read side ---------------------------------------------------------------------------
    def refresh(self, max_age: float = 0.0, *, wait: bool = True) -> bool:
        """Bring the matrix up to date with the index if anything was committed; True if it changed.

        Vectors stored since the last refresh are appended at once. When chunks themselves changed
        (the index's ``chunks_gen`` moved), the index's deltas are applied, or after a gap in them
        every chunk's hash is read again; either way the kept rows are copied into a new matrix.
        ``max_age`` lets a caller put that off while the chunks it holds were read less than
        ``max_age`` seconds ago (a search under a stream of writes). Until
        then a changed chunk scores with its previous vector and a new one by BM25 alone: it has
        no vector yet anyway until the background embedder reaches it. ``wait=False``: return
        False at once while another thread refreshes (a search then scores the view it has).
        """
        if not self._lock.acquire(blocking=wait):
            return False
        try:
            conn = self._connection()
            (version,) = conn.execute("PRAGMA data_version").fetchone()
            if version == self._data_version:
                return False
            conn.execute("BEGIN")
            try:
                gen = chunks_gen(conn)
                old = self._snap
                if max_age > 0 and gen != old.gen and old.gen is not None and time.monotonic() - old.at < max_age:
                    return False  # data_version is not recorded: the next call looks again
                self._snap = self._load(conn, old, gen)
            finally:
                conn.execute("COMMIT")
            self._data_version = version
            return True
        finally:
            self._lock.release()

    def search(self, query: Floats, k: int) -> list[tuple[int, float]]:
        """The ``k`` chunks closest to ``query`` by cosine, best first: one mat-vec and a partition,
        or, from ``INT8_FROM`` rows, the int8 copy's pass and the exact cosines of the rows it leaves
        (the same chunks at the same cosines: ``sidecar.retrieval.int8``)."""
        snap = self._snap
        n = len(snap.ids)
        if k < 1 or n == 0 or query.shape[-1] != snap.matrix.shape[1]:
            return []
        unit = _unit(query)
        first = self._first_pass(snap, k)
        if first is not None:  # the int8 copy's bounds leave the rows that can make the top k
            copy, where = first
            rows = copy.candidates(snap.matrix, unit, k, held=where.held, at=where.at, missing=where.missing)
            cosines = snap.matrix[rows] @ unit
        else:
            rows, cosines = None, snap.matrix @ unit
        m = len(cosines)
        top = np.argpartition(cosines, m - k)[m - k :] if m > k else np.arange(m)
        order = top[np.argsort(-cosines[top], kind="stable")]
        at = order if rows is None else rows[order]
        return list(zip(snap.ids[at].tolist(), cosines[order].tolist(), strict=True))

    def _first_pass(self, snap: _Snapshot, k: int) -> tuple[Int8Pass, _Rows] | None:
        """The int8 copy serving ``snap`` and where its rows are in it; None for a small matrix, a
        wide k, or without onnxruntime. A copy is made on the first search none serves (about 70 ms
        of CPU at 10k rows). It serves every later matrix whose rows it holds (by row serial), rows
        laid in since scored exactly, until they are a quarter of the rows: writes leave it serving,
        and it is made again once per quarter of the rows new."""
        n = len(snap.ids)
        if n < INT8_FROM or 4 * k > n or self._int8_off:
            return None
        held = self._int8
        if held is not None:
            rows = held.rows(snap)
            if 4 * len(rows.missing) <= n:
                return held.copy, rows
        if not self._int8_lock.acquire(blocking=False):
            return None
        try:
            try:
                made = Int8Pass.build(snap.matrix)
            except Exception as exc:  # an onnxruntime that cannot run the copy, or not exactly: float, for good
                log.warning("vectors.int8_unavailable", error=f"{type(exc).__name__}: {exc}")
                self._int8_off = True
                return None
            self._int8 = None if made is None else _Copy(made, snap.serials)
            return None if self._int8 is None else (self._int8.copy, self._int8.rows(snap))
        finally:
            self._int8_lock.release()

    def scores(self, query: Floats, chunk_ids: Iterable[int]) -> dict[int, float]:
        """Cosine of ``query`` to each given chunk that has a vector (chunks without one are left out)."""
        snap = self._snap
        pairs = [(cid, snap.row_of[cid]) for cid in chunk_ids if cid in snap.row_of]
        if not pairs or query.shape[-1] != snap.matrix.shape[1]:
            return {}
        rows = np.fromiter((r for _, r in pairs), dtype=np.int64, count=len(pairs))
        cosines = snap.matrix[rows] @ _unit(query)
        return dict(zip([cid for cid, _ in pairs], cosines.tolist(), strict=True))

    def missing(self, limit: int) -> list[PendingChunk]:
        """Up to ``limit`` distinct chunk hashes lacking a vector, with their text (as of the last refresh)."""
        wanted = list(self._snap.missing)[: max(limit, 0)]
        if not wanted or self._model is None:
            return []
        with self._lock:
            conn = self._connection()
            found: dict[str, PendingChunk] = {}
            for part in _batches(wanted):
                marks = ",".join("?" * len(part))
                sql = f"SELECT hash, heading, body FROM chunks WHERE hash IN ({marks})"
                for digest, heading, body in conn.execute(sql, part):
                    if digest not in found:
                        text = embed_text(heading, body)
                        source = body or heading  # what a snippet shows; the text ends with it
                        at = len(text) - len(source)
                        spans = tuple((at + a, at + b) for a, b in sentence_spans(source))
                        found[digest] = PendingChunk(digest, text, spans)
        return [found[h] for h in wanted if h in found]

    def sentence_vectors(self, hashes: Sequence[str]) -> dict[str, Floats]:
        """The stored sentence vectors (rows in ``sentence_spans`` order) of the given chunk hashes,
        for the current model; hashes stored without them are left out."""
        out: dict[str, Floats] = {}
        if self._model is None or not hashes:
            return out
        with self._rows_lock:
            conn = self._rows_connection()
            for part in _batches(list(dict.fromkeys(hashes))):
                marks = ",".join("?" * len(part))
                sql = (
                    f"SELECT hash, dim, sentences FROM embeddings WHERE model = ? AND hash IN ({marks}) "
                    "AND sentences IS NOT NULL"
                )
                for digest, dim, blob in conn.execute(sql, (self._model, *part)):
                    rows = np.frombuffer(blob, dtype="<f2").astype(np.float32)
                    if dim and rows.size % dim == 0:
                        out[digest] = rows.reshape(-1, dim)
        return out

    def chunk_rows(self, chunk_ids: Sequence[int]) -> dict[int, ChunkRow]:
        """Path, heading, body and line span of the given chunks (those still in the index)."""
        out: dict[int, ChunkRow] = {}
        with self._rows_lock:
            conn = self._rows_connection()
            for part in _batches(list(chunk_ids)):
                marks = ",".join("?" * len(part))
                sql = f"SELECT id, path, heading, body, line_start, line_end, hash FROM chunks WHERE id IN ({marks})"
                for row in conn.execute(sql, part):
                    out[row[0]] = ChunkRow(*row)
        return out

    def shown_rows(self, chunk_ids: Sequence[int]) -> tuple[dict[int, ChunkRow], dict[str, Floats]]:
        """``chunk_rows`` of the given chunks and ``sentence_vectors`` of their hashes, from one read
        (a search shows the rows its BM25 leg did not give, and a dense-only hit's closest sentence)."""
        rows: dict[int, ChunkRow] = {}
        sentences: dict[str, Floats] = {}
        if not chunk_ids:
            return rows, sentences
        if self._model is None:
            return self.chunk_rows(chunk_ids), sentences
        with self._rows_lock:
            conn = self._rows_connection()
            for part in _batches(list(chunk_ids)):
                marks = ",".join("?" * len(part))
                sql = (
                    "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, c.hash, e.dim, e.sentences "
                    "FROM chunks c LEFT JOIN embeddings e ON e.model = ? AND e.hash = c.hash "
                    f"AND e.sentences IS NOT NULL WHERE c.id IN ({marks})"
                )
                for *row, dim, blob in conn.execute(sql, (self._model, *part)):
                    found = ChunkRow(*row)
                    rows[found.id] = found
                    if blob is not None and found.hash not in sentences:
                        vectors = np.frombuffer(blob, dtype="<f2").astype(np.float32)
                        if dim and vectors.size % dim == 0:
                            sentences[found.hash] = vectors.reshape(-1, dim)
        return rows, sentences

    def neighbours(self, chunk_ids: Sequence[int], reach: int) -> dict[int, Mapping[int, int]]:
        """For each given chunk, the chunks up to ``reach`` places before and after it in its file,
        as ``{offset: chunk id}`` (offset -reach..reach, never 0)."""
        return self.context(chunk_ids, reach)[0]

    def turns(self, chunk_ids: Sequence[int], reach: int) -> dict[int, Mapping[int, int]]:
        """For each given chunk that is a turn of a dialogue, the turns of that dialogue up to
        ``reach`` places before and after it, as ``{offset: chunk id}`` (``dialogue_turns``)."""
        return self.context(chunk_ids, reach)[1]

    def context(
        self, chunk_ids: Sequence[int], reach: int
    ) -> tuple[dict[int, Mapping[int, int]], dict[int, Mapping[int, int]]]:
        """``neighbours`` and ``turns`` of the given chunks from one read. Both depend on the chunks
        of their file alone, so each chunk's are kept while its file's chunks stay as they were
        (``_Context``): under a stream of writes a search reads the index only for chunks of the
        files written since, and for chunks no search has asked about. A chunk's maps are the ones
        kept (read only), not copies."""
        near: dict[int, Mapping[int, int]] = {}
        turns: dict[int, Mapping[int, int]] = {}
        if reach < 1:
            return near, turns
        with self._rows_lock:
            conn = self._rows_connection()
            conn.execute("BEGIN")  # the generation, the files' rows and the chunks from one state of the index
            try:
                gen = chunks_gen(conn)
                cache = self._context
                if cache is None or not cache.serves(self._rows_inode, reach, gen):
                    cache = _Context(self._rows_inode, reach, gen)
                wanted = list(dict.fromkeys(chunk_ids))
                entries, fresh = cache.current(conn, gen, wanted)
                if fresh:
                    cache.add(conn, self._read_context(conn, fresh, reach))
            finally:
                conn.execute("COMMIT")
            for cid in wanted:
                nb, tn, _ = entries[cid]
                if nb:
                    near[cid] = nb
                if tn is not None:
                    turns[cid] = tn
            self._context = cache if gen is not None else None
        return near, turns

    @staticmethod
    def _read_context(conn: sqlite3.Connection, chunk_ids: Sequence[int], reach: int) -> dict[int, _Entry]:
        """Each chunk's neighbours, for a dialogue turn its fellow turns (None: not a turn) and its
        file; every given chunk gets an entry, one no longer in the index an empty one (file None)."""
        window: dict[int, tuple[str, dict[int, tuple[int, str]]]] = {}
        paths: dict[int, str] = {}
        for part in _batches(list(chunk_ids)):
            marks = ",".join("?" * len(part))
            sql = (
                "SELECT c.id, c.path, c.heading, n.id, n.ord - c.ord, n.heading FROM chunks c LEFT JOIN chunks n "
                "ON n.path = c.path AND n.ord BETWEEN c.ord - ? AND c.ord + ? AND n.id != c.id "
                f"WHERE c.id IN ({marks})"
            )
            for cid, path, heading, nid, offset, other in conn.execute(sql, (reach, reach, *part)):
                paths[cid] = path
                if nid is not None:
                    window.setdefault(cid, (heading, {}))[1][offset] = (nid, other)
        turns = dialogue_turns(window)
        out: dict[int, _Entry] = {}
        for cid in chunk_ids:
            near = window.get(cid)
            out[cid] = ({o: nid for o, (nid, _) in near[1].items()} if near else {}, turns.get(cid), paths.get(cid))
        return out

    def _connection(self) -> sqlite3.Connection:
        """The read connection, reopened (and the matrix rebuilt) when the index file was replaced."""
        inode = _inode(self.path)
        if self._conn is None or inode != self._inode:
            if self._conn is not None:
                self._conn.close()
            self._conn = connect_reader(self.path)
            self._inode = inode
            self._data_version = None
            self._snap = _Snapshot.empty(self._dim)
        return self._conn

    def _rows_connection(self) -> sqlite3.Connection:
        """The searches' read connection, reopened when the index file was replaced."""
        inode = _inode(self.path)
        if self._rows_conn is None or inode != self._rows_inode:
            if self._rows_conn is not None:
                self._rows_conn.close()
            self._rows_conn = connect_reader(self.path)
            self._rows_inode = inode
        return self._rows_conn

    def _load(self, conn: sqlite3.Connection, old: _Snapshot, gen: int | None) -> _Snapshot:
        """The next snapshot: rows of unchanged chunks are reused, only new hashes are read. When the
        chunks are as they were (the same ``chunks_gen``: the batcher stored vectors), their hashes
        are not read again either; when the index's deltas tell what changed since (``ChunkDeltas``),
        only the changed chunks are (``_load_delta``)."""
        same_chunks = gen is not None and gen == old.gen
        if not same_chunks and gen is not None and old.gen is not None and self._deltas is not None:
            steps = self._deltas.since(old.gen, gen)
            delta = None if steps is None or self._model is None else self._load_delta(conn, old, gen, steps)
            if delta is not None:
                return delta
        hashes: dict[int, str] = old.hashes if same_chunks else dict(conn.execute("SELECT id, hash FROM chunks"))
        at = old.at if same_chunks else time.monotonic()
        if self._model is None:
            return _Snapshot(old.ids[:0], old.matrix[:0], {}, hashes, frozenset(), gen, at)
        dim = self._width(conn)
        if old.matrix.shape[1] != dim:
            old = _Snapshot.empty(dim)
        if hashes is old.hashes or hashes == old.hashes:
            # The chunks are as they were (the batcher stored vectors): append, copy nothing.
            vectors = self._fetch(conn, set(old.missing), dim) if old.missing else {}
            if not vectors and old.gen == gen:
                return old
            new = [(cid, vectors[h]) for cid, h in hashes.items() if cid not in old.row_of and h in vectors]
            missing = old.missing - vectors.keys()
            return self._build(old, None, new, hashes, missing, gen=gen, at=at)
        keep = [(cid, old.row_of[cid]) for cid, h in hashes.items() if cid in old.row_of and old.hashes.get(cid) == h]
        kept_ids = {cid for cid, _ in keep}
        need = {h for cid, h in hashes.items() if cid not in kept_ids}
        vectors = self._fetch(conn, need, dim) if need else {}
        new = [(cid, vectors[h]) for cid, h in hashes.items() if cid not in kept_ids and h in vectors]
        missing = frozenset(h for h in need if h not in vectors)
        rows = np.fromiter((r for _, r in keep), np.int64, len(keep))
        return self._build(old, rows, new, hashes, missing, gen=gen, at=at)

    def _load_delta(
        self, conn: sqlite3.Connection, old: _Snapshot, gen: int, steps: Sequence[ChunkDelta]
    ) -> _Snapshot | None:
        """``old`` brought to generation ``gen`` by the index's deltas ``steps``: the deleted chunks'
        rows left out, the added chunks' stored vectors read. None when the deltas do not fit
        ``old`` (a chunk deleted that it lacks, one added that it has): the caller reads whole."""
        deleted: set[int] = set()
        added: dict[int, str] = {}
        for step in steps:
            for cid in step.deleted:
                if added.pop(cid, None) is None:
                    deleted.add(cid)
            added.update(step.added)
        hashes = dict(old.hashes)
        for cid in deleted:
            if hashes.pop(cid, None) is None:
                return None
        if any(cid in hashes for cid in added):
            return None
        hashes.update(added)
        dim = self._width(conn)
        if old.matrix.shape[1] != dim:
            return None
        need = set(added.values()) | old.missing
        vectors = self._fetch(conn, need, dim) if need else {}
        new = [(cid, vectors[h]) for cid, h in added.items() if h in vectors]
        if old.missing & vectors.keys():  # stored since: the old chunks that lacked them get rows
            new += [
                (cid, vectors[h])
                for cid, h in hashes.items()
                if h in vectors and h in old.missing and cid not in added and cid not in old.row_of
            ]
        missing = need - vectors.keys()
        gone = {old.hashes[cid] for cid in deleted} & missing
        if gone:  # a hash only deleted chunks held is no longer wanted
            missing -= gone - set(hashes.values())
        keep = np.flatnonzero(~np.isin(old.ids, np.fromiter(deleted, np.int64, len(deleted)))) if deleted else None
        return self._build(old, keep, new, hashes, frozenset(missing), gen=gen, at=time.monotonic())

    def _build(
        self,
        old: _Snapshot,
        keep: Ids | None,
        new: list[tuple[int, Floats]],
        hashes: dict[int, str],
        missing: frozenset[str],
        *,
        gen: int | None,
        at: float,
    ) -> _Snapshot:
        """Lay rows out in a buffer with spare capacity: ``old``'s rows ``keep`` (None: every one, the
        new rows appended), then ``new``. Appending writes past every live snapshot's view, so
        searches holding an older snapshot never see a row change under them."""
        dim = old.matrix.shape[1]
        append = keep is None
        base = len(old.ids) if keep is None else len(keep)
        size = base + len(new)
        buf = self._buf
        owned = False
        if buf is not None and append and base > 0:
            owned = buf.shape[0] >= size and old.matrix.base is buf
        if not owned:
            grown = np.empty((max(size + size // 4, 1024), dim), dtype=np.float32)
            if keep is None:
                grown[:base] = old.matrix
            else:
                np.take(old.matrix, keep, axis=0, out=grown[:base])
            buf = self._buf = grown
        assert buf is not None
        if new:
            buf[base:size] = _unit_rows(np.stack([v for _, v in new]))
        fresh = np.fromiter((c for c, _ in new), np.int64, len(new))
        serials = np.arange(self._serial, self._serial + len(new), dtype=np.int64)
        self._serial += len(new)
        if keep is None:
            ids = np.concatenate([old.ids, fresh])
            row_of = {**old.row_of, **{int(c): base + i for i, c in enumerate(fresh)}}
            serials = np.concatenate([old.serials, serials])
        else:
            ids = np.concatenate([old.ids[keep], fresh])
            row_of = dict(zip(ids.tolist(), range(len(ids)), strict=True))
            serials = np.concatenate([old.serials[keep], serials])
        return _Snapshot(ids, buf[:size], row_of, hashes, missing, gen, at, serials)

    def _width(self, conn: sqlite3.Connection) -> int:
        """The current model's vector width: the embedder's, or learned from the stored rows."""
        self._dim = self._dim or self._stored_dim(conn)
        return self._dim

    def _stored_dim(self, conn: sqlite3.Connection) -> int:
        """The width most stored vectors of the model have (for embedders that learn it on first call)."""
        row = conn.execute(
            "SELECT dim FROM embeddings WHERE model = ? GROUP BY dim ORDER BY COUNT(*) DESC LIMIT 1", (self._model,)
        ).fetchone()
        return int(row[0]) if row else 0

    def _fetch(self, conn: sqlite3.Connection, hashes: set[str], dim: int) -> dict[str, Floats]:
        """Stored vectors of the current model and width for ``hashes``."""
        if dim <= 0:
            return {}
        rows: list[tuple[str, bytes]] = []
        if len(hashes) > _IN_BATCH * 4:
            sql = "SELECT hash, vector FROM embeddings WHERE model = ? AND dim = ?"
            rows = [(h, b) for h, b in conn.execute(sql, (self._model, dim)) if h in hashes]
        else:
            for part in _batches(list(hashes)):
                marks = ",".join("?" * len(part))
                sql = f"SELECT hash, vector FROM embeddings WHERE model = ? AND dim = ? AND hash IN ({marks})"
                rows.extend(conn.execute(sql, (self._model, dim, *part)))
        rows = [(h, b) for h, b in rows if len(b) == 4 * dim]
        # One join and one frombuffer: far cheaper than a frombuffer per row at 10k+ rows.
        flat = np.frombuffer(b"".join(b for _, b in rows), dtype="<f4").astype(np.float32)
        matrix = flat.reshape(len(rows), dim)
        return {h: matrix[i] for i, (h, _) in enumerate(rows)}

    # -- write side (the caller's connection: the tier's writer thread) ------------------------
    @staticmethod
    def store(
        conn: sqlite3.Connection,
        model: str,
        dim: int,
        items: Sequence[tuple[str, Floats]],
        sentences: Mapping[str, Floats] | None = None,
    ) -> int:
        """Write ``(chunk hash, vector)`` rows for ``model`` in one transaction; return how many.
        ``sentences``: the sentence vectors of some of those hashes, kept beside them (float16)."""
        extra = sentences or {}
        rows = [
            (model, digest, dim, to_blob(vec), _sentence_blob(extra.get(digest), dim))
            for digest, vec in items
            if vec.shape == (dim,)
        ]
        if not rows:
            return 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO embeddings (model, hash, dim, vector, sentences) VALUES (?, ?, ?, ?, ?)", rows
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rows)

    @staticmethod
    def prune(conn: sqlite3.Connection, keep_model: str | None = None) -> int:
        """Delete orphan vectors (no chunk has their hash any more), and other models' if ``keep_model``."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            cur = conn.execute("DELETE FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)")
            removed = cur.rowcount
            if keep_model is not None:
                removed += conn.execute("DELETE FROM embeddings WHERE model != ?", (keep_model,)).rowcount
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return removed


#: A chunk's neighbours, its fellow turns (None: not a turn) and its file (None: not in the index).
_Entry = tuple[dict[int, int], dict[int, int] | None, str | None]
#: What a file's ``files`` row says of its chunks: every commit that changes, adds or deletes a
#: file's chunks rewrites its row (a new content hash, or at least a new ``indexed_at``), or deletes it.
_Stamp = tuple[str, float]


class _Context:
    """The neighbours and turns ``VectorIndex.context`` read, by chunk id, and the ``files`` row of
    each chunk's file as it was when they were read. A chunk's entry depends on its file's chunks
    alone, so when the generation moves it stays valid while that row reads the same: each file
    whose chunks a search asks about is compared once per generation, and a changed or deleted
    file's entries go. An entry for a chunk not in the index, or in a file with no row, lasts one
    generation."""

    def __init__(self, inode: int | None, reach: int, gen: int | None) -> None:
        self.inode, self.reach, self.gen = inode, reach, gen
        self.entries: dict[int, _Entry] = {}
        self.files: dict[str, tuple[_Stamp, list[int]]] = {}  # a file's row, and its chunks kept
        self.checked: set[str] = set()  # files whose row was compared at ``gen`` (or read at it)
        self.current_ids: set[int] = set()  # entries known to hold at ``gen`` (their file in ``checked``)
        self.loose: list[int] = []  # entries for one generation only

    def serves(self, inode: int | None, reach: int, gen: int | None) -> bool:
        """Whether entries kept can serve a read of ``reach`` at ``gen`` in this index file."""
        return gen is not None and (inode, reach) == (self.inode, self.reach) and len(self.entries) <= _CONTEXT_CACHE

    def current(
        self, conn: sqlite3.Connection, gen: int | None, wanted: Sequence[int]
    ) -> tuple[dict[int, _Entry], list[int]]:
        """The entries, with those of ``wanted`` chunks whose file changed since they were read
        dropped (read inside the caller's transaction, at ``gen``), and the ``wanted`` chunks that
        have none (to read). A chunk asked about again at the same generation costs a set lookup."""
        if gen != self.gen:
            self.gen = gen
            self.checked.clear()
            self.current_ids.clear()
            for cid in self.loose:
                self.entries.pop(cid, None)
            self.loose.clear()
        entries, known = self.entries, self.current_ids
        todo = [cid for cid in wanted if cid not in known]
        if not todo:
            return entries, []
        unchecked = {e[2] for cid in todo if (e := entries.get(cid)) is not None and e[2] is not None}
        unchecked -= self.checked
        if unchecked:
            stamps = _file_stamps(conn, unchecked)
            for path in unchecked:
                if stamps.get(path) != self.files[path][0]:
                    self._drop(path)
            self.checked |= unchecked
        fresh = [cid for cid in todo if cid not in entries]
        known.update(cid for cid in todo if cid in entries)
        return entries, fresh

    def add(self, conn: sqlite3.Connection, read: dict[int, _Entry]) -> None:
        """Keep entries read at the current generation, each under its file's row."""
        stamps = _file_stamps(conn, {e[2] for e in read.values() if e[2] is not None})
        for path, stamp in stamps.items():
            kept = self.files.get(path)
            if kept is not None and kept[0] != stamp:  # a file no wanted chunk made us compare
                self._drop(path)
        for cid, (nb, tn, where) in read.items():
            found = stamps.get(where) if where is not None else None
            if where is None or found is None:
                self.entries[cid] = (nb, tn, None)
                self.loose.append(cid)
            else:
                self.entries[cid] = (nb, tn, where)
                self.files.setdefault(where, (found, []))[1].append(cid)
                self.checked.add(where)
            self.current_ids.add(cid)

    def _drop(self, path: str) -> None:
        _, ids = self.files.pop(path)
        for cid in ids:
            self.entries.pop(cid, None)
        self.current_ids.difference_update(ids)


def _file_stamps(conn: sqlite3.Connection, paths: set[str]) -> dict[str, _Stamp]:
    """The ``files`` rows (content hash, ``indexed_at``) of the given paths that have one."""
    out: dict[str, _Stamp] = {}
    for part in _batches(list(paths)):
        marks = ",".join("?" * len(part))
        for path, digest, at in conn.execute(f"SELECT path, hash, indexed_at FROM files WHERE path IN ({marks})", part):
            out[path] = (digest, at)
    return out


@dataclass(frozen=True, slots=True)
class _Rows:
    """Where a matrix's rows are in an int8 copy: ``held`` rows are its rows ``at``; ``missing``
    rows (laid in since the copy) are not in it."""

    held: npt.NDArray[np.intp] | None  # None: every row, the copy's own, in its order
    at: npt.NDArray[np.intp]
    missing: npt.NDArray[np.intp]


class _Copy:
    """An int8 copy and the serials of the rows it holds, with the last matrix it was mapped to."""

    def __init__(self, copy: Int8Pass, serials: Ids) -> None:
        self.copy = copy
        self._order = np.argsort(serials, kind="stable")
        self._sorted = serials[self._order]
        self._mapped: tuple[Ids, _Rows] | None = None

    def rows(self, snap: _Snapshot) -> _Rows:
        """``snap``'s rows in the copy (by serial: a row's vector never changes under its serial)."""
        mapped = self._mapped
        if mapped is not None and mapped[0] is snap.serials:
            return mapped[1]
        serials = snap.serials
        at = np.minimum(np.searchsorted(self._sorted, serials), max(len(self._sorted) - 1, 0))
        found = self._sorted[at] == serials if len(self._sorted) else np.zeros(len(serials), dtype=bool)
        held, where = np.flatnonzero(found), self._order[at[found]]
        whole = len(held) == len(serials) == len(self._sorted) and bool(np.array_equal(where, held))
        rows = _Rows(None if whole else held, where, np.flatnonzero(~found))
        self._mapped = (serials, rows)
        return rows


def dialogue_turns(
    window: Mapping[int, tuple[str, Mapping[int, tuple[int, str]]]],
) -> dict[int, dict[int, int]]:
    """Which chunks are turns of a dialogue, and their fellow turns: ``window`` maps a chunk to its
    heading and the chunks near it in its file (``{offset: (chunk id, heading)}``); the answer maps
    each chunk that is a turn to the turns around it (``{offset: chunk id}``). A dialogue is a run
    of sibling sections (one parent heading) whose own headings name two or more speakers taking
    turns: within the window some speaker speaks twice. Sibling sections on distinct topics, or all
    under one repeated heading, are not turns. The embedded index and the crew store both ask it."""
    out: dict[int, dict[int, int]] = {}
    for cid, (heading, near) in window.items():
        parent, _, speaker = heading.rpartition(" > ")
        siblings = {
            o: (nid, h.rpartition(" > ")[2]) for o, (nid, h) in near.items() if h.rpartition(" > ")[0] == parent
        }
        speakers = [speaker, *(s for _, s in siblings.values())]
        if parent and 2 <= len(set(speakers)) < len(speakers):
            out[cid] = {o: nid for o, (nid, _) in siblings.items()}
    return out


def _sentence_blob(rows: Floats | None, dim: int) -> bytes | None:
    if rows is None or rows.ndim != 2 or rows.shape[1] != dim or not len(rows):
        return None
    return np.asarray(rows, dtype="<f2").tobytes()


def _unit(vector: Floats) -> Floats:
    v = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _unit_rows(matrix: Floats) -> Floats:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Floats = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
    return unit


def _batches(items: Sequence[T]) -> list[Sequence[T]]:
    return [items[i : i + _IN_BATCH] for i in range(0, len(items), _IN_BATCH)]


def _inode(path: Path) -> int | None:
    """The index file's inode (a replaced file has a new one), or None while there is none."""
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None
