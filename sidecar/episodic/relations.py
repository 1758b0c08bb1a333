"""A-Mem-style edges between journal entries.

``similar``: at indexing, a new entry points to its top 3 existing entries of the same workspace
with cosine above 0.80 (weight = cosine); the inverse direction is implied at read time.
``supports``: a consolidated rule points to each piece of evidence it was derived from (weight 1.0).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

from sidecar.clock import utcnow
from sidecar.episodic.entry import StoredEntry, invalid, require_id
from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.store import JournalStore, Relation
from sidecar.errors import NotFound

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = ["SIMILAR_THRESHOLD", "SIMILAR_TOP", "link_supports", "similar_edges", "walk_similar"]

SIMILAR_THRESHOLD = 0.80
SIMILAR_TOP = 3
Floats: TypeAlias = "npt.NDArray[np.float32]"


async def similar_edges(store: JournalStore, model: str, batch: Sequence[tuple[StoredEntry, Floats]]) -> list[Relation]:
    """``similar`` edges for freshly embedded entries, in order: each one's pool is the workspace's
    stored vectors plus the entries earlier in this batch (so edges always point new → old)."""
    import numpy as np

    edges: list[Relation] = []
    for i, (entry, vector) in enumerate(batch):
        where = ScopeFilter(entry.workspace_id)
        stored = await store.dense_rank(
            where, model, vector, SIMILAR_TOP, weighted=False, exclude=[entry.id], floor=SIMILAR_THRESHOLD
        )
        candidates = {s.entry_id: s.cosine for s in stored}
        for earlier, earlier_vector in batch[:i]:
            if earlier.workspace_id == entry.workspace_id and earlier.id != entry.id:
                candidates[earlier.id] = float(np.dot(vector, earlier_vector))
        best = sorted(candidates.items(), key=lambda kv: -kv[1])[:SIMILAR_TOP]
        edges += [Relation(entry.id, dst, "similar", cos) for dst, cos in best if cos > SIMILAR_THRESHOLD]
    return edges


async def link_supports(
    store: JournalStore,
    rule_id: str,
    evidence_ids: Sequence[str],
    *,
    workspace_id: str,
    now: datetime | None = None,
) -> int:
    """Point the rule entry at every evidence entry (``supports``, weight 1.0); all in one workspace.

    Raises NotFound when the rule or any evidence entry is not in ``workspace_id``.
    """
    require_id("rule_id", rule_id)
    if not evidence_ids:
        raise invalid("evidence_ids", "link_supports needs at least one evidence id")
    ids = [rule_id, *evidence_ids]
    found = await store.fetch(workspace_id, ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"not in workspace {workspace_id}: {', '.join(missing[:5])}")
    edges = [Relation(rule_id, e, "supports", 1.0) for e in dict.fromkeys(evidence_ids) if e != rule_id]
    await store.add_relations(edges, now or utcnow())
    return len(edges)


async def walk_similar(store: JournalStore, workspace_id: str, ids: Sequence[str]) -> dict[str, list[Relation]]:
    """One hop along ``similar`` edges (both directions) from each of ``ids``.

    Returns, per starting id, the edges leading to an entry that is not itself a starting id,
    strongest first.
    """
    start = set(ids)
    walked: dict[str, list[Relation]] = {i: [] for i in ids}
    for edge in await store.relations_of(workspace_id, ids, "similar"):
        for here, there in ((edge.src_entry_id, edge.dst_entry_id), (edge.dst_entry_id, edge.src_entry_id)):
            if here in start and there not in start:
                walked[here].append(Relation(here, there, "similar", edge.weight))
    for edges in walked.values():
        edges.sort(key=lambda r: -r.weight)
    return walked
