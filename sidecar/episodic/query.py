"""Recall queries, the scope filter every store query applies, and recall hits."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sidecar.episodic.entry import StoredEntry, invalid, refuse_unknown, require_id

__all__ = ["DEFAULT_K", "MAX_K", "Query", "RecalledEntry", "Scope", "ScopeFilter"]

DEFAULT_K = 5
MAX_K = 50
_QUERY_FIELDS = frozenset({"workspace_id", "crew_id", "agent_id", "scope", "query_text", "k", "walk_depth"})


class Scope(StrEnum):
    OWN = "own"  # the agent's own past only
    CREW_SHARED = "crew_shared"  # own entries plus the crew's (only high-value types are embedded)


@dataclass(frozen=True, slots=True)
class ScopeFilter:
    """Which rows a store query may see. ``workspace_id`` is always applied, in the query itself.

    ``agent_id`` alone: that agent's entries. ``crew_id`` (with or without ``agent_id``): the
    crew's entries plus the agent's own. Neither: the whole workspace (indexing, health).
    """

    workspace_id: str
    agent_id: str | None = None
    crew_id: str | None = None
    #: Only this namespace's entries; None: every namespace.
    namespace: str | None = None
    #: Only typed memories of these types; None: every entry (journal events too).
    memory_types: tuple[str, ...] | None = None
    #: Entries whose ``expires_at`` is at or before this are not served; None: the current time.
    now: datetime | None = None
    #: The agent's own entries are only those it holds outside any crew (typed memories: a crew
    #: memory an agent wrote is the crew's, not its own).
    private: bool = False

    def serves(self, entry: StoredEntry, now: datetime) -> bool:
        """Whether recall may return ``entry`` at ``now``: live, not expired, in scope, of the types
        asked for. The store's queries apply the same rule; this checks a row reached another way
        (a relation walk, a fetch by id)."""
        if entry.status != "live" or (entry.expires_at is not None and entry.expires_at <= now):
            return False
        if self.memory_types is not None and entry.memory_type not in self.memory_types:
            return False
        return self.admits(entry.workspace_id, entry.agent_id, entry.crew_id, entry.namespace)

    def admits(
        self, workspace_id: str, agent_id: str | None, crew_id: str | None, namespace: str | None = None
    ) -> bool:
        """The same rule as the store's SQL clause, for rows reached another way (a relation walk)."""
        if workspace_id != self.workspace_id:
            return False
        if self.namespace is not None and namespace is not None and namespace != self.namespace:
            return False
        own = agent_id == self.agent_id and (crew_id is None or not self.private)
        if self.crew_id is not None:
            return crew_id == self.crew_id or (self.agent_id is not None and own)
        return self.agent_id is None or own


@dataclass(frozen=True, slots=True)
class Query:
    """An episodic recall; construction validates it (``BadRequest`` with the reason)."""

    workspace_id: str
    query_text: str
    scope: Scope = Scope.OWN
    agent_id: str | None = None
    crew_id: str | None = None
    k: int = DEFAULT_K
    walk_depth: int = 0

    def __post_init__(self) -> None:
        require_id("workspace_id", self.workspace_id)
        require_id("agent_id", self.agent_id, optional=True)
        require_id("crew_id", self.crew_id, optional=True)
        if not isinstance(self.query_text, str) or not self.query_text.strip():
            raise invalid("query_text", "query_text must be a non-empty string")
        if self.scope is Scope.OWN and not self.agent_id:
            raise invalid("agent_id", "scope own needs agent_id")
        if self.scope is Scope.CREW_SHARED and not self.crew_id:
            raise invalid("crew_id", "scope crew_shared needs crew_id")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or not 1 <= self.k <= MAX_K:
            raise invalid("k", f"k must be an integer in 1..{MAX_K}")
        if self.walk_depth not in (0, 1) or isinstance(self.walk_depth, bool):
            raise invalid("walk_depth", "walk_depth must be 0 or 1")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Query:
        """Build from a decoded JSON object (extra keys other than the Query fields are refused)."""
        refuse_unknown(body, _QUERY_FIELDS)
        raw_scope = body.get("scope", Scope.OWN.value)
        if not isinstance(raw_scope, str) or raw_scope not in {s.value for s in Scope}:
            raise invalid("scope", "scope must be own or crew_shared")
        return cls(
            workspace_id=body.get("workspace_id", ""),
            query_text=body.get("query_text", ""),
            scope=Scope(raw_scope),
            agent_id=body.get("agent_id"),
            crew_id=body.get("crew_id"),
            k=body.get("k", DEFAULT_K),
            walk_depth=body.get("walk_depth", 0),
        )

    @property
    def filter(self) -> ScopeFilter:
        if self.scope is Scope.OWN:
            return ScopeFilter(self.workspace_id, agent_id=self.agent_id)
        return ScopeFilter(self.workspace_id, agent_id=self.agent_id, crew_id=self.crew_id)


@dataclass(frozen=True, slots=True)
class RecalledEntry:
    """One recalled entry.

    ``score`` is the cosine in [0, 1] for dense recall and the RRF score for hybrid recall;
    ``cosine`` is the raw cosine when the dense leg saw the entry; ``via`` says how it was found
    (``dense``, ``bm25``, ``hybrid`` or ``similar`` for a one-hop walk).
    """

    entry_id: str
    score: float
    age_seconds: float
    summary: str
    entry_type: str
    agent_id: str | None
    payload: dict[str, Any]
    cosine: float | None = None
    importance: float | None = None
    via: str = "dense"

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "score": self.score,
            "age_seconds": self.age_seconds,
            "summary": self.summary,
            "entry_type": self.entry_type,
            "agent_id": self.agent_id,
            "payload": self.payload,
            "cosine": self.cosine,
            "importance": self.importance,
            "via": self.via,
        }
