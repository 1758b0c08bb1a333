"""The cached matrices recall ranks by: one :class:`~sidecar.episodic.vector_set.VectorSet` per
(model, workspace), and what a write hands them.

The cache is only ever filled from a query that already filtered on the workspace, so a
workspace's matrix cannot hold another workspace's rows. It is tagged with the journal's
generation (a counter in the database that every change to what recall serves bumps, whichever
process made it) and reloaded when stale. The store's own writes do not force a reload: each one
hands the cache what it changed (rows appended, rows no longer served, importance moved) together
with the generation it produced, and a matrix at the generation before is brought up to date in
place. A remember, a feedback or a forget therefore costs the next recall nothing, however large
the journal. Marking hits referenced changes no importance, so recalls keep the matrix warm.

This module needs no numpy (a sidecar with no embedder builds no matrix, yet its store holds a
cache and every write a Delta); the matrices and their rows are in :mod:`sidecar.episodic.vector_set`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.episodic.vector_set import VectorRow, VectorSet

__all__ = ["MAX_BYTES", "MAX_SETS", "Delta", "VectorCache"]

#: Workspaces' matrices kept at most (a recall may name any workspace), and their bytes at most.
MAX_SETS = 64
MAX_BYTES = 256 * 1024 * 1024


@dataclass(slots=True)
class Delta:
    """What one committed write changed for recall: rows to append per (model, workspace)
    (replacing any row of the same entry), entries no longer served, importance moved."""

    rows: dict[tuple[str, str], list[VectorRow]] = field(default_factory=dict)
    gone: set[str] = field(default_factory=set)
    importance: dict[str, float] = field(default_factory=dict)
    reload: bool = False  # too broad to apply in place (a decay pass over every row)


class VectorCache:
    """VectorSets by (model, workspace), each valid for the journal generation it is at.

    Bounded: a recall may name any workspace, so at most ``max_sets`` sets and ``max_bytes`` of
    arrays are kept, the least recently used dropped first (the set just loaded always stays: its
    recall is using it). A dropped set is loaded again by its next recall. Reads fill it on the
    journal's reader thread while writes update it on the event loop, hence the lock."""

    def __init__(self, max_sets: int = MAX_SETS, max_bytes: int = MAX_BYTES) -> None:
        self._sets: OrderedDict[tuple[str, str], tuple[int, VectorSet]] = OrderedDict()
        self._lock = threading.Lock()
        self.max_sets = max_sets
        self.max_bytes = max_bytes

    def __len__(self) -> int:
        return len(self._sets)

    @property
    def nbytes(self) -> int:
        """The bytes the kept sets take."""
        with self._lock:
            return sum(vectors.nbytes for _, vectors in self._sets.values())

    def get(self, model: str, workspace_id: str, generation: int) -> VectorSet | None:
        key = (model, workspace_id)
        with self._lock:
            cached = self._sets.get(key)
            if cached is None or cached[0] != generation:
                return None
            self._sets.move_to_end(key)
            return cached[1]

    def put(self, model: str, workspace_id: str, generation: int, vectors: VectorSet) -> None:
        key = (model, workspace_id)
        with self._lock:
            self._sets[key] = (generation, vectors)
            self._sets.move_to_end(key)
            held = sum(v.nbytes for _, v in self._sets.values())
            while len(self._sets) > 1 and (len(self._sets) > self.max_sets or held > self.max_bytes):
                _, (_, dropped) = self._sets.popitem(last=False)
                held -= dropped.nbytes

    def apply(self, delta: Delta, generation: int) -> None:
        """Bring every set that was current just before ``generation`` up to it; drop older ones."""
        with self._lock:
            for key, (at, vectors) in list(self._sets.items()):
                if at >= generation:
                    continue  # loaded after this write committed: it already holds it
                if at != generation - 1 or delta.reload:
                    del self._sets[key]
                    continue
                rows = delta.rows.get(key, [])
                if any(r.dim != vectors.dim for r in rows):
                    del self._sets[key]
                    continue
                vectors.kill(delta.gone)
                vectors.append(rows)
                vectors.set_importance(delta.importance)
                if vectors.stale:
                    del self._sets[key]
                    continue
                self._sets[key] = (generation, vectors)

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()
