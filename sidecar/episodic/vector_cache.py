"""A per-(model, workspace) matrix of normalised vectors, so a recall is one matrix-vector product.

The cache is only ever filled from a query that already filtered on the workspace, so a
workspace's matrix cannot hold another workspace's rows. It is tagged with the store's write
generation (bumped by every write that adds, removes or re-weights embeddings) and reloaded
when stale; marking hits referenced does not change importance, so recalls keep it warm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sidecar.episodic.query import ScopeFilter
from sidecar.episodic.store import Scored

__all__ = ["VectorCache", "VectorSet"]

Floats = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class VectorSet:
    """The embedded entries of one workspace for one model, row-aligned."""

    ids: tuple[str, ...]
    # Agent and crew ids as integer codes (-1 for none): masks are integer compares, not object ones.
    agent_codes: npt.NDArray[np.int32]
    crew_codes: npt.NDArray[np.int32]
    codes: dict[str, int]
    importance: npt.NDArray[np.float64]
    matrix: Floats

    @classmethod
    def build(cls, rows: Sequence[tuple[str, str | None, str | None, float, bytes, int]]) -> VectorSet:
        """From ``(entry_id, agent_id, crew_id, importance, blob, dim)`` rows of one model.

        A row whose dim differs from the first row's, or whose blob does not hold dim floats, is skipped.
        """
        dim = rows[0][5] if rows else 0
        kept = [r for r in rows if r[5] == dim and len(r[4]) == 4 * dim]
        # One join and one frombuffer: ~10x faster than a frombuffer per row at 10k rows.
        flat = np.frombuffer(b"".join(r[4] for r in kept), dtype="<f4")
        matrix = flat.reshape(len(kept), dim).astype(np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        codes: dict[str, int] = {}

        def code(value: str | None) -> int:
            return -1 if value is None else codes.setdefault(value, len(codes))

        return cls(
            ids=tuple(r[0] for r in kept),
            agent_codes=np.array([code(r[1]) for r in kept], dtype=np.int32),
            crew_codes=np.array([code(r[2]) for r in kept], dtype=np.int32),
            codes=codes,
            importance=np.array([r[3] for r in kept], dtype=np.float64),
            matrix=matrix,
        )

    def mask(self, where: ScopeFilter, exclude: Sequence[str]) -> npt.NDArray[np.bool_]:
        crew = self.codes.get(where.crew_id, -2) if where.crew_id is not None else None
        agent = self.codes.get(where.agent_id, -2) if where.agent_id is not None else None
        if crew is not None:
            keep = self.crew_codes == crew
            if agent is not None:
                keep |= self.agent_codes == agent
        elif agent is not None:
            keep = self.agent_codes == agent
        else:
            keep = np.ones(len(self.ids), dtype=bool)
        if exclude:
            excluded = set(exclude)
            keep &= np.fromiter((i not in excluded for i in self.ids), dtype=bool, count=len(self.ids))
        return np.asarray(keep, dtype=bool)

    def rank(
        self, where: ScopeFilter, query: Floats, limit: int, *, weighted: bool, exclude: Sequence[str]
    ) -> list[Scored]:
        """Top ``limit`` rows in scope by cosine (× importance when ``weighted``)."""
        if limit < 1 or not self.ids or query.shape[-1] != self.matrix.shape[1]:
            return []
        norm = float(np.linalg.norm(query)) or 1.0
        cosines = self.matrix @ (query.astype(np.float32) / norm)
        keys = cosines * self.importance if weighted else cosines.astype(np.float64)
        candidates = np.flatnonzero(self.mask(where, exclude))
        if len(candidates) > limit:
            part = np.argpartition(-keys[candidates], limit - 1)[:limit]
            candidates = candidates[part]
        order = candidates[np.argsort(-keys[candidates], kind="stable")]
        return [Scored(self.ids[i], float(cosines[i]), float(self.importance[i])) for i in order]


class VectorCache:
    """VectorSets by (model, workspace), each valid for the generation it was loaded at."""

    def __init__(self) -> None:
        self._sets: dict[tuple[str, str], tuple[int, VectorSet]] = {}

    def get(self, model: str, workspace_id: str, generation: int) -> VectorSet | None:
        cached = self._sets.get((model, workspace_id))
        if cached is None or cached[0] != generation:
            return None
        return cached[1]

    def put(self, model: str, workspace_id: str, generation: int, vectors: VectorSet) -> None:
        self._sets[(model, workspace_id)] = (generation, vectors)

    def clear(self) -> None:
        self._sets.clear()
