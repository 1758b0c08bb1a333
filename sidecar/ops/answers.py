"""What the typed memories, the journal, status, the palace and the graph answer, as TypedDicts.

The operations are typed with them, and the OpenAPI document (``sidecar.http.openapi``) derives
its answer schemas from them with ``sidecar.contract.json_schema`` (``inline=True``: the parts
below an answer are written in place, not named), so the MCP tools' output schemas, taken from
that document, come from these types too. ``JournalEntryAnswer`` is the document's
``JournalEntry`` (the name ``sidecar.episodic.entry`` gives the entry itself).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from sidecar.contract import Format
from sidecar.episodic.entry import MemoryStatus, MemoryType

__all__ = [
    "ANSWERS",
    "KG_ANSWERS",
    "AgentSettingsAnswer",
    "AppendAnswer",
    "Bm25State",
    "CopySkipped",
    "DeleteAnswer",
    "Dense",
    "DiaryEntry",
    "DiaryReadAnswer",
    "DiaryWriteAnswer",
    "FeedbackAnswer",
    "FeedbackCounts",
    "ForgetAnswer",
    "HealthMetrics",
    "HealthSnapshot",
    "IdentityAnswer",
    "IngestAnswer",
    "JournalEntryAnswer",
    "KgAddAnswer",
    "KgEntity",
    "KgFact",
    "KgFactsAnswer",
    "KgQueryAnswer",
    "KgStatsAnswer",
    "KgTimelineAnswer",
    "KgTraverseAnswer",
    "KgTunnelsAnswer",
    "LastReindex",
    "ListAnswer",
    "MemoryHit",
    "MemoryRecallAnswer",
    "MemoryStatus",
    "MemoryType",
    "NearMiss",
    "PalaceFile",
    "QueueState",
    "RecallHit",
    "RecallResponse",
    "RememberAnswer",
    "ReplayedAppend",
    "RestoreAnswer",
    "SessionAnswer",
    "Skipped",
    "SkippedPath",
    "Status",
    "TaxonomyAnswer",
    "Tunnel",
    "WatcherState",
    "Wing",
]

#: How the dense leg of a recall went.
Dense = Literal["ok", "no_embedder", "embedder_error"]


class RememberAnswer(TypedDict):
    id: str
    seq: int
    memory_type: MemoryType
    namespace: str
    crew: bool
    topic_key: NotRequired[str | None]
    supersedes: NotRequired[str | None]
    expires_at: NotRequired[str | None]


class MemoryHit(TypedDict):
    id: str
    content: str
    score: float
    source: Literal["own", "crew"]
    entry_type: str
    memory_type: NotRequired[str | None]
    via: NotRequired[Literal["dense", "bm25", "both"]]
    topic_key: NotRequired[str | None]
    tags: NotRequired[list[str]]
    explain: NotRequired[Annotated[dict[str, Any], "the score's parts"]]
    agent_id: NotRequired[str | None]
    namespace: NotRequired[str]
    priority: NotRequired[Annotated[str | int | None, "1-10, or a marker (pin...)"]]
    confidence: NotRequired[float]
    ts: NotRequired[str]
    age_seconds: NotRequired[float]
    expires_at: NotRequired[str | None]


class NearMiss(TypedDict):
    id: str
    content: str
    cosine: float
    floor: Annotated[float, "the cosine a memory needs to be recalled"]
    note: str


class MemoryRecallAnswer(TypedDict):
    hits: list[MemoryHit]
    scope: Literal["own", "crew_shared"]
    scoring: Literal["importance", "activation"]
    dense: Dense
    degraded: NotRequired[list[Literal["crew"]]]
    near: NotRequired[
        Annotated[NearMiss, "nothing was recalled, but this memory came near the query, under the match floor"]
    ]


class FeedbackCounts(TypedDict):
    positive: int
    negative: int


class FeedbackAnswer(TypedDict):
    id: str
    signal: Literal["+", "-"]
    importance: float
    confidence: float
    status: str
    feedback: NotRequired[FeedbackCounts]


class ForgetAnswer(TypedDict):
    forgotten: list[str]
    facts_ended: NotRequired[Annotated[int, "the knowledge graph's facts the forgotten memories stated, ended now"]]


class RecallHit(TypedDict):
    entry_id: str
    score: float
    age_seconds: float
    summary: str
    entry_type: str
    highlights: Annotated[
        list[list[int]], "[start, end) offsets of the query's terms in summary, in Unicode code points"
    ]
    agent_id: NotRequired[str | None]
    payload: NotRequired[dict[str, Any]]
    cosine: NotRequired[float | None]
    importance: NotRequired[float | None]
    via: NotRequired[Literal["dense", "bm25", "hybrid", "similar"]]


class RecallResponse(TypedDict):
    hits: list[RecallHit]
    hybrid: bool
    dense: Dense


class HealthMetrics(TypedDict):
    freshness: float
    coverage: float
    coherence: float
    efficiency: float
    reachability: float


class HealthSnapshot(TypedDict):
    workspace_id: str
    crew_id: str | None
    snapshot_date: str
    metrics: HealthMetrics
    score: float
    band: Literal["red", "yellow", "green"]


class JournalEntryAnswer(TypedDict):
    id: str
    seq: int
    workspace_id: str
    crew_id: str | None
    agent_id: str | None
    ts: str
    entry_type: str
    severity: str
    summary: str
    payload: dict[str, Any]
    refs: dict[str, Any]
    priority: Annotated[str | int | None, "1-10, or a marker (pin...)"]
    embeddable: bool
    memory_type: MemoryType | None
    topic_key: str | None
    namespace: str
    status: MemoryStatus
    superseded_by: str | None
    importance: float
    confidence: float
    tags: list[str]
    expires_at: str | None


class AppendAnswer(TypedDict):
    id: str
    seq: int
    embeddable: bool


class ReplayedAppend(TypedDict):
    id: str
    seq: int
    embeddable: bool
    replayed: bool


class SessionAnswer(TypedDict):
    id: str
    seq: int
    replayed: bool
    source_id: str
    l0_abstract: str


class RestoreAnswer(TypedDict):
    id: str
    status: str
    confidence: float
    importance: float


class LastReindex(TypedDict):
    at: float
    duration_ms: float
    kind: str


class Bm25State(TypedDict):
    engine: Literal["postings", "fts5"]
    postings: NotRequired[int | str]
    terms: NotRequired[int]
    delta_chunks: NotRequired[int]


class QueueState(TypedDict):
    indexed_seq: int
    pending: int
    lag_ms: float
    depth: int
    errors: int


class WatcherState(TypedDict):
    running: bool
    restarts: int


class CopySkipped(TypedDict):
    files: int
    memories: int


class SkippedPath(TypedDict):
    path: str
    reason: str


class Skipped(TypedDict):
    count: int
    first: list[SkippedPath]


class Status(TypedDict):
    tier: str
    files: int
    chunks: int
    bytes: int
    integrity: str
    dir: NotRequired[str]
    embedder: NotRequired[
        Annotated[
            dict[str, Any],
            "the embedder: state, model, dim, search (hybrid or bm25), fusion, vectors, backlog; while it "
            "catches up, progress; when degraded, last_error and retry_in_s",
        ]
    ]
    index_bytes: NotRequired[int]
    last_reindex: NotRequired[LastReindex | None]
    bm25: NotRequired[Bm25State]
    queue: NotRequired[QueueState]
    watcher: NotRequired[WatcherState | None]
    via: NotRequired[Annotated[str, "member: the lead that answered"]]
    store: NotRequired[Annotated[str, "a member's crew in a server store: postgres"]]
    crew: NotRequired[str]
    vectors: NotRequired[int]
    seq: NotRequired[Annotated[int, "the lead's writes the crew store holds, up to this seq"]]
    copy_skipped: NotRequired[
        Annotated[
            CopySkipped,
            "with a server crew store (the lead's crew status and a member's): crew files and "
            "crew memories the lead's copy into the store left out (text the database cannot hold)",
        ]
    ]
    last_indexed: NotRequired[Annotated[str, Format("date-time")] | None]
    skipped: NotRequired[
        Annotated[
            Skipped,
            "paths under the tier dir the index leaves out because they break the path "
            "rules (too long or deep, a hidden or lookalike name, a linked or unreadable directory), "
            "with why; first names up to 20 of them",
        ]
    ]


#: The answers the OpenAPI document names, by their name there.
ANSWERS: dict[str, type] = {
    "Status": Status,
    "JournalEntry": JournalEntryAnswer,
    "RememberAnswer": RememberAnswer,
    "MemoryRecallAnswer": MemoryRecallAnswer,
    "FeedbackAnswer": FeedbackAnswer,
    "ForgetAnswer": ForgetAnswer,
    "RecallResponse": RecallResponse,
    "HealthSnapshot": HealthSnapshot,
}


# -- the palace -----------------------------------------------------------------------------------
class PalaceFile(TypedDict):
    wing: str
    room: str
    path: str
    bytes: int
    chunks: int
    modified: str


class ListAnswer(TypedDict):
    files: list[PalaceFile]


class Wing(TypedDict):
    wing: str
    files: NotRequired[int]
    memories: NotRequired[int]
    rooms: list[dict[str, Any]]


class TaxonomyAnswer(TypedDict):
    wings: list[Wing]


class DeleteAnswer(TypedDict):
    tier: str
    path: str
    deleted: Literal["file", "section"]
    heading: NotRequired[str]
    line_start: NotRequired[int]
    line_end: NotRequired[int]
    bytes_removed: int
    bytes: NotRequired[int]
    seq: int
    journal_id: NotRequired[str]
    facts_ended: NotRequired[Annotated[int, "the knowledge graph's facts the deleted text stated, ended now"]]


class IdentityAnswer(TypedDict):
    path: str
    chars: int
    seq: int


class DiaryWriteAnswer(TypedDict):
    agent_id: str
    path: str
    at: str
    seq: int


class DiaryEntry(TypedDict):
    agent_id: str
    at: str
    path: str
    line_start: int
    line_end: int
    content: str


class DiaryReadAnswer(TypedDict):
    agent_id: str
    entries: list[DiaryEntry]


class IngestAnswer(TypedDict):
    dry_run: bool
    kept: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    failed: NotRequired[
        Annotated[list[dict[str, Any]], "kept turns that could not be stored: index, chunk, code, message"]
    ]
    counts: dict[str, Any]


class AgentSettingsAnswer(TypedDict):
    path: str | None
    values: dict[str, Any]
    errors: list[str]
    effective: dict[str, Any]


# -- the knowledge graph --------------------------------------------------------------------------
class KgFact(TypedDict):
    id: int
    subject: str
    predicate: str
    object: str
    valid_from: str
    valid_to: str | None
    current: bool
    confidence: float
    source: str
    room: str
    text: str
    recorded_at: NotRequired[str]
    invalidated_by: NotRequired[int | None]


class KgEntity(TypedDict):
    id: int
    name: str
    type: str
    aliases: list[str]


class KgAddAnswer(TypedDict):
    fact: KgFact


class KgQueryAnswer(TypedDict):
    entity: KgEntity
    facts: list[KgFact]
    as_of: NotRequired[str | None]


class KgFactsAnswer(TypedDict):
    facts: list[KgFact]


class KgTimelineAnswer(TypedDict):
    entity: KgEntity
    facts: list[KgFact]


class KgTraverseAnswer(TypedDict):
    entity: KgEntity
    nodes: list[dict[str, Any]]
    facts: list[KgFact]


class Tunnel(TypedDict):
    name: str
    rooms: list[str]


class KgTunnelsAnswer(TypedDict):
    tunnels: list[Tunnel]


class KgStatsAnswer(TypedDict):
    entities: int
    facts: int
    current: int
    invalidated: int
    rooms: int
    tunnels: int


#: The graph's answers, by operation (``POST /kg/<op>``; ``stats`` is ``GET /kg/stats``).
KG_ANSWERS: dict[str, type] = {
    "add": KgAddAnswer,
    "query": KgQueryAnswer,
    "invalidate": KgFactsAnswer,
    "timeline": KgTimelineAnswer,
    "traverse": KgTraverseAnswer,
    "tunnels": KgTunnelsAnswer,
    "stats": KgStatsAnswer,
}
