"""BM25 search over one tier's index: the read side of :class:`~sidecar.index.tier_index.TierIndex`.

A search is answered from the in-memory postings (:mod:`sidecar.index.postings`) when they
describe the file, else by FTS5 on a reader connection: the same ranking, headings weighted above
bodies; user text is always quoted. A query word also finds its irregular forms, which stemming
does not reach (``came`` for ``come``; :func:`~sidecar.index.tokens.with_forms`), each at
``FORM_WEIGHT`` of its own BM25. Reads run on any thread, each on its own read-only connection.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from sidecar.db import Database
from sidecar.errors import BadRequest
from sidecar.index.db import chunks_gen
from sidecar.index.query import quote_word, terms
from sidecar.index.snippet import SNIPPET_CHARS, Snippet, query_tokens, window

if TYPE_CHECKING:
    from sidecar.index.postings import Snapshot
    from sidecar.index.tokens import QueryTokens

__all__ = ["BODY_WEIGHT", "HEADING_WEIGHT", "Bm25Search", "LivePostings", "RankedChunk"]

HEADING_WEIGHT = 4.0
BODY_WEIGHT = 1.0


class RankedChunk(NamedTuple):
    """One ranked chunk. A named tuple: a search makes one per candidate, and a frozen dataclass
    costs several times as much to build (a setattr per field). Its snippet is made only when it is
    asked for: a hybrid search ranks a hundred candidates and shows ten."""

    id: int
    path: str
    heading: str
    line_start: int
    line_end: int
    text: str  # what the snippet is cut from: the chunk's body, or its heading when the body is empty
    score: float
    hash: str
    plain: bool  # ``is_plain(text)``, as the index stored it
    terms: list[str]  # the query's tokens (``query_tokens``), shared by a search's hits

    def window(self, width: int = SNIPPET_CHARS) -> Snippet:
        return window(self.text, [], width, tokens=self.terms, plain=self.plain)

    @property
    def snippet(self) -> str:
        return self.window().text

    def as_json(self, source: str) -> dict[str, Any]:
        shown = self.window()
        return {
            "source": source,
            "path": self.path,
            "heading": self.heading,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "snippet": shown.text,
            "highlights": [[start, end] for start, end in shown.highlights],
            "score": round(self.score, 6),
        }


@dataclass(slots=True)
class LivePostings:
    """The in-memory BM25 postings of an index, as the writer keeps them and searches read them."""

    on: bool = False  # off until enabled; then kept equal to the index after every commit
    # Built in numpy's layout whatever the tier's size: the process has numpy loaded anyway (its
    # dense search), so the ``array`` layout would save it no memory (``postings.build_snapshot``).
    numpy: bool = False
    snapshot: Snapshot | None = None  # None: search through FTS5
    # The snapshot of the transaction being committed: the commit gives up the GIL, and a search
    # that meets the new generation before the writer thread gets it back can use this one.
    pending: Snapshot | None = None


class Bm25Search:
    """The searches of one index file, from its postings or FTS5. ``ask_refresh`` is called when
    the postings are behind the file (the writer rebuilds them)."""

    def __init__(self, db: Database, postings: LivePostings, ask_refresh: Callable[[], None]) -> None:
        self.db = db
        self.postings = postings
        self._ask_refresh = ask_refresh
        self._tokens: QueryTokens | None = None
        self.forms = True  # a query word also matches its irregular forms (``forms_of``)

    def search(self, query: str, limit: int = 10, *, raw_fts: bool = False) -> list[RankedChunk]:
        """BM25 search, headings weighted above bodies; user text is always quoted. Answered from
        the in-memory postings when they describe the file, else by FTS5: the same ranking."""
        if not raw_fts:
            hits = self.search_postings(query, limit)
            if hits is not None:
                return hits
        return self.search_fts(query, limit, raw_fts=raw_fts)

    def search_postings(
        self, query: str, limit: int = 10, *, phrases: bool = True, max_postings: int | None = None
    ) -> list[RankedChunk] | None:
        """The in-memory answer (well under a millisecond at 10k chunks), or None when only FTS5
        can give it now (postings building, or behind the file). ``phrases=False``: also None
        for a query with a word of several tokens (``multi-agent``), which FTS5 scores;
        ``max_postings``: also None when the query's words have more postings than that to score
        (the cost of a search grows with them). The event loop asks both, and leaves those
        searches to a reader thread."""
        snap = self.postings.snapshot
        if snap is None:
            return None
        words = terms(query)
        if not words:
            return []
        tokens = self.query_tokens(words)
        if not phrases and any(len(t) > 1 for t in tokens):
            return None
        if max_postings is not None:
            forms = [t for _, t in self.forms_of(words, tokens)]
            if _postings_count(snap, tokens + forms) > max_postings:
                return None
        hits = self.from_snapshot(snap, words, tokens, limit)
        if hits is None:
            pending = self.postings.pending  # the database may be at the generation being committed
            if pending is not None and pending is not snap:
                hits = self.from_snapshot(pending, words, tokens, limit)
        if hits is None:
            self._ask_refresh()
        return hits

    def forms_of(self, words: list[str], tokens: list[tuple[str, ...]]) -> list[tuple[str, tuple[str, ...]]]:
        """The irregular forms searched beside ``words`` (``with_forms``: ``come`` -> ``came``),
        with their tokens; none when ``forms`` is off."""
        from sidecar.index.tokens import with_forms

        return with_forms(list(zip(words, tokens, strict=True))) if self.forms else []

    def query_tokens(self, words: list[str]) -> list[tuple[str, ...]]:
        from sidecar.index.tokens import QueryTokens

        if self._tokens is None:
            self._tokens = QueryTokens()
        return self._tokens(words)

    def from_snapshot(
        self, snap: Snapshot, words: list[str], tokens: list[tuple[str, ...]], limit: int
    ) -> list[RankedChunk] | None:
        with self.db.reading() as conn:
            return self._postings_hits(conn, snap, words, tokens, limit)

    def _postings_hits(
        self, conn: sqlite3.Connection, snap: Snapshot, words: list[str], tokens: list[tuple[str, ...]], limit: int
    ) -> list[RankedChunk] | None:
        """The answer from ``snap`` with rows read on ``conn`` (held by the caller), or None if
        the database is at another generation than ``snap``."""
        from sidecar.index.postings import top_k

        def phrase_scores(word: str) -> list[tuple[int, float]]:
            sql = "SELECT rowid, -bm25(chunks_fts, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?"
            return conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, quote_word(word))).fetchall()

        forms = self.forms_of(words, tokens)
        alone: set[int] = set()
        ranked = top_k(
            snap, list(zip(words, tokens, strict=True)), limit, phrase_scores, forms=forms, forms_alone=alone
        )
        if ranked is None:
            return None
        if not ranked:
            return [] if (chunks_gen(conn) or 0) == snap.gen else None
        marks = ",".join("?" * len(ranked))
        rows = conn.execute(
            "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, c.hash, "
            "(SELECT value FROM meta WHERE key = 'chunks_gen'), c.plain "
            f"FROM chunks c WHERE c.id IN ({marks})",
            [cid for cid, _ in ranked],
        ).fetchall()
        # One statement, one read snapshot: the rows and the generation they belong to.
        if len(rows) != len(ranked) or int(rows[0][7]) != snap.gen:
            return None
        by_id = {r[0]: r for r in rows}
        shown = query_tokens(words)
        with_forms = query_tokens(words + [form for form, _ in forms]) if alone else shown
        out = []
        new = tuple.__new__  # RankedChunk's own __new__ with its Python frame, at a hundred hits a search
        for cid, score in ranked:
            r = by_id[cid]
            marked = with_forms if cid in alone else shown  # a form is shown where no query word is
            out.append(new(RankedChunk, (r[0], r[1], r[2], r[4], r[5], r[3] or r[2], score, r[6], bool(r[8]), marked)))
        return out

    def search_fts(self, query: str, limit: int, *, raw_fts: bool) -> list[RankedChunk]:
        words = terms(query)
        forms = [] if raw_fts or not words else [f for f, _ in self.forms_of(words, self.query_tokens(words))]
        match = query if raw_fts else " OR ".join(quote_word(w) for w in words)
        if not match:
            return []
        alone: set[int] = set()  # rows holding a form and no query word
        try:
            with self.db.reading() as conn:
                if forms:
                    rows = self._fts_with_forms(conn, match, " OR ".join(quote_word(f) for f in forms), limit, alone)
                else:
                    sql = (
                        "WITH top AS (SELECT rowid, bm25(chunks_fts, ?, ?) AS rank FROM chunks_fts "
                        "WHERE chunks_fts MATCH ? ORDER BY rank, rowid LIMIT ?) "
                        "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, -top.rank, c.hash, c.plain "
                        "FROM top JOIN chunks c ON c.id = top.rowid ORDER BY top.rank, c.id"
                    )
                    rows = conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, match, limit)).fetchall()
        except sqlite3.OperationalError as exc:
            # SQLITE_ERROR is what FTS5 raises for a bad expression; busy, I/O or corruption are not the client's.
            if raw_fts and exc.sqlite_errorcode == sqlite3.SQLITE_ERROR:
                raise BadRequest(f"invalid FTS5 query: {exc}", code="invalid_fts_syntax") from None
            raise
        shown = query_tokens(words)
        with_forms = query_tokens(words + forms) if alone else shown  # a form is shown where no query word is
        out = []
        for r in rows:
            marked = with_forms if r[0] in alone else shown
            out.append(RankedChunk(r[0], r[1], r[2], r[4], r[5], r[3] or r[2], float(r[6]), r[7], bool(r[8]), marked))
        return out

    def _fts_with_forms(
        self, conn: sqlite3.Connection, words: str, forms: str, limit: int, alone: set[int]
    ) -> list[Any]:
        """FTS5's rows for the query's words (``words``, a MATCH expression) and its irregular
        forms (``forms``): each chunk's score its words' bm25 plus ``FORM_WEIGHT`` x its forms',
        as the postings add them; the best ``limit``, ties by id. ``alone`` receives the rows
        that hold a form and no word."""
        from sidecar.index.tokens import FORM_WEIGHT

        sql = "SELECT rowid, -bm25(chunks_fts, ?, ?) FROM chunks_fts WHERE chunks_fts MATCH ?"
        scores = dict(conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, words)).fetchall())
        own = set(scores)
        for rowid, score in conn.execute(sql, (HEADING_WEIGHT, BODY_WEIGHT, forms)).fetchall():
            scores[rowid] = scores.get(rowid, 0.0) + FORM_WEIGHT * score
        best = heapq.nsmallest(limit, ((-score, rowid) for rowid, score in scores.items()))
        if not best:
            return []
        alone.update(rowid for _, rowid in best if rowid not in own)
        marks = ",".join("?" * len(best))
        found = {
            r[0]: r
            for r in conn.execute(
                "SELECT c.id, c.path, c.heading, c.body, c.line_start, c.line_end, 0.0, c.hash, c.plain "
                f"FROM chunks c WHERE c.id IN ({marks})",
                [rowid for _, rowid in best],
            )
        }
        return [(*found[rowid][:6], -neg, *found[rowid][7:]) for neg, rowid in best if rowid in found]

    def engine_status(self) -> dict[str, Any]:
        """Where BM25 answers from: in-memory postings (and how big), or FTS5 while they build."""
        snap = self.postings.snapshot
        if snap is None:
            return {"engine": "fts5", "postings": "building" if self.postings.on else "off"}
        return {
            "engine": "postings",
            "terms": len(snap.vocab) + len(snap.delta),
            "postings": snap.postings,
            "delta_chunks": snap.delta_slots,
        }

    def counts(self) -> tuple[int, int, int]:
        """(files, chunks, bytes of the files) in the index."""
        with self.db.reading() as conn:
            files, size = conn.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files").fetchone()
            (chunks,) = conn.execute("SELECT COUNT(*) FROM chunks").fetchone()
        return int(files), int(chunks), int(size)


def _postings_count(snap: Snapshot, tokens: list[tuple[str, ...]]) -> int:
    """How many postings a search of single-token ``tokens`` scores in ``snap``, weighed by what
    scoring one costs in its layout (a small tier's, scored in Python, count twice)."""
    total = 0
    for token in tokens:
        if len(token) != 1:
            continue
        row = snap.vocab.get(token[0])
        if row is not None:
            total += int(snap.offsets[row + 1] - snap.offsets[row])
        extra = snap.delta.get(token[0])
        if extra is not None:
            total += len(extra[0])
    return total * snap.POSTING_COST
