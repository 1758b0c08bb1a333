"""Episodic recall: dense (cosine × importance) and hybrid (cosine and BM25 fused by RRF, k = 60).

No embedder, or an embedder error: ``recall`` returns no hits and ``hybrid_recall`` serves BM25
alone; neither fails. Every returned hit is marked referenced, which the nightly decay turns
into a boost. ``walk_depth = 1`` adds, after the hits, their one-hop ``similar`` neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import structlog

from sidecar.clock import utcnow
from sidecar.episodic.entry import StoredEntry
from sidecar.episodic.query import Query, RecalledEntry
from sidecar.episodic.relations import walk_similar
from sidecar.episodic.store import JournalStore
from sidecar.retrieval.embed.base import Embedder, EmbedderError
from sidecar.retrieval.fusion import DEFAULT_K, rrf

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = ["HYBRID_POOL", "RecallOutcome", "hybrid_recall", "query_vector", "recall", "run_recall"]

log = structlog.get_logger(__name__)
#: The least cosine a dense candidate needs: below it, nothing in the entry answers the query and it
#: would only fill ``k``. Lower than search's match floor (0.4): journal entries are one line, and
#: the small in-process model scores a one-line paraphrase ("out-of-memory kill of the cart
#: service" for "OOM in checkout") near 0.25, unrelated lines near 0.1.
DENSE_FLOOR = 0.2
#: How deep each leg of a hybrid recall looks before fusion (at least 4 × k).
HYBRID_POOL = 50


@dataclass(frozen=True, slots=True)
class RecallOutcome:
    """The hits, and the dense leg's state: ``ok``, ``no_embedder`` or ``embedder_error``."""

    hits: list[RecalledEntry]
    dense: str


@dataclass(frozen=True, slots=True)
class _Ranked:
    entry_id: str
    score: float
    cosine: float | None
    importance: float | None
    via: str


async def recall(
    store: JournalStore, embedder: Embedder | None, query: Query, *, now: datetime | None = None
) -> list[RecalledEntry]:
    """Top ``k`` entries in scope by cosine × importance; ``score`` is the cosine (clipped to [0, 1])."""
    return (await run_recall(store, embedder, query, hybrid=False, now=now)).hits


async def hybrid_recall(
    store: JournalStore, embedder: Embedder | None, query: Query, *, now: datetime | None = None
) -> list[RecalledEntry]:
    """Top ``k`` entries in scope by RRF over the cosine ranking and the BM25 ranking."""
    return (await run_recall(store, embedder, query, hybrid=True, now=now)).hits


async def run_recall(
    store: JournalStore, embedder: Embedder | None, query: Query, *, hybrid: bool, now: datetime | None = None
) -> RecallOutcome:
    """Either recall, reporting whether the dense leg could run."""
    now = now or utcnow()
    vector, dense = await query_vector(embedder, query.query_text)
    model = embedder.model_id if embedder is not None else ""
    if hybrid:
        ranked = await _hybrid(store, model, vector, query)
    else:
        ranked = await _dense(store, model, vector, query)
    hits = await _materialise(store, query, ranked, now)
    if query.walk_depth >= 1 and hits:
        hits += await _walk(store, query, hits, now)
    if hits:
        await store.mark_referenced(query.workspace_id, [h.entry_id for h in hits], now)
    return RecallOutcome(hits, dense)


async def query_vector(embedder: Embedder | None, text: str) -> tuple[npt.NDArray[np.float32] | None, str]:
    """The query's vector and the dense leg's state: ``ok``, ``no_embedder`` or ``embedder_error``."""
    if embedder is None:
        return None, "no_embedder"
    import numpy as np

    try:
        vectors = await embedder.embed([text])
    except EmbedderError as exc:
        log.warning("episodic.recall_degraded", error=str(exc))
        return None, "embedder_error"
    if vectors.shape != (1, embedder.dim):
        log.warning("episodic.recall_degraded", error=f"embedder returned shape {vectors.shape}")
        return None, "embedder_error"
    return vectors[0].astype(np.float32), "ok"


async def _dense(
    store: JournalStore, model: str, vector: npt.NDArray[np.float32] | None, query: Query
) -> list[_Ranked]:
    if vector is None:
        return []
    scored = await store.dense_rank(query.filter, model, vector, query.k, weighted=True)
    # Only what the query earns: a cosine over the match floor. Without it every recall would fill
    # k with whatever happens to be least unlike the query (cosines near zero).
    return [
        _Ranked(s.entry_id, _unit(s.cosine), s.cosine, s.importance, "dense") for s in scored if s.cosine >= DENSE_FLOOR
    ]


async def _hybrid(
    store: JournalStore, model: str, vector: npt.NDArray[np.float32] | None, query: Query
) -> list[_Ranked]:
    pool = max(HYBRID_POOL, 4 * query.k)
    dense = [] if vector is None else await store.dense_rank(query.filter, model, vector, pool, weighted=False)
    dense = [s for s in dense if s.cosine >= DENSE_FLOOR]  # as above: no filler
    sparse = await store.bm25_rank(query.filter, query.query_text, pool)
    by_id = {s.entry_id: s for s in dense}
    bm25 = set(sparse)
    fused = rrf([[s.entry_id for s in dense], sparse], k=DEFAULT_K)[: query.k]
    ranked: list[_Ranked] = []
    for entry_id, score in fused:
        seen = by_id.get(entry_id)
        via = "hybrid" if seen is not None and entry_id in bm25 else ("dense" if seen is not None else "bm25")
        cosine = None if seen is None else seen.cosine
        ranked.append(_Ranked(entry_id, score, cosine, None if seen is None else seen.importance, via))
    return ranked


async def _materialise(
    store: JournalStore, query: Query, ranked: Sequence[_Ranked], now: datetime
) -> list[RecalledEntry]:
    entries = await store.fetch(query.workspace_id, [r.entry_id for r in ranked])
    return [_hit(entries[r.entry_id], r, now) for r in ranked if r.entry_id in entries]


async def _walk(store: JournalStore, query: Query, hits: list[RecalledEntry], now: datetime) -> list[RecalledEntry]:
    """One hop along ``similar`` edges from the hits: neighbours in scope, at most ``k`` of them,
    each scored its parent's score × the edge weight."""
    walked = await walk_similar(store, query.workspace_id, [h.entry_id for h in hits])
    wanted = [(h, edge) for h in hits for edge in walked.get(h.entry_id, [])]
    entries = await store.fetch(query.workspace_id, [edge.dst_entry_id for _, edge in wanted])
    where, taken, extra = query.filter, {h.entry_id for h in hits}, []
    for parent, edge in wanted:
        entry = entries.get(edge.dst_entry_id)
        if entry is None or entry.id in taken or not where.serves(entry, now):
            continue
        taken.add(entry.id)
        ranked = _Ranked(entry.id, parent.score * edge.weight, None, None, "similar")
        extra.append(_hit(entry, ranked, now))
    return sorted(extra, key=lambda h: -h.score)[: query.k]


def _hit(entry: StoredEntry, ranked: _Ranked, now: datetime) -> RecalledEntry:
    return RecalledEntry(
        entry_id=entry.id,
        score=ranked.score,
        age_seconds=max(0.0, (now - entry.ts).total_seconds()),
        summary=entry.summary,
        entry_type=entry.entry_type,
        agent_id=entry.agent_id,
        payload=entry.payload,
        cosine=ranked.cosine,
        importance=ranked.importance,
        via=ranked.via,
    )


def _unit(cosine: float) -> float:
    return min(1.0, max(0.0, cosine))
