"""Hybrid search of one tier: BM25 and dense candidates fused, with neighbouring chunks as context.

BM25 candidates come from the tier's FTS5 index, dense ones from its ``VectorIndex``; every
candidate is re-scored densely, so a BM25 hit outside the dense top-N still gets its cosine.
``weighted`` (the default) adds BM25 relative to the best BM25 hit and the cosine above a floor,
the cosine weighted by how close the query's best dense match is (a vague best match lends dense
little say), then lets each earned chunk close part of the gap to a better earned neighbour in its
file, more to one before it than after. ``rrf`` is plain reciprocal rank fusion (k = 60).

Every hit earns its place: a chunk is returned only for a query term of its own (a BM25 match) or
a cosine of its own above ``DENSE_MATCH``; a query nothing earns gets no hits. Neighbours reorder
earned hits and never add one, with one exception that is a matter of what a chunk is: in a
dialogue (sibling sections whose headings name speakers taking turns, ``VectorIndex.turns``) a
turn's key holds the turns beside it, the reply with its question, so the reply comes back on the
question's words, with the share it took shown as ``context`` in ``explain``. The constants were chosen on LoCoMo conversations 0-2 alone (recall@10
of the evidence turns); conversations 3-4, SciFact and MS MARCO are held out and reported by
tests/bench/retrieval.py. The embedder being down, slow or rate limited never fails a search: the
answer is BM25 and says ``"degraded": ["dense"]``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import heapq
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import structlog

from sidecar.index.query import terms
from sidecar.index.snippet import flatten, sentence_spans, window
from sidecar.index.tier import Tier
from sidecar.index.tier_index import RankedChunk
from sidecar.retrieval.embed.base import (
    Embedder,
    EmbedderError,
    EmbedderUnavailable,
    EmbedsHere,
    LoadsOnUse,
    Vectors,
)
from sidecar.retrieval.fusion import DEFAULT_K, rrf
from sidecar.retrieval.lift import BoostPlan, Candidate, candidate_of, mark, pick, wanted
from sidecar.retrieval.priority import calm, default_slots, is_urgent
from sidecar.retrieval.standing import (
    SLACK,
    by_standing,
    newest_first,
    one_place_shown,
    restated_first,
    restated_first_picked,
    standing,
)

# The vector index (and numpy, which it is built on) is imported with the embedder: a BM25-only
# sidecar never loads it.
if TYPE_CHECKING:
    from sidecar.retrieval.embed.availability import EmbedderHealth
    from sidecar.retrieval.vectors import ChunkRow, VectorIndex

__all__ = [
    "CANDIDATES",
    "CONTEXT_AFTER",
    "CONTEXT_BEFORE",
    "DENSE_FLOOR",
    "DENSE_MATCH",
    "DENSE_PIVOT",
    "DENSE_WEIGHT",
    "FUSIONS",
    "QUERY_TIMEOUT_S",
    "SENTENCE_BUDGET",
    "HybridSearcher",
    "Scored",
    "fuse_rrf",
    "fuse_weighted",
    "sentences",
]

log = structlog.get_logger("sidecar.retrieval.hybrid")

FUSIONS = ("weighted", "rrf")
#: Candidates taken from each leg before fusing (BM25 top-N and dense top-N).
CANDIDATES = 100
#: Weight of the cosine above the floor, against BM25 scaled to 1 for the best BM25 hit, for a query
#: whose best dense match has cosine ``DENSE_PIVOT``; it scales with that best cosine. An absolute
#: cosine (not rescaled per query) lets a confident dense match outweigh BM25 and a vague one not.
DENSE_WEIGHT = 2.1
#: Best-match cosine at which the dense weight is ``DENSE_WEIGHT`` (MiniLM: conversation turns'
#: best matches sit around 0.55, web passages' around 0.8).
DENSE_PIVOT = 0.7
#: A cosine at or below this adds nothing to a chunk's score.
DENSE_FLOOR = 0.1
#: A chunk no BM25 hit holds is returned only if its cosine is above this. MiniLM gives made-up
#: words, random strings and keyboard mashes up to 0.37 against conversation turns (300 of them
#: against LoCoMo conversations 0-2) and real questions' evidence turns a median of 0.39: a
#: weaker dense match is not told apart from none, and alone it is not an answer.
DENSE_MATCH = 0.4
#: Share of the gap to a better-scoring chunk 1 and 2 places before it in its file that a chunk
#: closes (an answer follows its question), and to one 1 and 2 places after it. Only chunks that
#: earned their place lend, and only to earned chunks or to turns of their dialogue; the larger
#: shares sum to at most 1, so a chunk is never lifted above its best neighbour.
CONTEXT_BEFORE = (0.5, 0.5)
CONTEXT_AFTER = (0.3, 0.2)
#: How old a search lets the chunk view of the vector matrix get while writes keep changing chunks
#: before it rereads the tier's chunk hashes itself (about 20 ms for 10k chunks, on the search's
#: time). The background embedder rereads them a quarter of a second after each change it is told
#: of, and appends the vectors it stores, so under a stream of writes no search pays for a reread;
#: this bounds the view's age when the embedder is not running (backing off after failures).
CHUNKS_STALE_S = 5.0
#: Longest a search waits for its query vector before answering from BM25 alone.
QUERY_TIMEOUT_S = 1.0
#: Most sentences embedded for one answer's dense-only snippets: one batch, each about a query's cost;
#: sentences already embedded for an earlier answer come from a cache and do not count.
SENTENCE_BUDGET = 8
#: A sentence shorter than this is shown with the one after it.
SHORT_SENTENCE = 80


def sentences(text: str, longest: int = 240) -> list[str]:
    """The sentences of ``text`` (split after . ! ? and at line breaks), each at most ``longest``
    characters, empty ones dropped."""
    return [text[a:b] for a, b in sentence_spans(text, longest)]


#: What ``HybridSearcher._rank`` gives a search: its first hits with their standing, the rest of the
#: ranking, the rows BM25 did not give and their stored sentence vectors.
_Ranked = tuple[list["Scored"], Iterator["Scored"], dict[int, "ChunkRow"], dict[str, Vectors]]

#: Query vectors kept (about 1.5 kB each): an agent asks again, and a lead's crew asks alike.
_QUERY_CACHE = 4096
_SENTENCE_CACHE = 4096


class _Vectors(OrderedDict[tuple[str, str], Vectors]):
    """Vectors by (model, text), the least recently used dropped past ``limit``."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def find(self, key: tuple[str, str]) -> Vectors | None:
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def keep(self, key: tuple[str, str], vector: Vectors) -> None:
        self[key] = vector
        self.move_to_end(key)
        if len(self) > self.limit:
            self.popitem(last=False)


@dataclass(frozen=True, slots=True)
class Scored:
    """A fused chunk: its score, the part borrowed from neighbours, and its standing in each leg."""

    id: int
    score: float
    context: float
    bm25_rank: int | None
    bm25_score: float | None
    dense_rank: int | None
    dense_score: float | None
    standing: float = 1.0  # retrieval.standing: below 1 for archived or superseded text

    def explain(self, fusion: str) -> dict[str, Any]:
        return {
            "fusion": fusion,
            "bm25": {"rank": self.bm25_rank, "score": _round(self.bm25_score)},
            "dense": {"rank": self.dense_rank, "score": _round(self.dense_score)},
            "context": round(self.context, 6),
            "standing": self.standing,
            "fused": round(self.score, 6),
        }

    def with_standing(self, factor: float) -> Scored:
        """This chunk with its score multiplied by its standing."""
        if factor == 1.0:
            return self
        return Scored(
            self.id,
            self.score * factor,
            self.context,
            self.bm25_rank,
            self.bm25_score,
            self.dense_rank,
            self.dense_score,
            factor,
        )


def fuse_weighted(
    bm25: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]],
    cosines: Mapping[int, float],
    neighbours: Mapping[int, Mapping[int, int]],
    *,
    turns: Mapping[int, Mapping[int, int]] | None = None,
    weight: float = DENSE_WEIGHT,
    floor: float = DENSE_FLOOR,
    pivot: float = DENSE_PIVOT,
    match: float = DENSE_MATCH,
    before: Sequence[float] = CONTEXT_BEFORE,
    after: Sequence[float] = CONTEXT_AFTER,
) -> list[Scored]:
    """Score-based fusion, best first, of the chunks that earned a place:
    ``bm25 / best bm25 + weight * (best cosine / pivot) * max(0, cosine - floor)`` for a BM25 hit
    or a dense candidate whose cosine is above ``match``; then each of them closes part of the gap
    to a better earned neighbour (``before`` and ``after`` by distance). Neighbours only reorder
    earned chunks; they never add one. In a dialogue (``turns``) a turn's key also holds the turns
    beside it, the reply with its question: a turn next to an earned turn earns its share of that
    turn's score, so it comes back even when the query's words are all in the question.

    ``bm25`` and ``dense`` are the legs' ranked ``(chunk id, score)`` lists; ``cosines`` holds the
    cosine of every candidate that has a vector; a BM25 hit without one is taken to be as close to
    the query as its BM25 standing says. ``neighbours`` maps a chunk to ``{offset: chunk id}`` in
    its file, and ``turns`` a dialogue turn to the turns of its dialogue the same way; the maps of
    the earned chunks are enough (only they lend), others are ignored.
    """
    fused = _Fused.weighted(
        bm25,
        dense,
        cosines,
        neighbours,
        turns or {},
        weight=weight,
        floor=floor,
        pivot=pivot,
        match=match,
        before=before,
        after=after,
    )
    return list(fused)


@dataclass(frozen=True, slots=True)
class _Fused:
    """The weighted fusion's ranking, best first, as ids and scores: a ``Scored`` is built only for
    a chunk someone reads (an answer shows ten of several hundred)."""

    ids: list[int]
    scores: list[float]
    borrowed: list[float]
    bm: dict[int, float]
    bm_rank: dict[int, int]
    dense_rank: dict[int, int]
    cosines: Mapping[int, float]

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Scored]:
        return (self.at(i) for i in range(len(self.ids)))

    def at(self, i: int) -> Scored:
        cid = self.ids[i]
        return Scored(
            cid,
            self.scores[i],
            self.borrowed[i],
            self.bm_rank.get(cid),
            self.bm.get(cid),
            self.dense_rank.get(cid),
            self.cosines.get(cid),
        )

    @classmethod
    def weighted(
        cls,
        bm25: Sequence[tuple[int, float]],
        dense: Sequence[tuple[int, float]],
        cosines: Mapping[int, float],
        neighbours: Mapping[int, Mapping[int, int]],
        turns: Mapping[int, Mapping[int, int]],
        *,
        weight: float,
        floor: float,
        pivot: float,
        match: float,
        before: Sequence[float],
        after: Sequence[float],
        depth: int | None = None,
    ) -> _Fused:
        """``fuse_weighted``'s ranking (its docstring says how it scores). The same arithmetic as
        ``_lenders`` and ``_borrowed`` in the same order, written out in one loop: a search fuses
        several hundred chunks (a dialogue's turns borrow from the earned ones), and a call per
        chunk was most of the fusion's CPU. ``depth``: only the first ``depth`` chunks are asked
        for; the ranking then holds only the chunks that can be among them (``_contenders``), and
        only its first ``depth`` are the whole ranking's."""
        bm = dict(bm25)
        base = _base(bm, dense, cosines, weight=weight, floor=floor, pivot=pivot, match=match)
        keep = None if depth is None else _contenders(base, neighbours, turns, depth=depth, before=before, after=after)
        lenders = _lent_by(base, neighbours, turns, keep)
        n_before, n_after = len(before), len(after)
        reach = range(1, max(n_before, n_after) + 1)
        # offset -> its weight, for a chunk with one lender (most): before it (-d), after it (d)
        single = {**{-d: w for d, w in enumerate(before, 1)}, **{d: w for d, w in enumerate(after, 1)}}
        share_at, base_get = single.get, base.get
        lent_to: dict[int, float] = {}  # what each earned chunk borrows
        # The chunks only a lender brought, in ``lenders``' order, with what they borrow (their score).
        brought: list[int] = []
        brought_lent: list[float] = []
        for cid, near in lenders.items():  # with ``keep``, its chunks alone
            earned = base_get(cid)
            own = 0.0 if earned is None else earned
            lent = 0.0
            if isinstance(near, tuple):  # one lender: its share of the gap, the loop below with one step
                share = share_at(near[0])
                if share is not None:
                    over = base[near[1]] - own
                    lent += share * (over if over > 0.0 else 0.0)
            else:
                for d in reach:  # _borrowed, inline
                    ahead = near.get(-d) if d <= n_before else None
                    behind = near.get(d) if d <= n_after else None
                    if ahead is None and behind is None:
                        continue
                    gap = 0.0
                    if ahead is not None:
                        over = base.get(ahead, 0.0) - own
                        gap = before[d - 1] * (over if over > 0.0 else 0.0)
                    if behind is not None:
                        over = base.get(behind, 0.0) - own
                        other = after[d - 1] * (over if over > 0.0 else 0.0)
                        gap = other if ahead is None or other > gap else gap  # max(): the first of equals
                    lent += gap
            if earned is not None:
                lent_to[cid] = lent
            elif 0.0 + lent > 0.0:
                brought.append(cid)
                brought_lent.append(lent)
        return cls._ordered(
            base, keep, lent_to, brought=(brought, brought_lent), bm=bm, bm25=bm25, dense=dense, cosines=cosines
        )

    @classmethod
    def _ordered(
        cls,
        base: dict[int, float],
        keep: set[int] | None,
        lent_to: dict[int, float],
        *,
        brought: tuple[list[int], list[float]],
        bm: dict[int, float],
        bm25: Sequence[tuple[int, float]],
        dense: Sequence[tuple[int, float]],
        cosines: Mapping[int, float],
    ) -> _Fused:
        """``weighted``'s chunks best first: the earned ones (those of ``keep``) with what they
        borrow (``lent_to``), then the chunks only a lender ``brought``, with theirs."""
        ids_brought, brought_lent = brought
        # The earned chunks in their order, then the ones only a lender brought, as
        # ``dict.fromkeys([*base, *lenders])`` orders them; those scoring above 0 (every earned
        # chunk, unless a share of the gap is negative).
        ids: list[int] = list(base) if keep is None else [cid for cid in base if cid in keep]
        borrowed: list[float] = [lent_to.get(cid, 0.0) for cid in ids]
        scores: list[float] = [base[cid] + lent for cid, lent in zip(ids, borrowed, strict=True)]
        if not min(scores, default=1.0) > 0.0:
            kept = [i for i, score in enumerate(scores) if score > 0.0]
            ids, scores, borrowed = [ids[i] for i in kept], [scores[i] for i in kept], [borrowed[i] for i in kept]
        ids += ids_brought
        scores += [0.0 + lent for lent in brought_lent]
        borrowed += brought_lent
        # stable, and reverse keeps it so: ties keep the fused order (scores are all > 0, no NaN)
        order = sorted(range(len(ids)), key=scores.__getitem__, reverse=True)
        bm_rank = {cid: r for r, (cid, _) in enumerate(bm25, start=1)}
        dense_rank = {cid: r for r, (cid, _) in enumerate(dense, start=1)}
        return cls(
            list(map(ids.__getitem__, order)),
            list(map(scores.__getitem__, order)),
            list(map(borrowed.__getitem__, order)),
            bm,
            bm_rank,
            dense_rank,
            cosines,
        )


def _base(
    bm: Mapping[int, float],
    dense: Sequence[tuple[int, float]],
    cosines: Mapping[int, float],
    *,
    weight: float,
    floor: float,
    pivot: float,
    match: float,
) -> dict[int, float]:
    """The earned chunks' own scores (``fuse_weighted``), BM25 hits first, then dense candidates."""
    top_bm = max(bm.values(), default=0.0)
    top_cos = max((c for _, c in dense), default=floor)
    dense_weight = weight * max(top_cos, 0.0) / pivot
    unmatched = max(top_cos - floor, 0.0)
    base: dict[int, float] = {}
    for cid, score in bm.items():
        b = score / top_bm if top_bm > 0 else 0.0
        cos = cosines.get(cid)
        if cos is None:
            cos = floor + b * unmatched
        over = cos - floor
        own = b + dense_weight * (over if over > 0.0 else 0.0)
        if own > 0.0:
            base[cid] = own
    for cid, c in dense:
        if not c > match or cid in bm or cid in base:
            continue  # not a candidate, or fused already (``dict.fromkeys``: first place kept)
        cos = cosines.get(cid)
        if cos is None or cos <= match:
            continue  # a dense candidate whose own cosine (read again) is not above the match floor
        over = cos - floor
        own = 0.0 + dense_weight * (over if over > 0.0 else 0.0)
        if own > 0.0:
            base[cid] = own
    return base


def _contenders(
    base: Mapping[int, float],
    neighbours: Mapping[int, Mapping[int, int]],
    turns: Mapping[int, Mapping[int, int]],
    *,
    depth: int,
    before: Sequence[float],
    after: Sequence[float],
) -> set[int] | None:
    """The chunks that can be among the fusion's first ``depth``; None when that cannot be told
    (too few earned chunks, or shares that may lift a chunk above its best lender). A chunk's fused
    score is its own plus, at each distance, the larger share of its gap to a better lender; with
    the larger shares summing to at most 1 it never passes its best lender's own score. The
    ``depth``-th best own score is a floor for the first ``depth`` fused ones, so a chunk whose own
    score and whose lenders' are all below it ranks below all of them: only the chunks at or over
    it (less a margin for rounding) and those they lend to are scored. The same ``_lent_by``
    relation says who lends to whom."""
    shares = [max(b, a) for b, a in itertools.zip_longest(before, after, fillvalue=0.0)]
    if len(base) <= depth or depth < 1 or min(shares, default=0.0) < 0.0 or sum(shares) > 1.0:
        return None
    floor = heapq.nlargest(depth, base.values())[-1]
    floor -= 1e-9 * (1.0 + abs(floor))  # rounding: a borrower's sum may pass its lender by an ulp or two
    top = [cid for cid, own in base.items() if own >= floor]
    keep = set(top)
    near_of, turns_of = neighbours.get, turns.get
    for cid in top:
        near = near_of(cid)
        if near:
            keep.update(other for other in near.values() if other in base)
        fellows = turns_of(cid)
        if fellows:
            keep.update(fellows.values())
    return keep


def _lenders(
    base: Mapping[int, float], neighbours: Mapping[int, Mapping[int, int]], turns: Mapping[int, Mapping[int, int]]
) -> dict[int, dict[int, int]]:
    """Who may lend to whom, ``{borrower: {offset: lender}}``: each earned chunk's neighbours see it
    at the opposite offset. A plain neighbour borrows only when it earned a place itself; a turn of
    the same dialogue borrows either way (its key holds the lender's words)."""
    lenders: dict[int, dict[int, int]] = {}
    near_of, turns_of, lent = neighbours.get, turns.get, lenders.setdefault
    for cid in base:
        near = near_of(cid)
        if near:
            for offset, other in near.items():
                if other in base:
                    lent(other, {})[-offset] = cid
        fellows = turns_of(cid)
        if fellows:
            for offset, other in fellows.items():
                lent(other, {})[-offset] = cid
    return lenders


def _lent_by(
    base: Mapping[int, float],
    neighbours: Mapping[int, Mapping[int, int]],
    turns: Mapping[int, Mapping[int, int]],
    only: Container[int] | None = None,
) -> dict[int, tuple[int, int] | dict[int, int]]:
    """``_lenders`` in the same order, a borrower with one lender (most) as ``(offset, lender)``
    rather than a map of its own: most of a fused chunk's cost was making that map. ``only``: the
    borrowers wanted (the others left out; those kept in the same order, with all their lenders)."""
    lenders: dict[int, tuple[int, int] | dict[int, int]] = {}
    near_of, turns_of, had_of = neighbours.get, turns.get, lenders.get
    earned: Container[int] = base if only is None else {cid for cid in base if cid in only}
    for cid in base:
        near = near_of(cid)
        if near:
            for offset, other in near.items():
                if other in earned:
                    had = had_of(other)
                    if had is None:
                        lenders[other] = (-offset, cid)
                    elif isinstance(had, tuple):
                        lenders[other] = (-offset, cid) if had[0] == -offset else {had[0]: had[1], -offset: cid}
                    else:
                        had[-offset] = cid
        fellows = turns_of(cid)
        if fellows:
            for offset, other in fellows.items():
                if only is not None and other not in only:
                    continue
                had = had_of(other)
                if had is None:
                    lenders[other] = (-offset, cid)
                elif isinstance(had, tuple):
                    lenders[other] = (-offset, cid) if had[0] == -offset else {had[0]: had[1], -offset: cid}
                else:
                    had[-offset] = cid
    return lenders


def _borrowed(
    own: float, base: Mapping[int, float], near: Mapping[int, int], before: Sequence[float], after: Sequence[float]
) -> float:
    """What a chunk scoring ``own`` borrows: at each distance, the larger share of the gap to the
    earned neighbour before it (``before``) or after it (``after``)."""
    borrowed = 0.0
    for distance in range(1, max(len(before), len(after)) + 1):
        ahead = near.get(-distance) if distance <= len(before) else None
        behind = near.get(distance) if distance <= len(after) else None
        if ahead is None and behind is None:
            continue
        gap = before[distance - 1] * max(0.0, base.get(ahead, 0.0) - own) if ahead is not None else None
        if behind is not None:
            other = after[distance - 1] * max(0.0, base.get(behind, 0.0) - own)
            gap = other if gap is None or other > gap else gap  # max(): the first of equals
        assert gap is not None
        borrowed += gap
    return borrowed


def fuse_rrf(
    bm25: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]],
    cosines: Mapping[int, float],
    *,
    match: float = DENSE_MATCH,
) -> list[Scored]:
    """Reciprocal rank fusion (k = 60) of the BM25 leg and of the dense candidates whose cosine is
    above ``match`` (the others did not earn a place), best first."""
    dense = [(cid, c) for cid, c in dense if c > match]
    bm = dict(bm25)
    bm_rank = {cid: r for r, (cid, _) in enumerate(bm25, start=1)}
    dense_rank = {cid: r for r, (cid, _) in enumerate(dense, start=1)}
    fused = rrf([[cid for cid, _ in bm25], [cid for cid, _ in dense]], k=DEFAULT_K)
    return [
        Scored(cid, score, 0.0, bm_rank.get(cid), bm.get(cid), dense_rank.get(cid), cosines.get(cid))
        for cid, score in fused
    ]


#: Added to the nice value of the threads that run the query's model for an ordinary search (one
#: nobody waits on to see a write): when the cores are short, a write on its way to the index, the
#: search waiting for it and the event loop get them first.
ORDINARY_NICE = 5
_ordinary: dict[str, ThreadPoolExecutor] = {}  # made on first use
_ordinary_guard = threading.Lock()


def _ordinary_threads() -> ThreadPoolExecutor:
    """The threads ordinary searches' query model runs compute on, as many as may search at once."""
    with _ordinary_guard:
        pool = _ordinary.get("pool")
        if pool is None:
            from sidecar.retrieval.embed.onnx import lower_thread_priority

            pool = _ordinary["pool"] = ThreadPoolExecutor(
                default_slots(),
                thread_name_prefix="embed-ordinary",
                initializer=lower_thread_priority,
                initargs=(ORDINARY_NICE,),
            )
        return pool


class HybridSearcher:
    """Searches a tier with BM25 plus dense scoring; BM25 alone when no embedder is configured."""

    def __init__(
        self,
        embedder: Embedder | None,
        health: EmbedderHealth | None,
        vectors: Mapping[str, VectorIndex],
        *,
        fusion: str = "weighted",
        candidates: int = CANDIDATES,
        query_timeout: float = QUERY_TIMEOUT_S,
    ) -> None:
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(FUSIONS)}; got {fusion!r}")
        self.embedder = embedder
        self.health = health
        self.vectors = vectors
        self.fusion = fusion
        self.candidates = candidates
        self.query_timeout = query_timeout
        self._queries = _Vectors(_QUERY_CACHE)
        self._sentences = _Vectors(_SENTENCE_CACHE)
        # Query vectors being computed, so two asks for the same query share one model run.
        self._embedding: dict[tuple[str, str], asyncio.Future[Vectors | None]] = {}
        # Whether the embedder loads on use, and whether it embeds on the calling thread, asked
        # once per embedder: a check against a runtime protocol costs tens of microseconds.
        self._loads_on_use: tuple[Embedder | None, bool, bool] = (None, False, False)

    def prefetch(self, query: str) -> None:
        """Start computing ``query``'s vector now, for a search that has to wait before it runs
        (``after_seq``): the model runs while the write is indexed, and the search finds the vector
        ready, or in progress, instead of starting it then."""
        if self.embedder is not None and self.vectors:
            self._vector_or_run((self.embedder.model_id, query))

    def _vector_or_run(self, key: tuple[str, str]) -> Vectors | asyncio.Future[Vectors | None] | None:
        """``key``'s cached vector, else its model run (the one under way, or one started now),
        else None while the embedder is backing off."""
        cached = self._queries.find(key)
        if cached is not None:
            return cached
        task = self._embedding.get(key)
        if task is None and (self.health is None or self.health.usable()):
            task = self._start_embedding(key)
        return task

    def _start_embedding(self, key: tuple[str, str]) -> asyncio.Task[Vectors | None]:
        task = asyncio.get_running_loop().create_task(self._embed_query(key))
        self._embedding[key] = task
        task.add_done_callback(functools.partial(self._embedded, key))
        return task

    def _embedded(self, key: tuple[str, str], task: asyncio.Task[Vectors | None]) -> None:
        if self._embedding.get(key) is task:
            del self._embedding[key]
        error = None if task.cancelled() else task.exception()  # retrieved: a prefetch may have no waiter
        if error is not None:
            log.warning("hybrid.query_vector_failed", error=type(error).__name__)

    async def search(
        self, tier: Tier, query: str, limit: int, explain: bool, plan: BoostPlan | None = None
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """Ranked result dicts (``RankedChunk.as_json`` shape, plus ``explain`` if asked) and the degraded
        legs. ``plan``: the lift for this query, which picks ``limit`` of its ``candidates`` best
        hits; snippets are cut for those alone."""
        want = wanted(plan, limit)
        vectors = self.vectors.get(tier.name)
        if self.embedder is None or vectors is None:  # BM25 only: no need for a wide candidate list
            return _bm25_only(tier.name, await tier.search(query, want + SLACK), limit, explain, plan), []
        hits, qvec, ranked = await self._legs(tier, vectors, query, max(self.candidates, want), limit)
        if ranked is None:  # no query vector in time: BM25 alone
            return _bm25_only(tier.name, hits, limit, explain, plan), ["dense"]
        if isinstance(ranked, Exception):
            log.error("hybrid.dense_failed", tier=tier.name, exc_info=ranked)
            return _bm25_only(tier.name, hits, limit, explain, plan), ["dense"]
        weighed, rest, rows, stored = ranked
        by_id = {h.id: h for h in hits}
        picked: list[tuple[Scored, RankedChunk | None, ChunkRow | None]] = []
        shown: set[str] = set()
        spare: list[tuple[Scored, RankedChunk | None, ChunkRow | None]] = []  # read below them: ``one_place_shown``
        for scored in itertools.chain(weighed, _while(rest, lambda: len(picked) < want)):
            hit = by_id.get(scored.id)
            row = rows.get(scored.id)
            if hit is None and row is None:
                continue  # the chunk left the index between the two reads
            text, plain = (hit.text, hit.plain) if hit is not None else (_where(None, row)[2], False)
            if not _first_copy(shown, text, plain):
                continue  # the same text shown above (a fact kept in AGENT.md and in weekly summaries)
            (picked if len(picked) < want else spare).append((scored, hit, row))
        words = terms(query)
        out = []
        dense_only: list[tuple[dict[str, Any], ChunkRow]] = []  # no BM25 hit: no matched terms to show
        chosen = pick(plan, picked, lambda p: _candidate(*p), limit)
        if plan is not None and hits:  # the lift orders by score: a restated line stays below its restatement
            chosen = restated_first_picked(chosen, picked, lambda p: _where(p[1], p[2]), hits[0].terms, limit)
        if hits:  # of the shown hits that say one thing a value apart, the newest first (retrieval.standing)
            chosen = newest_first(chosen, lambda c: _where(c[0][1], c[0][2]), hits[0].terms)
            chosen = one_place_shown(chosen, [*picked, *spare], lambda p: _where(p[1], p[2]), hits[0].terms)
        for (scored, hit, row), lifted in chosen:
            result = _result(tier.name, scored, hit, row, words)
            if explain:
                result["explain"] = scored.explain(self.fusion)
            mark(result, lifted, explain)
            out.append(result)
            if hit is None and row is not None:
                dense_only.append((result, row))
        if dense_only and qvec is None and any(len(sentences(row.body or row.heading)) >= 2 for _, row in dense_only):
            # A turn lent its place by the turn beside it shows its sentence closest to the query.
            qvec = await self._query_vector(query)
            if qvec is None:
                return _bm25_only(tier.name, hits, limit, explain, plan), ["dense"]
        if dense_only and qvec is not None:
            await self._closest_sentences(dense_only, qvec, words, stored)
        return out, []

    async def _legs(
        self, tier: Tier, vectors: VectorIndex, query: str, depth: int, limit: int
    ) -> tuple[list[RankedChunk], Vectors | None, _Ranked | Exception | None]:
        """The BM25 leg's ``depth`` hits, the query's vector (None: the tier holds none, and the
        dense leg is empty) and ``_rank``'s ranking, or its failure; the ranking None when the
        query's vector was not had (the embedder backing off, failing or slow)."""
        embedder = self.embedder
        assert embedder is not None
        if not await self._has_vectors(vectors):  # the query needs no vector to rank
            hits = await tier.search(query, depth)
            return hits, None, await self._rank_off_loop(vectors, hits, None, limit)
        key = (embedder.model_id, query)
        if (
            self._embeds_here_now(embedder)
            and key not in self._embedding
            and self._queries.find(key) is None
            and (self.health is None or self.health.usable())
        ):
            hits = await tier.search(query, depth)
            await calm()  # before the model run: its timeout starts with it
            shared, work = self._start_ranked_run(key, vectors, hits, limit)
            qvec = await asyncio.shield(shared)
            return hits, qvec, None if qvec is None else work.result()[1]
        # The vector known, or its model run under way (a thread, going on while BM25 answers).
        pending = self._pending_vector(query)
        try:
            hits = await tier.search(query, depth)
        except BaseException:
            if isinstance(pending, asyncio.Future):
                pending.cancel()
            raise
        qvec = await pending if isinstance(pending, asyncio.Future) else pending
        if qvec is None:
            return hits, None, None
        await calm()
        return hits, qvec, await self._rank_off_loop(vectors, hits, qvec, limit)

    async def _rank_off_loop(
        self, vectors: VectorIndex, hits: list[RankedChunk], qvec: Vectors | None, limit: int
    ) -> _Ranked | Exception:
        """``_rank`` on a worker thread, its failure returned (the search answers from BM25)."""
        try:
            return await asyncio.to_thread(self._rank, vectors, hits, qvec, limit)
        except Exception as exc:
            return exc

    async def _has_vectors(self, vectors: VectorIndex) -> bool:
        """Whether the query needs a vector up front: False only when the tier holds no vector
        (read again from the index when the view has none) and the embedder is usable (a backing-off
        embedder answers BM25 alone, as it does for a tier with vectors)."""
        if vectors.size > 0 or (self.health is not None and not self.health.usable()):
            return True
        await asyncio.to_thread(vectors.refresh, CHUNKS_STALE_S, wait=False)
        return vectors.size > 0

    async def _closest_sentences(
        self,
        hits: list[tuple[dict[str, Any], ChunkRow]],
        qvec: Vectors,
        words: list[str],
        stored: Mapping[str, Vectors],
    ) -> None:
        """Give each dense-only hit, as its snippet, the sentence (or two) of its chunk closest to the
        query vector the search already has. The sentence vectors come from the index (``stored``:
        pooled from the chunk's own model run when it was embedded); for a chunk stored without them
        (a remote embedder), from one batched embedding of at most ``SENTENCE_BUDGET`` sentences not
        seen before for the whole answer (cached). A hit keeps its window when that budget runs
        out or the embedder fails or is slow."""
        import numpy as np

        embedder = self.embedder
        assert embedder is not None
        query = np.asarray(qvec, dtype=np.float32)
        picks: list[tuple[dict[str, Any], list[str]]] = []
        new: list[str] = []
        for result, row in hits:
            found = sentences(row.body or row.heading)
            rows = stored.get(row.hash)
            if len(found) >= 2 and rows is not None and len(rows) == len(found):
                cosines = rows @ query
                if cosines.any():
                    _show_sentence(result, found, int(np.argmax(cosines)), words)
                    continue
            # find() also marks a cached sentence recently used: the new ones cannot push it out.
            unseen = [t for t in dict.fromkeys(found) if self._sentences.find((embedder.model_id, t)) is None]
            if len(found) < 2 or len(new) + len(unseen) > SENTENCE_BUDGET:
                continue
            picks.append((result, found))
            new += [t for t in unseen if t not in new]
        if not picks:
            return
        if new:
            try:
                async with asyncio.timeout(self.query_timeout):
                    fresh = await embedder.embed(new)
            except (TimeoutError, EmbedderError) as exc:
                log.info("hybrid.sentences_skipped", reason=type(exc).__name__)
                return
            for text, vector in zip(new, np.asarray(fresh, dtype=np.float32), strict=True):
                self._sentences.keep((embedder.model_id, text), vector)
        texts = [t for _, found in picks for t in found]
        matrix = np.stack([self._sentences[(embedder.model_id, t)] for t in texts])
        cosines = matrix @ query
        at = 0
        for result, found in picks:
            _show_sentence(result, found, int(np.argmax(cosines[at : at + len(found)])), words)
            at += len(found)

    def _rank(self, vectors: VectorIndex, hits: list[RankedChunk], qvec: Vectors | None, limit: int) -> _Ranked:
        """Off the event loop: refresh the matrix, scan it, fuse, and read the rows BM25 did not give
        with their stored sentence vectors. The ranking comes as its first ``limit + SLACK`` chunks
        with their standing applied, then the rest, built as they are read. ``qvec`` None: the
        tier holds no vector, and the dense leg is empty."""
        vectors.refresh(max_age=CHUNKS_STALE_S, wait=False)  # another thread's refresh: score the view we have
        bm25 = [(h.id, h.score) for h in hits]
        dense = vectors.search(qvec, self.candidates) if qvec is not None else []
        cosines = vectors.scores(qvec, [h.id for h in hits]) if qvec is not None else {}
        cosines.update(dense)
        top: list[Scored]
        rest: Iterator[Scored]
        if self.fusion == "rrf":
            ranked = fuse_rrf(bm25, dense, cosines)
            top, rest = ranked[: limit + SLACK], iter(ranked[limit + SLACK :])
        else:
            # Only earned chunks lend to their neighbours: their own neighbours are all that is needed.
            earned = dict.fromkeys([*(h.id for h in hits), *(cid for cid, c in dense if c > DENSE_MATCH)])
            reach = max(len(CONTEXT_BEFORE), len(CONTEXT_AFTER))
            near, turns = vectors.context(list(earned), reach)
            fuse = functools.partial(
                _Fused.weighted,
                bm25,
                dense,
                cosines,
                near,
                turns,
                weight=DENSE_WEIGHT,
                floor=DENSE_FLOOR,
                pivot=DENSE_PIVOT,
                match=DENSE_MATCH,
                before=CONTEXT_BEFORE,
                after=CONTEXT_AFTER,
            )
            # The first ``limit + SLACK`` fused from the chunks that can be among them (most answers
            # need no more); the whole ranking only when an answer reads past them.
            fused = fuse(depth=limit + SLACK)
            shown = min(limit + SLACK, len(fused))
            top = [fused.at(i) for i in range(shown)]
            rest = _past(fuse, shown)
        by_id = {h.id: h for h in hits}
        # A few spare rows: a chunk may have left the index since the BM25 read, and live text
        # just below the limit may pass archived or superseded text (retrieval.standing).
        rows, stored = vectors.shown_rows([s.id for s in top if s.id not in by_id])
        today = datetime.now(UTC).date()  # once for the answer, not once a hit
        weighed = []
        for scored in top:
            where = by_id.get(scored.id) or rows.get(scored.id)
            weighed.append(
                scored if where is None else scored.with_standing(standing(where.path, where.heading, today))
            )
        weighed.sort(key=lambda s: -s.score)  # stable: ties keep the fused order
        if hits:  # a line a newer line restates with another value ranks below it (retrieval.standing)
            weighed = restated_first(weighed, lambda s: _where(by_id.get(s.id), rows.get(s.id)), hits[0].terms)
        return weighed, rest, rows, stored

    def _pending_vector(self, query: str) -> Vectors | asyncio.Future[Vectors | None] | None:
        """``_query_vector``, started: the vector when it is known, None while the embedder is
        backing off, else what to await for it. An embedder loaded before its first use (the
        in-process model) needs no task of its own for that: the model run is awaited directly."""
        embedder = self.embedder
        assert embedder is not None
        if self._loads_on_use_now(embedder):
            return asyncio.ensure_future(self._query_vector(query))
        found = self._vector_or_run((embedder.model_id, query))
        # Shielded: a search that gives up (its client went away) leaves the run to the others.
        return asyncio.shield(found) if isinstance(found, asyncio.Future) else found

    def _loads_on_use_now(self, embedder: Embedder) -> bool:
        """Whether ``embedder`` loads on use (asked once per embedder: a runtime protocol's check
        costs tens of microseconds)."""
        if self._loads_on_use[0] is not embedder:
            self._loads_on_use = (embedder, isinstance(embedder, LoadsOnUse), isinstance(embedder, EmbedsHere))
        return self._loads_on_use[1]

    def _embeds_here_now(self, embedder: Embedder) -> bool:
        """Whether ``embedder`` embeds on the calling thread (``EmbedsHere``) and is loaded."""
        if self._loads_on_use[0] is not embedder:
            self._loads_on_use_now(embedder)
        return self._loads_on_use[2] and not self._loads_on_use[1]

    def _start_ranked_run(
        self, key: tuple[str, str], vectors: VectorIndex, hits: list[RankedChunk], limit: int
    ) -> tuple[asyncio.Future[Vectors | None], asyncio.Future[tuple[Vectors, _Ranked | Exception]]]:
        """The query's model run and, right after it on the same worker thread, the ranking with
        its vector (``_rank``): one hand-off to a thread and back instead of two. Returns the
        vector's future, which other searches of the query await meanwhile (None when the run
        failed or took over ``query_timeout``), and the worker call's."""
        loop = asyncio.get_running_loop()
        shared: asyncio.Future[Vectors | None] = loop.create_future()
        run = functools.partial(contextvars.copy_context().run, self._embed_then_rank, key[1], vectors, hits, limit)
        work: asyncio.Future[tuple[Vectors, _Ranked | Exception]] = loop.run_in_executor(None, run)
        timer = loop.call_later(self.query_timeout, self._ranked_run_too_slow, key, shared)
        self._embedding[key] = shared
        work.add_done_callback(functools.partial(self._ranked_run_done, key, shared, timer))
        return shared, work

    def _embed_then_rank(
        self, query: str, vectors: VectorIndex, hits: list[RankedChunk], limit: int
    ) -> tuple[Vectors, _Ranked | Exception]:
        """On a worker thread: the query's vector, then ``_rank`` with it (its failure returned, not
        raised: the search answers from BM25 alone, as for a dense leg that fails on its own). An
        ordinary search's model run computes on one of ``_ordinary_threads()`` (a raised nice value)
        while this thread waits for it, so it still queues in the loop's executor behind urgent work."""
        import numpy as np

        embed_here = cast(EmbedsHere, self.embedder).embed_here
        found = embed_here([query]) if is_urgent() else _ordinary_threads().submit(embed_here, [query]).result()
        vector: Vectors = np.asarray(found[0], dtype=np.float32)
        try:
            return vector, self._rank(vectors, hits, vector, limit)
        except Exception as exc:
            return vector, exc

    def _ranked_run_too_slow(self, key: tuple[str, str], shared: asyncio.Future[Vectors | None]) -> None:
        """``query_timeout`` passed before the run ended: its searches answer from BM25 alone."""
        if shared.done():
            return
        if self.health is not None:
            self.health.failed(EmbedderUnavailable(f"query embedding took over {self.query_timeout:g} s"))
        shared.set_result(None)
        if self._embedding.get(key) is shared:
            del self._embedding[key]

    def _ranked_run_done(
        self,
        key: tuple[str, str],
        shared: asyncio.Future[Vectors | None],
        timer: asyncio.TimerHandle,
        work: asyncio.Future[tuple[Vectors, _Ranked | Exception]],
    ) -> None:
        """Settle ``shared`` from the worker call, as ``_embed_query`` settles a run of its own: the
        vector kept and the embedder's health told; a run past its timeout is not kept."""
        timer.cancel()
        if self._embedding.get(key) is shared:
            del self._embedding[key]
        error = None if work.cancelled() else work.exception()  # retrieved: its search may be gone
        if shared.done():
            return
        if error is None and not work.cancelled():
            vector = work.result()[0]
            if self.health is not None:
                self.health.succeeded()
            self._queries.keep(key, vector)
            shared.set_result(vector)
        elif isinstance(error, EmbedderError) or error is None:
            if self.health is not None and error is not None:
                self.health.failed(error)
            shared.set_result(None)
        else:
            log.warning("hybrid.query_vector_failed", error=type(error).__name__)
            shared.set_exception(error)
            shared.exception()  # retrieved: a prefetch may have no waiter

    async def _query_vector(self, query: str) -> Vectors | None:
        """The query's vector, or None when the embedder is backing off, failing or too slow."""
        embedder = self.embedder
        assert embedder is not None
        if self._loads_on_use_now(embedder):
            await cast(LoadsOnUse, embedder).load()  # not on the query's clock: loading is not embedding
        found = self._vector_or_run((embedder.model_id, query))
        if not isinstance(found, asyncio.Future):
            return found
        # Shielded: a search that gives up (its client went away) leaves the run to the others.
        return await asyncio.shield(found)

    async def _embed_query(self, key: tuple[str, str]) -> Vectors | None:
        """Compute and cache the vector of ``key``'s query, at most ``query_timeout`` seconds."""
        import numpy as np

        embedder, health = self.embedder, self.health
        assert embedder is not None
        try:
            async with asyncio.timeout(self.query_timeout):
                vector: Vectors = np.asarray((await embedder.embed([key[1]]))[0], dtype=np.float32)
        except TimeoutError:
            if health is not None:
                health.failed(EmbedderUnavailable(f"query embedding took over {self.query_timeout:g} s"))
            return None
        except EmbedderError as exc:
            if health is not None:
                health.failed(exc)
            return None
        if health is not None:
            health.succeeded()
        self._queries.keep(key, vector)
        return vector


def _past(fuse: Callable[[], _Fused], start: int) -> Iterator[Scored]:
    """The whole fusion's ranking from ``start`` on, fused when first read."""
    fused = fuse()
    yield from (fused.at(i) for i in range(start, len(fused)))


def _show_sentence(result: dict[str, Any], found: list[str], best: int, words: list[str]) -> None:
    """Make sentence ``best`` of ``found`` (with the next one when it is short) the hit's snippet."""
    text = found[best]
    if len(text) < SHORT_SENTENCE and best + 1 < len(found):
        text = f"{text} {found[best + 1]}"
    shown = window(text, words)
    result["snippet"] = shown.text
    result["highlights"] = [[a, b] for a, b in shown.highlights]


def _first_copy(shown: set[str], text: str, plain: bool = False) -> bool:
    """Whether no hit above showed ``text`` (whitespace runs made one space; the heading aside), and
    note it as shown: one answer shows a text once, in its best place, and the place a copy would take
    goes to the next hit. A fact consolidation keeps as its own section in AGENT.md and in weekly
    summaries would otherwise fill an answer with copies of itself."""
    key = _flat(text, plain)
    if key in shown:
        return False
    shown.add(key)
    return True


def _flat(text: str, plain: bool) -> str:
    """``flatten(text)``; ``plain``: ``is_plain(text)`` is known to be true (the index stored it),
    so flattening is replacing the line breaks."""
    return text.replace("\n", " ") if plain else flatten(text)


def _while(items: Iterator[Scored], going: Callable[[], bool]) -> Iterator[Scored]:
    """``items`` while ``going()`` holds, asked before each is read (the ranking past the first
    hits is fused only when an answer reads into it)."""
    while going():
        found = next(items, None)
        if found is None:
            return
        yield found


def _where(hit: RankedChunk | None, row: ChunkRow | None) -> tuple[str, str, str]:
    """A fused hit's path, heading and text, as ``restated_first`` reads them."""
    if hit is not None:
        return hit.path, hit.heading, hit.text
    return ("", "", "") if row is None else (row.path, row.heading, row.body or row.heading)


def _bm25_only(
    source: str, hits: list[RankedChunk], limit: int, explain: bool, plan: BoostPlan | None = None
) -> list[dict[str, Any]]:
    """The first ``limit`` hits, each score multiplied by its standing (retrieval.standing), each
    text once (``_first_copy``); with a ``plan``, the ``limit`` it picks of its ``candidates`` first."""
    want = wanted(plan, limit)
    seen: set[str] = set()
    weighed: list[tuple[RankedChunk, float, str]] = []
    for hit, factor, _ in by_standing(hits):  # each text once (``_first_copy``): the first ``want`` and those below
        flat = _flat(hit.text, hit.plain)
        if flat not in seen:
            seen.add(flat)
            weighed.append((hit, factor, flat))
    weighed, below = weighed[:want], weighed[want:]
    bm25_rank = {id(hit): at for at, hit in enumerate(hits, start=1)} if explain else {}
    out = []
    shown = pick(plan, weighed, lambda s: candidate_of(s[0], round(s[0].score * s[1], 6)), limit)
    if plan is not None and hits:  # the lift orders by score: a restated line stays below its restatement
        shown = restated_first_picked(
            shown, weighed, lambda s: (s[0].path, s[0].heading, s[0].text), hits[0].terms, limit
        )
    if hits:  # of the shown hits that say one thing a value apart, the newest first (retrieval.standing)
        shown = newest_first(shown, lambda c: (c[0][0].path, c[0][0].heading, c[0][0].text), hits[0].terms)
        shown = one_place_shown(
            shown, [*weighed, *below], lambda s: (s[0].path, s[0].heading, s[0].text), hits[0].terms
        )
    for (hit, factor, flat), lifted in shown:
        # The snippet is cut from the text flattened once: the same window (its first step flattens).
        result = (hit if hit.plain else hit._replace(text=flat, plain=True)).as_json(source)
        if factor != 1.0:
            result["score"] = round(hit.score * factor, 6)
        if explain:
            scored = Scored(hit.id, hit.score, 0.0, bm25_rank[id(hit)], hit.score, None, None).with_standing(factor)
            result["explain"] = scored.explain("bm25")
        mark(result, lifted, explain)
        out.append(result)
    return out


def _candidate(scored: Scored, hit: RankedChunk | None, row: ChunkRow | None) -> Candidate:
    """A fused hit as the lift reads it, with the score its answer shows."""
    if hit is not None:
        return candidate_of(hit, round(scored.score, 6))
    assert row is not None
    return Candidate(
        row.path, row.heading, row.line_start, row.line_end, row.body or row.heading, round(scored.score, 6)
    )


def _result(
    source: str, scored: Scored, hit: RankedChunk | None, row: ChunkRow | None, words: list[str]
) -> dict[str, Any]:
    if hit is not None:
        result = hit.as_json(source)
    else:
        assert row is not None
        shown = window(row.body or row.heading, words)
        result = {
            "source": source,
            "path": row.path,
            "heading": row.heading,
            "line_start": row.line_start,
            "line_end": row.line_end,
            "snippet": shown.text,
            "highlights": [[start, end] for start, end in shown.highlights],
        }
    result["score"] = round(scored.score, 6)
    return result


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 6)
