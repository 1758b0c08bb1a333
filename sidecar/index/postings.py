"""BM25 top-k from an in-memory copy of the FTS5 postings: FTS5's ranking, without its per-row cost.

FTS5's ``bm25()`` is an auxiliary function: it runs once for every row that matches, and an
OR query of a few common words matches a tenth of a tier. This module keeps, per tier, the
postings FTS5 already computed (term -> chunks, with the heading/body weighted term frequency)
and every chunk's token count, and scores a query term by term. The arithmetic is FTS5's own
(``fts5_aux.c``, ``fts5Bm25Function``):

    idf   = log((N - n + 0.5) / (n + 0.5)), or 1e-6 when that is not positive
    score = sum over phrases of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))

with N the chunks, n the chunks holding the phrase, f = 4 * (hits in the heading) + (hits in the
body), D the chunk's tokens and avgdl the mean, k1 = 1.2, b = 0.75, summed in the same order, so
scores are equal to FTS5's to the last bit. A phrase of several tokens (``multi-agent``,
``2025-03-04``) is scored by FTS5 itself, one phrase at a time: bm25 is a sum of independent
per-phrase terms, so its contribution adds in exactly.

Two layouts hold the same postings. A tier of at most ``postings_base.SMALL_CHUNKS`` chunks (most tiers) keeps
them in ``array``s (2 bytes a posting's chunk, 1 its frequency) and scores them in Python: a
query's terms have a few thousand postings there, a fraction of a millisecond, and the process
never loads numpy (some 10-15 MB of an idle sidecar). A larger tier keeps them as numpy arrays
and scores them vectorised (:mod:`sidecar.index.postings_numpy`): its common words have tens of
thousands of postings. Both compute every score with the same operations in the same order.

Snapshots are immutable. The tier's one writer thread derives the next one after each commit: a
base (first built from an ``fts5vocab`` scan of the index), plus a delta of chunks added since
(tokenized by a scratch FTS5 table with the same tokenizer) and a mask of chunks deleted since.
Once a few hundred chunks are added or dead, the delta is merged into a fresh base from the
arrays alone (``compact``: no scan), so the delta's small per-term arrays and the dead chunks
never pile up under a steady stream of writes. A tier that grows past ``SMALL_CHUNKS`` (or a
large one that shrinks to half of it) is built again in the other layout; a tier whose process
has loaded numpy for its dense search (an embedder) is held in numpy's layout at any size. Each snapshot carries
the index's change generation; a reader that finds the database at another generation (a commit
not yet applied, or another process that wrote the file) answers from FTS5 instead.
"""

from __future__ import annotations

import bisect
import heapq
import math
import operator
import sqlite3
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, ClassVar, TypeAlias

from sidecar.index import postings_base
from sidecar.index.postings_base import (
    BODY_WEIGHT,
    COMPACT_MIN,
    HEADING_WEIGHT,
    K1,
    AddedChunk,
    B,
    PhraseScores,
)
from sidecar.index.tokens import FORM_WEIGHT
from sidecar.index.tokens import scratch as _scratch

if TYPE_CHECKING:
    from sidecar.index import postings_numpy

__all__ = [
    "K1",
    "AddedChunk",
    "B",
    "SmallSnapshot",
    "Snapshot",
    "apply_changes",
    "build_snapshot",
    "compact",
    "count_terms",
    "top_k",
]

# Instances of the vocab scan read per statement: bounds the transient memory of a build.
_SCAN_BATCH = 50_000
_K1_PLUS_1 = K1 + 1.0
_NUMERATOR = [f * _K1_PLUS_1 for f in range(256)]  # a one-byte frequency's f * (k1 + 1)


class Terms(Mapping[str, int]):
    """A small tier's vocabulary, term -> row, held as one string of UTF-8 bytes: the terms in
    FTS5's order (their bytes' order), each ended by a NUL byte. A row is a term's rank, found by
    a binary search (a few microseconds); a ``dict`` of ``str`` keys and ``int`` rows would hold
    some 100 bytes a term more (2 MB at 20,000 terms)."""

    __slots__ = ("_blob", "_starts")

    def __init__(self, joined: str) -> None:
        """``joined``: the terms, in order, separated by NUL characters."""
        self._blob = (joined + "\x00").encode() if joined else b""
        starts: array[int] = array("I", [0])
        blob, at = self._blob, self._blob.find(0)
        while at >= 0:
            starts.append(at + 1)
            at = blob.find(0, at + 1)
        self._starts = starts

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __iter__(self) -> Iterator[str]:
        blob, starts = self._blob, self._starts
        for i in range(len(starts) - 1):
            yield blob[starts[i] : starts[i + 1] - 1].decode()

    def __getitem__(self, term: str) -> int:
        key, blob, starts = term.encode(), self._blob, self._starts
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if blob[starts[mid] : starts[mid + 1] - 1] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(starts) - 1 and blob[starts[lo] : starts[lo + 1] - 1] == key:
            return lo
        raise KeyError(term)


@dataclass(frozen=True, eq=False)
class SmallSnapshot(postings_base.Tidiness):
    """The postings of one committed state of a small tier's index (generation ``gen``), in
    ``array``s: the numpy layout's (:class:`postings_numpy.Snapshot`), scored in Python."""

    #: What scoring a posting costs, in the numpy layout's (``bm25``: which searches the event loop answers).
    POSTING_COST: ClassVar[int] = 2

    gen: int
    vocab: Terms  # base term -> row of ``offsets``
    offsets: array[int]  # base term t's postings are [offsets[t], offsets[t + 1])
    slots: array[int]  # posting -> chunk slot: "H" (2 bytes) up to 65,536 chunks, else "i"
    freqs: array[int]  # posting -> weighted term frequency: "B" where every one fits a byte, else "H"
    ids: array[int]  # slot -> chunk id; base slots first (ascending ids), then delta slots
    lengths: array[float]  # slot -> tokens in the chunk
    alive: bytearray  # slot -> 1 while in the index
    base_slots: int
    # term -> postings (slots, frequencies) of chunks added since the base ("i" and "H" arrays)
    delta: dict[str, tuple[array[int], array[int]]]
    delta_ids: dict[int, int]  # chunk id -> slot, for live delta chunks
    live: int  # N: chunks in the index
    total_tokens: float
    dead: list[int]  # the slots not alive (a few hundred at most: see compact)
    _norm: array[float] | None = field(default=None, init=False, repr=False)

    @property
    def norm(self) -> array[float]:
        """slot -> k1 * (1 - b + b * D / avgdl): made at the snapshot's first search (a write that
        no search reads makes none)."""
        norm = self._norm
        if norm is None:
            avgdl = self.total_tokens / self.live if self.live else 1.0
            if avgdl > 0:
                norm = array("d", [K1 * (1 - B + B * d / avgdl) for d in self.lengths])
            else:
                norm = array("d", [K1]) * len(self.lengths)
            object.__setattr__(self, "_norm", norm)
        return norm

    @property
    def untidy_limit(self) -> int:
        """Untidy slots past which the next snapshot is compacted. Three times numpy's floor and
        a quarter of its base where it is larger: a compaction in Python costs some 170 ms of CPU
        at 10k chunks (numpy's 13), in the commit of the write that meets it, while a search pays
        only a few microseconds a dead slot; the delta stays under ``wants_rebuild``'s 1,000."""
        return max(3 * COMPACT_MIN, self.base_slots // 8)

    def wants_rebuild(self) -> bool:
        """True once the delta is large enough that a fresh base is cheaper to query, or the tier
        has grown past ``SMALL_CHUNKS`` (its next build is numpy's)."""
        return self.delta_outgrown() or self.live > postings_base.SMALL_CHUNKS

    def slots_of(self, chunk_ids: Iterable[int]) -> list[int] | None:
        """The live slot of each chunk id, or None if any is not live in this snapshot."""
        ids, alive, base = self.ids, self.alive, self.base_slots
        out = []
        for cid in chunk_ids:
            at = bisect.bisect_left(ids, cid, 0, base)
            if at < base and ids[at] == cid and alive[at]:
                out.append(at)
                continue
            slot = self.delta_ids.get(cid)
            if slot is None:
                return None
            out.append(slot)
        return out

    def postings_of(self, term: str) -> tuple[list[tuple[array[int], array[int]]], int] | None:
        """The postings of ``term``: its runs of (slots, weighted frequencies), the base's then
        the delta's, and how many of them are alive; or None if none is. The slots may include
        dead ones: a search scores them all and drops ``dead`` once."""
        row = self.vocab.get(term)
        runs = []
        if row is not None:
            lo, hi = self.offsets[row], self.offsets[row + 1]
            runs.append((self.slots[lo:hi], self.freqs[lo:hi]))
        extra = self.delta.get(term)
        if extra is not None:
            runs.append(extra)
        if not self.dead:
            live = sum(len(s) for s, _ in runs)
        else:
            live = sum(sum(map(self.alive.__getitem__, s)) for s, _ in runs)
        return (runs, live) if live else None


#: A tier's postings in either layout.
Snapshot: TypeAlias = "SmallSnapshot | postings_numpy.Snapshot"


# -- building ----------------------------------------------------------------------------------
def build_snapshot(conn: sqlite3.Connection, gen: int, *, numpy: bool = False) -> Snapshot:
    """Read every posting of ``chunks_fts`` through fts5vocab; the caller holds a read snapshot
    (or is the only writer) so the scan, the chunk ids and ``gen`` describe one state. A tier of
    more than ``SMALL_CHUNKS`` chunks is held by numpy, and so is any tier with ``numpy`` (a
    process that has numpy loaded anyway, for its dense search: there the ``array`` layout would
    save no memory and cost about twice the CPU a search), at any size from then on."""
    if numpy:
        from sidecar.index import postings_numpy

        return postings_numpy.build_snapshot(conn, gen, pinned=True)
    ids = array("q", [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")])
    if len(ids) > postings_base.SMALL_CHUNKS:
        from sidecar.index import postings_numpy

        del ids
        return postings_numpy.build_snapshot(conn, gen)
    return _build(conn, gen, ids)


def _build(conn: sqlite3.Connection, gen: int, ids: array[int]) -> SmallSnapshot:
    for kind in ("row", "col", "instance"):
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_v{kind[:4]} USING fts5vocab(main, chunks_fts, '{kind}')"
        )
    # What the snapshot keeps of the vocabulary (its terms, and a row number each) is made first,
    # together in memory: one of them made among the scan's thousands of short-lived strings would
    # keep their allocator pages resident after the build.
    listed = conn.execute(
        "SELECT group_concat(term, char(0)), group_concat(doc), group_concat(cnt) FROM temp.chunks_vrow"
    ).fetchone()
    vocab = Terms(listed[0] or "")
    terms: list[str] = listed[0].split("\x00") if listed[0] else []
    if not all(map(operator.lt, terms, terms[1:])):
        raise RuntimeError("fts5vocab lists the terms out of their order")
    docs, hits = (array("q", map(int, text.split(","))) if text else array("q") for text in listed[1:])
    del listed
    slot_of = {cid: slot for slot, cid in enumerate(ids)}
    built = _Built(array(_slot_type(len(ids))), slot_of.__getitem__)
    built.scan(conn, terms, docs, hits, wide=bool(ids) and ids[-1] >= 1 << 32)
    del slot_of, docs, hits
    return _base(
        gen,
        vocab=vocab,
        offsets=built.offsets,
        slots=built.slots,
        freqs=_narrowed(built.freqs),
        ids=ids,
        lengths=built.lengths(len(ids)),
    )


@dataclass(slots=True)
class _Built:
    """A base's postings as a build appends them, term by term."""

    slots: array[int]
    slot: Callable[[int], int]  # chunk id -> its slot
    freqs: array[int] = field(default_factory=lambda: array("H"))
    offsets: array[int] = field(default_factory=lambda: array("I", [0]))
    tokens: Counter[int] = field(default_factory=Counter)  # slot -> its chunk's tokens

    def scan(self, conn: sqlite3.Connection, terms: list[str], docs: array[int], hits: array[int], wide: bool) -> None:
        """Every term's postings, from the instances fts5vocab lists (``docs`` chunks and ``hits``
        instances a term); ``wide``: a chunk id needs more than 32 bits."""
        heads = dict(conn.execute("SELECT term, cnt FROM temp.chunks_vcol WHERE col = 'heading'").fetchall())
        # Each column's instances of a run of terms as one string of fixed-width hexadecimal chunk
        # ids, in (term, chunk) order, read into an array in C: no Python object per instance.
        digits, kind = ("%016x", "Q") if wide else ("%08x", "I")
        sql = (
            f"SELECT group_concat(printf('{digits}', doc), '') FILTER (WHERE col = 'body'), "
            f"group_concat(printf('{digits}', doc), '') FILTER (WHERE col = 'heading') "
            "FROM temp.chunks_vinst WHERE term >= ? AND term <= ?"
        )
        start = 0
        while start < len(terms):
            end, budget = start + 1, hits[start]  # a run of whole terms with about _SCAN_BATCH instances
            while end < len(terms) and budget + hits[end] <= _SCAN_BATCH:
                budget += hits[end]
                end += 1
            body, heading = (_ids(text, kind) for text in conn.execute(sql, (terms[start], terms[end - 1])).fetchone())
            self.tokens.update(map(self.slot, body))
            self.tokens.update(map(self.slot, heading))
            self.add_terms(zip(terms[start:end], docs[start:end], hits[start:end], strict=True), heads, body, heading)
            start = end

    def lengths(self, chunks: int) -> array[float]:
        """slot -> tokens in the chunk."""
        lengths = array("d", [0.0]) * chunks
        for at, n in self.tokens.items():
            lengths[at] = n
        return lengths

    def add_terms(
        self, rows: Iterable[tuple[str, int, int]], heads: dict[str, int], body: array[int], heading: array[int]
    ) -> None:
        """Append the postings of the terms of ``rows`` (term, chunks, instances), whose instances
        are ``body`` and ``heading`` (chunk ids) in (term, chunk) order; ``heads``: each term's
        instances in a heading."""
        slot, slots, freqs, offsets = self.slot, self.slots, self.freqs, self.offsets
        at_body = at_head = 0
        for term, docs, hits in rows:
            in_head = heads.get(term, 0)
            in_body = hits - in_head
            run = body[at_body : at_body + in_body]
            at_body += in_body
            if not in_head and in_body == docs:  # once in each chunk: most terms
                slots.extend(map(slot, run))
                freqs.extend(array("H", [BODY_WEIGHT]) * in_body)
            elif not in_head and in_body <= 0xFFFF:
                counts = Counter(run)
                slots.extend(map(slot, counts))
                freqs.extend(counts.values())
            else:  # the heading's hits weigh more; a count may not fit
                counts = Counter(run)
                weighed = dict(zip(map(slot, counts), counts.values(), strict=True))
                for cid, n in Counter(heading[at_head : at_head + in_head]).items():
                    s = slot(cid)
                    weighed[s] = weighed.get(s, 0) + n * HEADING_WEIGHT
                at_head += in_head
                held = sorted(weighed)
                slots.extend(held)
                if in_body + in_head * HEADING_WEIGHT <= 0xFFFF:
                    freqs.extend(map(weighed.__getitem__, held))
                else:
                    freqs.extend([min(weighed[s], 0xFFFF) for s in held])
            offsets.append(len(slots))
            if offsets[-1] - offsets[-2] != docs:
                raise RuntimeError(f"fts5vocab scan found {offsets[-1] - offsets[-2]} chunks for {term!r}, not {docs}")
        if at_body != len(body) or at_head != len(heading):
            raise RuntimeError("fts5vocab instance scan is not in term, doc order")


def _ids(text: str | None, kind: str) -> array[int]:
    """Chunk ids written as fixed-width hexadecimal, one after another, as an array."""
    ids: array[int] = array(kind, bytes.fromhex(text or ""))
    if sys.byteorder == "little":
        ids.byteswap()  # written most significant digit first
    return ids


def _base(
    gen: int,
    *,
    vocab: Terms,
    offsets: array[int],
    slots: array[int],
    freqs: array[int],
    ids: array[int],
    lengths: array[float],
) -> SmallSnapshot:
    """A snapshot that is all base (a fresh build or a compaction): every chunk alive, no delta."""
    return SmallSnapshot(
        gen=gen,
        vocab=vocab,
        offsets=offsets,
        slots=slots,
        freqs=freqs,
        ids=ids,
        lengths=lengths,
        alive=bytearray(b"\x01") * len(ids),
        base_slots=len(ids),
        delta={},
        delta_ids={},
        live=len(ids),
        total_tokens=float(sum(lengths)),
        dead=[],
    )


def _slot_type(chunks: int) -> str:
    """The type of a base's slots (0 .. chunks - 1): 2 bytes where they fit, else 4."""
    return "H" if chunks <= 1 << 16 else "i"


def _narrowed(freqs: array[int]) -> array[int]:
    """A base's weighted frequencies ("H") in one byte each when every one fits (most tiers)."""
    raw = freqs.tobytes()
    low, high = (raw[0::2], raw[1::2]) if sys.byteorder == "little" else (raw[1::2], raw[0::2])
    return array("B", low) if high.count(0) == len(high) else freqs


def apply_changes(snap: Snapshot, gen: int, deleted: Iterable[int], added: Sequence[AddedChunk]) -> Snapshot:
    """The next snapshot: ``deleted`` chunk ids gone, ``added`` chunks in (an id may be both:
    SQLite reuses the highest rowid after it was deleted); compacted when it has grown untidy."""
    if not isinstance(snap, SmallSnapshot):
        from sidecar.index import postings_numpy

        return postings_numpy.apply_changes(snap, gen, deleted, added)
    nxt = _apply(snap, gen, deleted, added)
    return _compact(nxt) if nxt.wants_compaction() else nxt


def _apply(snap: SmallSnapshot, gen: int, deleted: Iterable[int], added: Sequence[AddedChunk]) -> SmallSnapshot:
    alive = bytearray(snap.alive)
    delta_ids = dict(snap.delta_ids)
    dead = list(snap.dead)
    live = snap.live
    total = snap.total_tokens
    gone = sorted(set(deleted))
    if gone:
        found = snap.slots_of(gone)
        if found is None:
            raise RuntimeError("a deleted chunk is not in the postings snapshot")
        for s in found:
            alive[s] = 0
        dead += found
        live -= len(found)
        total -= float(sum(snap.lengths[s] for s in found))
        for cid in gone:
            delta_ids.pop(cid, None)
    ids, lengths = snap.ids, snap.lengths
    delta = snap.delta
    if added:
        first = len(ids)
        ids = ids + array("q", [c.id for c in added])
        lengths = lengths + array("d", [c.tokens for c in added])
        alive += b"\x01" * len(added)
        live += len(added)
        total += float(sum(c.tokens for c in added))
        delta = postings_base.with_added(delta, delta_ids, added, first)
    return SmallSnapshot(
        gen=gen,
        vocab=snap.vocab,
        offsets=snap.offsets,
        slots=snap.slots,
        freqs=snap.freqs,
        ids=ids,
        lengths=lengths,
        alive=alive,
        base_slots=snap.base_slots,
        delta=delta,
        delta_ids=delta_ids,
        live=live,
        total_tokens=total,
        dead=dead,
    )


def compact(snap: Snapshot) -> Snapshot:
    """The same postings as one base: the delta merged in and dead chunks dropped, from the
    snapshot's arrays alone (no scan of the index). Slots are renumbered by ascending chunk id,
    as a built base has them; terms left without postings are dropped."""
    if not isinstance(snap, SmallSnapshot):
        from sidecar.index import postings_numpy

        return postings_numpy.compact(snap)
    return _compact(snap)


def _compact(snap: SmallSnapshot) -> SmallSnapshot:
    ids = snap.ids
    order = sorted(compress(range(len(ids)), snap.alive), key=ids.__getitem__)  # new slot -> old slot
    renumber: array[int] = array("i", [-1]) * len(ids)
    for new, old in enumerate(order):
        renumber[old] = new
    # The base's slots keep their numbers unless a base chunk died or a delta chunk sorts inside it.
    same_base = order[: snap.base_slots] == list(range(snap.base_slots))
    to_new = renumber.__getitem__
    new_terms = sorted(t for t in snap.delta if t not in snap.vocab)
    # Every term in order (the base's rows, with the delta's new terms merged in), with its base row.
    rows = heapq.merge(((t, r) for r, t in enumerate(snap.vocab)), ((t, -1) for t in new_terms), key=_first)
    slots: array[int] = array(_slot_type(len(order)))
    freqs: array[int] = array("H")
    offsets: array[int] = array("I", [0])
    kept: list[str] = []
    for term, row in rows:
        run_s: Sequence[int] = ()
        run_f: Sequence[int] = ()
        if row >= 0:
            lo, hi = snap.offsets[row], snap.offsets[row + 1]
            run_s, run_f = snap.slots[lo:hi], snap.freqs[lo:hi]
            if not same_base:
                moved = list(map(to_new, run_s))
                if -1 in moved:
                    pairs = [(s, f) for s, f in zip(moved, run_f, strict=True) if s >= 0]
                    moved, run_f = [s for s, _ in pairs], [f for _, f in pairs]
                run_s = moved
        extra = snap.delta.get(term)
        if extra is not None:
            more = sorted((to_new(s), f) for s, f in zip(*extra, strict=True) if to_new(s) >= 0)
            if more and run_s and more[0][0] < run_s[-1]:  # a delta chunk that sorts inside the base
                more = sorted([*zip(run_s, run_f, strict=True), *more])
                run_s, run_f = (), ()
            if more:
                run_s = [*run_s, *(s for s, _ in more)]
                run_f = [*run_f, *(f for _, f in more)]
        if not run_s:
            continue
        kept.append(term)
        _extend(slots, run_s)
        _extend(freqs, run_f)
        offsets.append(len(slots))
    # Shared while no term is new or gone: snapshots never change it.
    vocab = snap.vocab if len(kept) == len(snap.vocab) and not new_terms else Terms("\x00".join(kept))
    new_ids = array("q", map(ids.__getitem__, order))
    lengths = array("d", map(snap.lengths.__getitem__, order))
    return _base(
        snap.gen, vocab=vocab, offsets=offsets, slots=slots, freqs=_narrowed(freqs), ids=new_ids, lengths=lengths
    )


def _first(pair: tuple[str, int]) -> str:
    return pair[0]


def _extend(out: array[int], run: Sequence[int]) -> None:
    """Append ``run`` to ``out``: an array of another item size goes through a list."""
    out.extend(run.tolist() if isinstance(run, array) and run.typecode != out.typecode else run)


def count_terms(chunks: Sequence[tuple[int, str, str]]) -> list[AddedChunk]:
    """Tokenize (id, heading, body) chunks as the index does: tokens and weighted frequencies."""
    if not chunks:
        return []
    rows = _scratch().tokenize(
        "INSERT INTO s (rowid, heading, body) VALUES (?, ?, ?)",
        chunks,
        "SELECT doc, term, sum(col = 'heading'), count(*) FROM sv GROUP BY doc, term",
    )
    freqs: dict[int, dict[str, int]] = {cid: {} for cid, _, _ in chunks}
    tokens: dict[int, int] = dict.fromkeys(freqs, 0)
    for doc, term, heads, count in rows:
        freqs[doc][term] = heads * HEADING_WEIGHT + (count - heads) * BODY_WEIGHT
        tokens[doc] += count
    return [AddedChunk(cid, tokens[cid], freqs[cid]) for cid, _, _ in chunks]


# -- scoring -----------------------------------------------------------------------------------
def top_k(
    snap: Snapshot,
    phrases: Sequence[tuple[str, tuple[str, ...]]],
    limit: int,
    phrase_scores: PhraseScores,
    *,
    forms: Sequence[tuple[str, tuple[str, ...]]] = (),
    forms_alone: set[int] | None = None,
) -> list[tuple[int, float]] | None:
    """The best ``limit`` (chunk id, score) pairs, best first (ties by id), or None when the
    snapshot cannot answer (a phrase's rows are not all live in it).

    ``phrases``: each query word with its FTS5 tokens. ``phrase_scores(word)`` returns FTS5's own
    bm25 score of every row holding a word of several tokens (it is given the word, not the
    tokens: porter stemming is not idempotent); single tokens are scored here. ``forms``: the
    irregular forms of the query's words (``with_forms``), scored the same way and added at
    ``FORM_WEIGHT``: a chunk's score is the sum of its words' BM25 plus ``FORM_WEIGHT`` x the
    sum of its forms', as the FTS5 path adds them; ``forms_alone``, when given, receives the
    ranked chunks that hold a form and none of ``phrases``."""
    if not isinstance(snap, SmallSnapshot):
        from sidecar.index import postings_numpy

        return postings_numpy.top_k(snap, phrases, limit, phrase_scores, forms=forms, forms_alone=forms_alone)
    if snap.live == 0 or not (phrases or forms):
        return []
    own = _scores(snap, phrases, phrase_scores)
    other = _scores(snap, forms, phrase_scores) if forms else None
    if own is None or (other is None and forms):
        return None
    scores, touched = own
    if other is not None:
        more, touched_more = other
        if more:
            scores = dict(scores)
            get = scores.get
            for s, v in more.items():  # 0.0 for a slot the words miss, as the arrays' sum has it
                scores[s] = get(s, 0.0) + FORM_WEIGHT * v
        touched += touched_more
    if not touched:
        return []
    ranked = _best(snap, scores, limit)
    if forms_alone is not None and other is not None:
        words = own[0]
        forms_alone.update(snap.ids[s] for _, _, s in ranked if words.get(s, 0.0) == 0.0)
    return [(cid, -neg) for neg, cid, _ in ranked]


def _scores(
    snap: SmallSnapshot, phrases: Sequence[tuple[str, tuple[str, ...]]], phrase_scores: PhraseScores
) -> tuple[dict[int, float], int] | None:
    """Each scored slot's BM25 for ``phrases`` and how many postings were scored, or None when a
    phrase's rows are not all live in ``snap``. A slot's sum starts from its first phrase's
    contribution and adds the next ones in phrase order, as FTS5's loop over phrases does."""
    scores: dict[int, float] = {}
    touched = 0
    for word, tokens in phrases:
        if not tokens:
            continue
        if len(tokens) > 1:
            rows = phrase_scores(word)
            if rows:
                held = snap.slots_of([r[0] for r in rows])
                if held is None:
                    return None
                _add(scores, held, [r[1] for r in rows])
                touched += len(held)
            continue
        found = snap.postings_of(tokens[0])
        if found is None:
            continue
        runs, n = found
        idf = math.log((snap.live - n + 0.5) / (n + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        norm = snap.norm
        for slots, freqs in runs:
            if freqs.typecode == "B":  # f * (k1 + 1) looked up: the same product, made once
                parts = [idf * (_NUMERATOR[f] / (f + norm[s])) for s, f in zip(slots, freqs, strict=True)]
            else:
                parts = [idf * ((f * _K1_PLUS_1) / (f + norm[s])) for s, f in zip(slots, freqs, strict=True)]
            _add(scores, slots, parts)
            touched += len(slots)
    return scores, touched


def _add(scores: dict[int, float], slots: Sequence[int], parts: list[float]) -> None:
    """Add one phrase's contributions (distinct slots) to ``scores``."""
    if not scores:
        scores.update(zip(slots, parts, strict=True))
        return
    get = scores.get
    for s, v in zip(slots, parts, strict=True):
        scores[s] = get(s, 0.0) + v


def _best(snap: SmallSnapshot, scores: dict[int, float], limit: int) -> list[tuple[float, int, int]]:
    """The best ``limit`` (-score, chunk id, slot) of ``scores``, best first, ties by id."""
    for s in snap.dead:  # scored with the live ones (each slot's sum is its own)
        scores.pop(s, None)
    if len(scores) > 4 * limit:
        # The limit-th best score: every slot scoring at least that is a candidate, so ties at the
        # cut are broken by id below.
        kth = heapq.nlargest(limit, scores.values())[-1]
        picked = [(s, v) for s, v in scores.items() if v >= kth]
    else:
        picked = list(scores.items())
    ids = snap.ids
    return sorted([(-v, ids[s], s) for s, v in picked if v > 0.0])[:limit]
