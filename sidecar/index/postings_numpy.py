"""The in-memory BM25 postings of a large tier, held and scored with numpy (:mod:`sidecar.index.postings`).

A tier of more than ``postings_base.SMALL_CHUNKS`` chunks keeps, as numpy arrays, the postings FTS5
already computed (term -> chunks, with the heading/body weighted term frequency) and every chunk's
token count, and scores a query with a few vectorised operations per term: a common word of a
100k-chunk tier has tens of thousands of postings, which a Python loop would take milliseconds to
score. The arithmetic and the snapshots' life (base, delta, compaction) are the module
:mod:`sidecar.index.postings` describes; a smaller tier keeps the same layout in ``array``s and
scores it in Python, so it never loads numpy, unless its process has loaded numpy anyway for a
dense search: then a small tier is held in this layout too (``pinned``), which scores a query's
words in about half the CPU.
"""

from __future__ import annotations

import math
import mmap
import sqlite3
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import numpy as np
import numpy.typing as npt

from sidecar.heap import release_free_memory
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

__all__ = ["Snapshot", "apply_changes", "build_snapshot", "compact", "top_k"]

# Rows of the vocab scan fetched per statement: bounds the transient memory of a build.
_SCAN_BATCH = 250_000

IntArray = npt.NDArray[np.int64]
# A base's slots are uint16 when it has at most 65,536 chunks (2 bytes a posting, not 4: most
# tiers), int32 otherwise; the delta's and every derived array's are int32.
SlotArray = npt.NDArray[np.integer[Any]]
# A base's weighted frequencies are uint8 when every one is at most 255 (1 byte a posting: most
# tiers), uint16 otherwise; the delta's are uint16.
FreqArray = npt.NDArray[np.unsignedinteger[Any]]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Snapshot(postings_base.Tidiness):
    """The postings of one committed state of a tier index (generation ``gen``)."""

    #: What scoring a posting costs, in this layout's units (``bm25``: which searches the event loop answers).
    POSTING_COST: ClassVar[int] = 1

    gen: int
    vocab: dict[str, int]  # base term -> row of ``offsets``
    offsets: IntArray  # base term t's postings are [offsets[t], offsets[t + 1])
    slots: SlotArray  # posting -> chunk slot
    freqs: FreqArray  # posting -> weighted term frequency
    ids: IntArray  # slot -> chunk id; base slots first (ascending ids), then delta slots
    lengths: FloatArray  # slot -> tokens in the chunk
    alive: BoolArray  # slot -> still in the index
    base_slots: int
    # term -> postings (slots, frequencies) of chunks added since the base, as int32 and uint16
    # ``array``s: an apply joins a term's old and new ones in C, not with two numpy calls a term.
    delta: dict[str, tuple[array[int], array[int]]]
    delta_ids: dict[int, int]  # chunk id -> slot, for live delta chunks
    live: int  # N: chunks in the index
    total_tokens: float
    # Held in this layout whatever the tier's size (its process has numpy loaded for a dense
    # search): it never asks to move to ``array``s.
    pinned: bool = False
    norm: FloatArray = field(init=False)  # slot -> k1 * (1 - b + b * D / avgdl)
    dead: SlotArray = field(init=False)  # the slots not alive (a few hundred at most: see compact)

    def __post_init__(self) -> None:
        avgdl = self.total_tokens / self.live if self.live else 1.0
        norm = K1 * (1 - B + B * self.lengths / avgdl) if avgdl > 0 else np.full(len(self.lengths), K1)
        object.__setattr__(self, "norm", norm)
        dead = np.flatnonzero(~self.alive).astype(np.int32) if self.live < len(self.ids) else np.empty(0, np.int32)
        object.__setattr__(self, "dead", dead)

    @classmethod
    def of_base(
        cls,
        *,
        gen: int,
        vocab: dict[str, int],
        offsets: IntArray,
        slots: SlotArray,
        freqs: FreqArray,
        ids: IntArray,
        lengths: FloatArray,
        pinned: bool = False,
    ) -> Snapshot:
        """A snapshot that is all base (a fresh build or a compaction): every chunk alive, no delta."""
        return cls(
            gen=gen,
            vocab=vocab,
            offsets=offsets,
            slots=slots,
            freqs=freqs,
            ids=ids,
            lengths=lengths,
            alive=np.ones(len(ids), dtype=np.bool_),
            base_slots=len(ids),
            delta={},
            delta_ids={},
            live=len(ids),
            total_tokens=float(lengths.sum()),
            pinned=pinned,
        )

    @property
    def untidy_limit(self) -> int:
        """Untidy slots past which the next snapshot is compacted."""
        return max(COMPACT_MIN, self.base_slots // 32)

    def wants_rebuild(self) -> bool:
        """True once the delta is large enough that a fresh base is cheaper to query (``apply_changes``
        compacts long before that: only a snapshot built without it can get there), and once the
        tier has shrunk to half ``SMALL_CHUNKS``: its next build holds it in ``array``s (unless
        ``pinned``: held in this layout at any size)."""
        return self.delta_outgrown() or (not self.pinned and self.live <= postings_base.SMALL_CHUNKS // 2)

    def slots_of(self, chunk_ids: IntArray) -> SlotArray | None:
        """The live slot of each chunk id, or None if any is not live in this snapshot."""
        out = np.zeros(len(chunk_ids), dtype=np.int32)
        if self.base_slots:
            base_ids = self.ids[: self.base_slots]
            pos = np.minimum(np.searchsorted(base_ids, chunk_ids), self.base_slots - 1)
            found = (base_ids[pos] == chunk_ids) & self.alive[pos]
            out[:] = pos
        else:
            found = np.zeros(len(chunk_ids), dtype=np.bool_)
        for i in np.flatnonzero(~found).tolist():
            slot = self.delta_ids.get(int(chunk_ids[i]))
            if slot is None:
                return None
            out[i] = slot
        return out

    def postings_of(self, term: str) -> tuple[SlotArray, FreqArray, int] | None:
        """The postings of ``term``: (slots, weighted frequencies, how many of them are alive),
        or None if none is. The slots may include dead ones: a search scores them all and zeroes
        ``dead`` once, rather than masking every term's arrays."""
        row = self.vocab.get(term)
        extra = self.delta.get(term)
        if row is None:
            if extra is None:
                return None
            slots, freqs = _delta_arrays(extra)
        else:
            lo, hi = self.offsets[row : row + 2].tolist()
            slots, freqs = self.slots[lo:hi], self.freqs[lo:hi]
            if extra is not None:
                more_slots, more_freqs = _delta_arrays(extra)
                slots, freqs = np.concatenate((slots, more_slots)), np.concatenate((freqs, more_freqs))
        live = len(slots) if not len(self.dead) else int(np.count_nonzero(self.alive[slots]))
        return (slots, freqs, live) if live else None


def _delta_arrays(pair: tuple[array[int], array[int]]) -> tuple[SlotArray, FreqArray]:
    """A delta term's postings as numpy arrays over the same memory (C int slots, unsigned short frequencies)."""
    return np.frombuffer(pair[0], dtype=np.intc), np.frombuffer(pair[1], dtype=np.ushort)  # "i", "H"


# -- building ----------------------------------------------------------------------------------
def build_snapshot(conn: sqlite3.Connection, gen: int, *, pinned: bool = False) -> Snapshot:
    """Read every posting of ``chunks_fts`` through fts5vocab; the caller holds a read snapshot
    (or is the only writer) so the scan, the chunk ids and ``gen`` describe one state.
    ``pinned``: held in this layout at any size, and so are the snapshots derived from it."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vrow USING fts5vocab(main, chunks_fts, 'row')")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_vinst USING fts5vocab(main, chunks_fts, 'instance')")
    ids = np.array([r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id")], dtype=np.int64)
    vocab_rows = conn.execute("SELECT term, doc, cnt FROM temp.chunks_vrow").fetchall()
    terms = [r[0] for r in vocab_rows]
    docs_per_term = np.array([r[1] for r in vocab_rows], dtype=np.int64)
    hits_per_term = np.array([r[2] for r in vocab_rows], dtype=np.int64)

    # Per batch, only what the snapshot keeps (its slot, a uint16 frequency: 4 or 6 bytes a
    # posting) outlives the batch, so a build's peak memory is the result plus one batch (the
    # frequencies are then narrowed to the base's type: ``_freq_type``).
    slot_type = _slot_type(len(ids))
    out_slots: list[SlotArray] = []
    out_freqs: list[FreqArray] = []
    per_term = np.zeros(len(terms), dtype=np.int64)
    lengths = np.zeros(len(ids), dtype=np.float64)
    start = 0
    while start < len(terms):
        # A run of whole terms with about _SCAN_BATCH instances, read as one string of integers
        # (doc * 2 + in-heading): one row per instance through Python would take seconds.
        end = start + 1
        budget = int(hits_per_term[start])
        while end < len(terms) and budget + hits_per_term[end] <= _SCAN_BATCH:
            budget += int(hits_per_term[end])
            end += 1
        (text,) = conn.execute(
            "SELECT group_concat(doc * 2 + (col = 'heading'), ',') FROM temp.chunks_vinst WHERE term >= ? AND term <= ?",
            (terms[start], terms[end - 1]),
        ).fetchone()
        codes = np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)
        del text
        if len(codes) != budget:
            raise RuntimeError(f"fts5vocab scan returned {len(codes)} instances for terms holding {budget}")
        term_of = np.repeat(np.arange(end - start, dtype=np.int32), hits_per_term[start:end])
        doc = codes >> 1
        new = np.ones(len(codes), dtype=np.bool_)
        new[1:] = (doc[1:] != doc[:-1]) | (term_of[1:] != term_of[:-1])
        first = np.flatnonzero(new)
        p_doc = doc[first]
        slots = np.searchsorted(ids, p_doc)
        if len(slots) and (slots.max() >= len(ids) or not np.array_equal(ids[slots], p_doc)):
            raise RuntimeError("fts5vocab names a chunk that is not in the chunks table")
        count = np.diff(np.append(first, len(codes)))
        heads = np.add.reduceat(codes & 1, first) if len(first) else np.zeros(0, dtype=np.int64)
        per_term[start:end] = np.bincount(term_of[first], minlength=end - start)
        lengths += np.bincount(slots, weights=count, minlength=len(ids))
        out_slots.append(slots.astype(slot_type))
        out_freqs.append(np.minimum(heads * HEADING_WEIGHT + (count - heads) * BODY_WEIGHT, 65535).astype(np.uint16))
        start = end
    if not np.array_equal(per_term, docs_per_term):
        raise RuntimeError("fts5vocab instance scan is not in term, doc order")
    offsets = _offsets(per_term)
    all_slots = _mapped(int(offsets[-1]), slot_type)
    all_freqs = _mapped(len(all_slots), _freq_type(max((int(f.max()) for f in out_freqs if len(f)), default=0)))
    if out_slots:
        np.concatenate(out_slots, out=all_slots)
        np.concatenate(out_freqs, out=all_freqs)
    vocab = {t: i for i, t in enumerate(terms)}
    return Snapshot.of_base(
        gen=gen, vocab=vocab, offsets=offsets, slots=all_slots, freqs=all_freqs, ids=ids, lengths=lengths, pinned=pinned
    )


def apply_changes(snap: Snapshot, gen: int, deleted: Iterable[int], added: Sequence[AddedChunk]) -> Snapshot:
    """The next snapshot: ``deleted`` chunk ids gone, ``added`` chunks in (an id may be both:
    SQLite reuses the highest rowid after it was deleted); compacted when it has grown untidy."""
    nxt = _apply(snap, gen, deleted, added)
    return compact(nxt) if nxt.wants_compaction() else nxt


def _apply(snap: Snapshot, gen: int, deleted: Iterable[int], added: Sequence[AddedChunk]) -> Snapshot:
    alive = snap.alive.copy()
    delta_ids = dict(snap.delta_ids)
    live = snap.live
    total = snap.total_tokens
    gone = np.array(sorted(set(deleted)), dtype=np.int64)
    if len(gone):
        found = snap.slots_of(gone)
        if found is None:
            raise RuntimeError("a deleted chunk is not in the postings snapshot")
        alive[found] = False
        live -= len(found)
        total -= float(snap.lengths[found].sum())
        for cid in gone.tolist():
            delta_ids.pop(cid, None)
    ids, lengths = snap.ids, snap.lengths
    delta = snap.delta
    if added:
        first = len(ids)
        ids = np.concatenate([ids, np.array([c.id for c in added], dtype=np.int64)])
        new_lengths = np.array([c.tokens for c in added], dtype=np.float64)
        lengths = np.concatenate([lengths, new_lengths])
        alive = np.concatenate([alive, np.ones(len(added), dtype=np.bool_)])
        live += len(added)
        total += float(new_lengths.sum())
        delta = postings_base.with_added(delta, delta_ids, added, first)
    return Snapshot(
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
        pinned=snap.pinned,
    )


def compact(snap: Snapshot) -> Snapshot:
    """The same postings as one base: the delta merged in and dead chunks dropped, from the
    snapshot's arrays alone (no scan of the index). Slots are renumbered by ascending chunk id,
    as a built base has them; terms left without postings are dropped."""
    keep = np.flatnonzero(snap.alive)
    order = keep[np.argsort(snap.ids[keep], kind="stable")]  # new slot -> old slot
    renumber = np.full(len(snap.ids), -1, dtype=np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    terms = list(snap.vocab)  # the vocabulary's order is its rows' order
    base_slots, base_freqs, base_counts = _live_base(snap, renumber)
    delta = _live_delta(snap, renumber, terms)
    base_counts = np.concatenate([base_counts, np.zeros(len(terms) - len(base_counts), dtype=np.int64)])
    slots, freqs = _merge(base_slots, base_freqs, base_counts, delta, len(order))
    del base_slots, base_freqs
    counts = base_counts + np.bincount(delta[0], minlength=len(terms))
    held = np.flatnonzero(counts)
    vocab = snap.vocab  # shared while no term is new or gone: snapshots never change it
    if not len(held) == len(terms) == len(snap.vocab):
        vocab = dict(zip([terms[i] for i in held.tolist()], range(len(held)), strict=True))
        counts = counts[held]
    offsets = _offsets(counts)
    ids, lengths = snap.ids[order], snap.lengths[order]
    release_free_memory()  # this pass's transient arrays, from the malloc heap
    return Snapshot.of_base(
        gen=snap.gen,
        vocab=vocab,
        offsets=offsets,
        slots=slots,
        freqs=freqs,
        ids=ids,
        lengths=lengths,
        pinned=snap.pinned,
    )


def _slot_type(chunks: int) -> type[np.integer[Any]]:
    """The type of a base's slots (0 .. chunks - 1): uint16 where they fit, half the memory of
    int32 (numpy indexes as fast with either)."""
    return np.uint16 if chunks <= 1 << 16 else np.int32


def _freq_type(highest: int) -> type[np.unsignedinteger[Any]]:
    """The type of a base's weighted frequencies, the highest of which is ``highest``: uint8
    where they fit, half the memory of uint16 (scoring reads them as float64 either way)."""
    return np.uint8 if highest <= 0xFF else np.uint16


def _mapped(n: int, dtype: type[np.generic]) -> npt.NDArray[Any]:
    """A zero-filled array in its own anonymous memory mapping: the base's arrays outlive many
    smaller allocations, and freed they go back to the system at once instead of leaving a hole
    in the malloc heap that a server under steady load would keep."""
    size = n * np.dtype(dtype).itemsize
    return np.frombuffer(mmap.mmap(-1, size), dtype=dtype) if size else np.zeros(0, dtype=dtype)


def _offsets(counts: IntArray) -> IntArray:
    """CSR offsets of per-term posting counts: term t's postings are [offsets[t], offsets[t + 1])."""
    offsets = _mapped(len(counts) + 1, np.int64)
    offsets[0] = 0
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _live_base(snap: Snapshot, renumber: SlotArray) -> tuple[SlotArray, FreqArray, IntArray]:
    """The base's postings of live chunks, renumbered, in the base's order; and their count per term."""
    slots = renumber[snap.slots]
    counts = np.diff(snap.offsets)
    dead = np.flatnonzero(slots < 0)
    if not len(dead):
        return slots, snap.freqs, counts
    counts = counts - np.bincount(np.searchsorted(snap.offsets, dead, side="right") - 1, minlength=len(counts))
    live = slots >= 0
    return slots[live], snap.freqs[live], counts


def _live_delta(snap: Snapshot, renumber: SlotArray, terms: list[str]) -> tuple[IntArray, SlotArray, FreqArray]:
    """The delta's postings of live chunks as (term row, renumbered slot, frequency), sorted by
    row then slot; a term new to the base gets a row at the end of ``terms``."""
    if not snap.delta:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16)
    term_rows: list[int] = []
    for term in snap.delta:
        row = snap.vocab.get(term)
        if row is None:
            row = len(terms)
            terms.append(term)
        term_rows.append(row)
    sizes = [len(s) for s, _ in snap.delta.values()]
    rows = np.repeat(np.array(term_rows, dtype=np.int64), sizes)
    arrays = [_delta_arrays(pair) for pair in snap.delta.values()]
    slots = renumber[np.concatenate([s for s, _ in arrays])]
    freqs = np.concatenate([f for _, f in arrays])
    live = slots >= 0
    rows, slots, freqs = rows[live], slots[live], freqs[live]
    order = np.lexsort((slots, rows))
    return rows[order], slots[order], freqs[order]


def _merge(
    base_slots: SlotArray,
    base_freqs: FreqArray,
    base_counts: IntArray,
    delta: tuple[IntArray, SlotArray, FreqArray],
    chunks: int,
) -> tuple[SlotArray, FreqArray]:
    """The base postings (``base_counts`` per term row, each term's slots ascending) with the
    delta's (row, slot, frequency) postings, sorted by row then slot, merged in: each goes after
    the base postings of its term with a lower slot, so every term's slots still ascend.
    ``chunks``: the new base's slots."""
    rows, slots, freqs = delta
    starts = _offsets(base_counts)
    at = _insertion_points(base_slots, starts[rows], starts[rows + 1], slots) + np.arange(len(rows))
    out_slots = _mapped(len(base_slots) + len(rows), _slot_type(chunks))
    highest = max(int(base_freqs.max()) if len(base_freqs) else 0, int(freqs.max()) if len(freqs) else 0)
    out_freqs = _mapped(len(out_slots), _freq_type(highest))
    from_base = np.ones(len(out_slots), dtype=np.bool_)
    from_base[at] = False
    out_slots[at], out_freqs[at] = slots, freqs
    out_slots[from_base], out_freqs[from_base] = base_slots, base_freqs
    return out_slots, out_freqs


def _insertion_points(sorted_runs: SlotArray, lo: IntArray, hi: IntArray, values: SlotArray) -> IntArray:
    """For each i, where ``values[i]`` would go in the ascending run ``sorted_runs[lo[i]:hi[i]]``
    (before equal values): one vectorised binary search over all runs at once."""
    lo, hi = lo.copy(), hi.copy()
    while True:
        open_ = np.flatnonzero(lo < hi)
        if not len(open_):
            return lo
        mid = (lo[open_] + hi[open_]) // 2
        below = sorted_runs[mid] < values[open_]
        lo[open_[below]] = mid[below] + 1
        hi[open_[~below]] = mid[~below]


# -- scoring -----------------------------------------------------------------------------------
def _scores(
    snap: Snapshot, phrases: Sequence[tuple[str, tuple[str, ...]]], phrase_scores: PhraseScores
) -> tuple[FloatArray, int] | None:
    """Every slot's BM25 for ``phrases`` (0.0 where none matches) and how many postings were
    scored, or None when a phrase's rows are not all live in ``snap``."""
    # Every phrase's (slot, contribution) pairs, in phrase order; bincount then adds them per
    # slot in that same order, starting from 0.0, as FTS5's loop over phrases does.
    where: list[SlotArray] = []
    parts: list[FloatArray] = []
    for word, tokens in phrases:
        if not tokens:
            continue
        if len(tokens) > 1:
            rows = phrase_scores(word)
            if rows:
                slots = snap.slots_of(np.array([r[0] for r in rows], dtype=np.int64))
                if slots is None:
                    return None
                where.append(slots)
                parts.append(np.array([r[1] for r in rows], dtype=np.float64))
            continue
        found = snap.postings_of(tokens[0])
        if found is None:
            continue
        slots, freqs, n = found
        idf = math.log((snap.live - n + 0.5) / (n + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        f = freqs.astype(np.float64)
        where.append(slots)
        parts.append(idf * ((f * (K1 + 1.0)) / (f + snap.norm[slots])))
    scores: FloatArray = np.zeros(len(snap.ids), dtype=np.float64)
    if len(where) == 1:
        scores[where[0]] = parts[0]  # one phrase: its slots are distinct
    elif where:
        # Each slot's sum starts from 0.0, as FTS5's does (contributions are positive: no -0.0).
        # With weights, bincount sums in float64 (numpy's stubs say integers).
        scores = cast(
            FloatArray, np.bincount(np.concatenate(where), weights=np.concatenate(parts), minlength=len(snap.ids))
        )
    return scores, sum(len(w) for w in where)


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
    if snap.live == 0 or not (phrases or forms):
        return []
    own = _scores(snap, phrases, phrase_scores)
    other = _scores(snap, forms, phrase_scores) if forms else None
    if own is None or (other is None and forms):
        return None
    scores, touched = own
    if other is not None:
        more, touched_more = other
        scores = scores + FORM_WEIGHT * more
        touched += touched_more
    if not touched:
        return []
    ranked = _best(snap, scores, touched, limit)
    if forms_alone is not None and other is not None and ranked:
        slots = snap.slots_of(np.array([cid for cid, _ in ranked], dtype=np.int64))
        if slots is None:
            return None
        forms_alone.update(cid for (cid, _), base in zip(ranked, own[0][slots].tolist(), strict=True) if base == 0.0)
    return ranked


def _best(snap: Snapshot, scores: FloatArray, touched: int, limit: int) -> list[tuple[int, float]]:
    """The best ``limit`` (chunk id, score) of ``scores`` (one per slot, ``touched`` of them
    scored), best first, ties by id."""
    if len(snap.dead):
        scores[snap.dead] = 0.0  # scored above with the live ones (each slot's sum is its own)
    total = len(scores)
    if total > limit and touched * 2 > total:
        # Most chunks scored: the limit-th best by one partition of all slots. Every chunk scoring
        # at least that is a candidate, so ties at the cut are broken by id below.
        kth = np.partition(scores, total - limit)[total - limit]
        hit = (scores >= kth).nonzero()[0] if kth > 0.0 else (scores > 0.0).nonzero()[0]
        got = scores[hit]
    else:
        hit = (scores > 0.0).nonzero()[0]
        got = scores[hit]
        if len(hit) > limit:  # few scored: partition just those
            kth = np.partition(got, len(got) - limit)[len(got) - limit]
            keep = got >= kth
            hit, got = hit[keep], got[keep]
    # Best score first, then lowest id. Usually ``limit`` candidates or a few more (ties at the
    # cut): sorted as Python pairs, cheaper than numpy's calls; many ties: by numpy.
    if len(hit) <= 4 * limit:
        ranked = sorted(zip((-got).tolist(), snap.ids[hit].tolist(), strict=True))[:limit]
        return [(cid, -neg) for neg, cid in ranked]
    best = np.lexsort((snap.ids[hit], -got))[:limit]
    return list(zip(snap.ids[hit[best]].tolist(), got[best].tolist(), strict=True))
