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
(``expanded_index``); its row at weights (0, 0) is that copy's own control. Every row also says,
question by question, how many questions it answers better and worse than the shipped fusion and
the 95% interval of the mean difference (``paired``): a variant whose interval holds 0 is not
told apart from the shipped fusion by these 495 questions.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sidecar.index.postings import TOKENIZE
from sidecar.index.query import STOPWORDS, build_match
from sidecar.index.snippet import sentence_spans
from sidecar.logs import configure_logging
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from sidecar.retrieval.fusion import rrf
from sidecar.retrieval.hybrid import CANDIDATES, CONTEXT_AFTER, CONTEXT_BEFORE, DENSE_MATCH, Scored, fuse_weighted
from sidecar.retrieval.vectors import embed_text
from tests.bench.retrieval import CACHE, TUNING_CONVERSATIONS, CachedEmbedder, Corpus, Query, Runner, load_locomo
from tests.bench.util import report

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


@dataclass
class Asked:
    """One question with what the shipped search would rank for it."""

    query: Query
    conv: Conversation
    bm25: list[tuple[int, float]]
    qvec: Floats
    expanded: dict[tuple[float, float], list[tuple[int, float]]] = field(default_factory=dict)  # BM25 with the
    # turns before and after it in a turn's key, by their (column) weights


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


async def load(runner: Runner, corpora: list[Corpus], model: OnnxEmbedder, docs: CachedEmbedder) -> list[Conversation]:
    """Each tier's chunks with their neighbours and turns (read through its ``VectorIndex``), and
    from one model run per chunk (the run the index stores the vector of) the chunk's vector and
    the vectors late-pooled over its body and over each of its sentences."""
    out = []
    for tier, vectors, corpus in zip(runner.tiers, runner.vectors, corpora, strict=True):
        with sqlite3.connect(tier.index.path) as conn:
            rows = conn.execute("SELECT id, path, heading, body, line_start FROM chunks ORDER BY id").fetchall()
        ids = [r[0] for r in rows]
        texts, spans = [], []
        for _, _, heading, body, _ in rows:
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
        conv.fts = expanded_index(conv)
    return out


async def run(cache: Path) -> None:
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
            for q in queries:
                hits = await runner.tiers[q.corpus].search(q.text, CANDIDATES)
                qvec = np.asarray((await model.embed([q.text]))[0], dtype=np.float32)
                a = Asked(q, convs[q.corpus], [(h.id, h.score) for h in hits], qvec)
                a.expanded = {w: expanded_bm25(a.conv, q.text, w) for w in EXPANSIONS}
                asked.append(a)
                words = [w for w in re.findall(r"[\w']+", q.text) if w.lower() not in STOPWORDS]
                stripped.append(" ".join(words) or q.text)
            plain = await model.embed(stripped)
        finally:
            await runner.close()
            await docs.aclose()
    report("variants: data", f"LoCoMo conversations 0-2 (tuning) only: {note}")
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
    ]
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
    per_q: list[float] = []
    for a, vec in zip(asked, plain, strict=True):
        qvec = np.asarray(vec, dtype=np.float32)
        per_q.append(recall_at_10([s.id for s in shipped(a, a.conv.matrix @ qvec)], a))
    report("variants R@10 query embedded without its stopwords", f"{statistics.fmean(per_q):.3f}", "")
    report("variants: wall time", f"{time.perf_counter() - started:.0f} s")


def main() -> None:
    configure_logging("console", "warning")
    if not OnnxEmbedder.available():
        report("variants", "skipped: the [embed] extra is not installed")
        return
    asyncio.run(run(CACHE))


if __name__ == "__main__":
    main()
