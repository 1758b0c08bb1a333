"""The storage interface recall, indexing, decay, health, compaction and nudges are written against.

SQLite (:mod:`sidecar.episodic.sqlite_store`) serves one sidecar; a server store (PostgreSQL with
pgvector) can implement the same Protocol where journals outgrow one machine. Every method that
reads entries takes the workspace in its arguments and applies it in the query itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from sidecar.episodic.entry import JournalEntry, StoredEntry
from sidecar.episodic.query import ScopeFilter

if TYPE_CHECKING:
    # numpy is imported where vectors are ranked or made: a sidecar with no embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CostTotals",
    "HealthInputs",
    "HealthSnapshot",
    "ImportanceRow",
    "JournalStore",
    "NewEmbedding",
    "RecallStore",
    "Relation",
    "Scored",
    "SharedEntry",
]

Matrix: TypeAlias = "npt.NDArray[np.float32]"


@dataclass(frozen=True, slots=True)
class Scored:
    """A dense candidate: its cosine to the query and its current importance."""

    entry_id: str
    cosine: float
    importance: float


@dataclass(frozen=True, slots=True)
class SharedEntry:
    """A crew entry as a crew store copies it: the entry, its vector (under ``model``) if it has
    one, and the importance recall weighs it by (decayed, as the journal's vector rows hold it)."""

    entry: StoredEntry
    model: str | None
    vector: npt.NDArray[np.float32] | None
    importance: float


@dataclass(frozen=True, slots=True)
class NewEmbedding:
    entry_id: str
    vector: npt.NDArray[np.float32]
    model: str
    base_importance: float


@dataclass(frozen=True, slots=True)
class Relation:
    src_entry_id: str
    dst_entry_id: str
    relation: str  # 'similar' | 'supports' | 'contradicts'
    weight: float


@dataclass(frozen=True, slots=True)
class ImportanceRow:
    entry_id: str
    base_importance: float
    indexed_at: datetime
    reference_count: int


@dataclass(frozen=True, slots=True)
class CostTotals:
    calls: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True, slots=True)
class HealthInputs:
    """What the health score is computed from, for one workspace (or one crew in it).

    ``entry_ts``: timestamps of the embedded entries; ``vectors``: their rows (one model, the one
    most rows use); ``linked``: how many of them touch at least one relation edge.
    """

    embeddable: int
    indexed: int
    entry_ts: list[datetime]
    vectors: Matrix
    linked: int


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    workspace_id: str
    crew_id: str | None
    snapshot_date: str
    freshness: float
    coverage: float
    coherence: float
    efficiency: float
    reachability: float
    score: float

    @property
    def band(self) -> str:
        if self.score < 50:
            return "red"
        return "yellow" if self.score < 75 else "green"

    def to_json(self) -> dict[str, Any]:
        return {
            "workspace_id": self.workspace_id,
            "crew_id": self.crew_id,
            "snapshot_date": self.snapshot_date,
            "metrics": {
                "freshness": self.freshness,
                "coverage": self.coverage,
                "coherence": self.coherence,
                "efficiency": self.efficiency,
                "reachability": self.reachability,
            },
            "score": self.score,
            "band": self.band,
        }


class RecallStore(Protocol):
    """What typed-memory recall reads: the journal itself, or the crew's entries in a crew store."""

    async def fetch(self, workspace_id: str, ids: Sequence[str]) -> dict[str, StoredEntry]: ...
    async def dense_rank(
        self,
        where: ScopeFilter,
        model: str,
        query: npt.NDArray[np.float32],
        limit: int,
        *,
        weighted: bool,
        exclude: Sequence[str] = (),
        floor: float | None = None,
    ) -> list[Scored]:
        """Top ``limit`` rows in scope by cosine (× importance when ``weighted``). With ``floor``,
        rows whose cosine is under it may be left out (a first pass skips rows far from the query)."""
        ...

    async def bm25_rank(self, where: ScopeFilter, q: str, limit: int) -> list[str]: ...
    async def bm25_entries(self, where: ScopeFilter, q: str, limit: int) -> list[StoredEntry]:
        """The entries of ``bm25_rank``, in its order."""
        ...

    async def cosines(
        self, workspace_id: str, model: str, ids: Sequence[str], query: npt.NDArray[np.float32]
    ) -> dict[str, float]: ...
    async def mark_referenced(self, workspace_id: str, ids: Sequence[str], now: datetime) -> None: ...


class JournalStore(RecallStore, Protocol):
    # -- journal -------------------------------------------------------------------------------
    async def append(self, entry: JournalEntry, *, as_latest: bool = False) -> StoredEntry: ...
    async def record(self, entry: JournalEntry, *, as_latest: bool = False) -> str: ...
    async def get(self, workspace_id: str, entry_id: str) -> StoredEntry | None: ...
    async def update(
        self, workspace_id: str, entry_id: str, *, summary: str | None = None, payload: dict[str, Any] | None = None
    ) -> bool: ...
    async def delete(self, workspace_id: str, entry_id: str) -> bool: ...
    async def search(self, q: str, workspace_id: str, limit: int) -> list[StoredEntry]: ...
    async def recent(self, workspace_id: str, limit: int) -> list[StoredEntry]: ...

    # -- embeddings and recall (the RecallStore methods above, and these)
    async def unindexed(self, model: str, limit: int) -> list[StoredEntry]: ...
    async def add_embeddings(self, rows: Sequence[NewEmbedding], edges: Sequence[Relation], now: datetime) -> None: ...
    async def importance_rows(self) -> list[ImportanceRow]: ...
    async def set_importance(self, scores: Sequence[tuple[str, float]]) -> None: ...

    # -- typed memories ------------------------------------------------------------------------
    async def live_topic(
        self, workspace_id: str, namespace: str, topic_key: str, crew_id: str | None = None, agent_id: str | None = None
    ) -> StoredEntry | None: ...
    async def history(
        self,
        workspace_id: str,
        namespace: str,
        topic_key: str,
        limit: int = 100,
        *,
        crew_id: str | bool | None = True,
        agent_id: str | None = None,
    ) -> list[StoredEntry]: ...
    async def feedback(self, workspace_id: str, entry_id: str, positive: bool, now: datetime) -> StoredEntry: ...
    async def restore(self, workspace_id: str, entry_id: str) -> StoredEntry: ...
    async def forget(
        self,
        workspace_id: str,
        namespace: str,
        now: datetime,
        *,
        entry_id: str | None = None,
        topic_key: str | None = None,
        crew_id: str | None = None,
        agent_id: str | None = None,
    ) -> list[str]: ...
    async def prune_expired(self, now: datetime) -> list[str]: ...
    async def merge_into(self, workspace_id: str, kept_id: str, ids: Sequence[str]) -> list[str]: ...
    async def memories(
        self,
        workspace_id: str,
        namespace: str | None,
        limit: int,
        *,
        agent_id: str | None = None,
        crew_id: str | None = None,
    ) -> list[StoredEntry]: ...

    # -- the crew's copy in a crew store ----------------------------------------------------------
    async def crew_signature(self, crew_id: str) -> tuple[int, ...]: ...
    async def crew_entries(self, crew_id: str, ids: Sequence[str] | None = None) -> list[SharedEntry]: ...

    # -- relations -----------------------------------------------------------------------------
    async def add_relations(self, relations: Sequence[Relation], now: datetime) -> None: ...
    async def relations_of(self, workspace_id: str, ids: Sequence[str], relation: str) -> list[Relation]: ...

    # -- maintenance ---------------------------------------------------------------------------
    async def health_inputs(self, workspace_id: str, crew_id: str | None) -> HealthInputs: ...
    async def save_health(self, snapshot: HealthSnapshot) -> None: ...
    async def latest_health(self, workspace_id: str, crew_id: str | None) -> HealthSnapshot | None: ...
    async def health_history(self, workspace_id: str, crew_id: str | None, limit: int) -> list[HealthSnapshot]: ...
    async def workspaces(self) -> list[str]: ...
    async def compact(self, cutoff: datetime, now: datetime) -> int: ...
    async def entries_since_update(self, workspace_id: str, agent_id: str, reset_types: Sequence[str]) -> int: ...
    async def cost_since(self, workspace_id: str, agent_id: str, since: datetime) -> CostTotals: ...
    async def aclose(self) -> None: ...
