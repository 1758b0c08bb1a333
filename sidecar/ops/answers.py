"""What the typed memories, the journal, status, the palace and the graph answer, as TypedDicts.

The operations are typed with them, and the OpenAPI document (``sidecar.http.openapi``) derives
its answer schemas from them with ``sidecar.contract.json_schema`` (``inline=True``: the parts
below an answer are written in place, not named), so the MCP tools' output schemas, taken from
that document, come from these types too. ``JournalEntryAnswer`` is the document's
``JournalEntry`` (the name ``sidecar.episodic.entry`` gives the entry itself).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired, TypedDict

from sidecar.contract import (
    BlockAnswer,
    DuplicateOf,
    Format,
    HealthAnswer,
    ReadAnswer,
    SearchAnswer,
    ToolsAnswer,
    Usage,
    WriteAnswer,
)
from sidecar.episodic.entry import MemoryStatus, MemoryType

__all__ = [
    "ANSWERS",
    "BY_OPERATION",
    "KG_ANSWERS",
    "NOT_TYPED",
    "SCAN_CATEGORIES",
    "AgentSettingsAnswer",
    "AppendAnswer",
    "ArchivedNote",
    "Bm25State",
    "ConsolidateAnswer",
    "CopySkipped",
    "DeleteAnswer",
    "Dense",
    "DiaryEntry",
    "DiaryReadAnswer",
    "DiaryWriteAnswer",
    "DroppedLine",
    "DuplicateCheckAnswer",
    "EntriesAnswer",
    "ErrorAnswer",
    "ErrorDetail",
    "FallbackSummary",
    "FeedbackAnswer",
    "FeedbackCounts",
    "FileBytes",
    "FindingSection",
    "ForgetAnswer",
    "HealthMetrics",
    "HealthSnapshot",
    "IdentityAnswer",
    "IngestAnswer",
    "JournalEntryAnswer",
    "KgAddAnswer",
    "KgAnswer",
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
    "MemoriesAnswer",
    "MemoryRecallAnswer",
    "MemoryStatus",
    "MemoryType",
    "MergedMemories",
    "NearMiss",
    "NotPromotedLine",
    "OperatorUpdate",
    "PalaceFile",
    "PromotedLine",
    "QueueState",
    "RecallHit",
    "RecallResponse",
    "RecalledMemory",
    "RememberAnswer",
    "ReplayedAppend",
    "RestoreAnswer",
    "SessionAnswer",
    "Skipped",
    "SkippedFile",
    "SkippedPath",
    "Status",
    "SummaryWritten",
    "SupersededLine",
    "TaxonomyAnswer",
    "Tunnel",
    "WatcherState",
    "Wing",
    "WithheldLine",
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


class RecalledMemory(TypedDict):
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
    hits: list[RecalledMemory]
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
    supersedes: Annotated[str | None, "the memory this one replaced under its topic key"]
    importance: float
    confidence: float
    tags: list[str]
    expires_at: str | None
    feedback: FeedbackCounts
    access_count: int
    accessed_at: str | None


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
    session_id: str
    l0_abstract: str
    key_topics: Annotated[list[str], "the proper noun phrases the summary names, most named first"]
    engine: Annotated[
        str, "what wrote the summary: given (the client), extractive, or the chat model's kind (openai, ollama)"
    ]


class EntriesAnswer(TypedDict):
    """``GET /journal``: the newest entries, or those matching ``q``."""

    entries: list[JournalEntryAnswer]


class MemoriesAnswer(TypedDict):
    """``GET /memory/memories``: live typed memories, or a topic key's history, newest first."""

    memories: list[JournalEntryAnswer]


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
    room_a: Annotated[str | None, "the room asked for, if any"]
    room_b: Annotated[str | None, "the other room asked for, if any"]
    tunnels: list[Tunnel]


class KgStatsAnswer(TypedDict):
    workspace_id: str
    scope: Literal["agent", "crew"]
    entities: int
    facts: int
    current: int
    invalidated: int
    rooms: int
    predicates: Annotated[dict[str, int], "the number of facts of each predicate"]
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


# -- consolidation --------------------------------------------------------------------------------
# The report of ``sidecar.consolidate.report.Report`` as JSON (``asdict``): one TypedDict per
# dataclass, field for field (tests/test_contract.py holds the two equal).
class SummaryWritten(TypedDict):
    period: str
    path: str
    sources: list[str]
    engine: str
    clustered_by: Annotated[str, "words, or words+embeddings when a model also matched lines"]


class PromotedLine(TypedDict):
    line: str
    sources: list[str]


class NotPromotedLine(TypedDict):
    line: str
    sources: list[str]
    reason: Annotated[Literal["present", "cap"], "already in the evergreen file, or over its cap"]


class ArchivedNote(TypedDict):
    source: str
    archived_as: str


class DroppedLine(TypedDict):
    text: str
    sources: list[str]
    reason: Literal["duplicate", "budget", "conversation"]
    period: str
    kept_as: Annotated[str | None, "the line it duplicates, or the conversation's digest"]


class SupersededLine(TypedDict):
    line: str
    where: str
    by: str
    by_where: str
    on: str


class SkippedFile(TypedDict):
    path: str
    reason: str


class WithheldLine(TypedDict):
    line: str
    target: str
    category: str
    level: str


class FallbackSummary(TypedDict):
    period: str
    reason: str


class OperatorUpdate(TypedDict):
    path: str
    added: list[str]
    merged: list[str]
    replaced: Annotated[list[list[str]], "[old, new] pairs: a newer contradicting rule replaced the old one"]
    dropped: list[str]
    changed: bool


class MergedMemories(TypedDict):
    kept: str
    summary: str
    merged: list[str]


class ConsolidateAnswer(TypedDict):
    """``POST /memory/consolidate``: what the run did, or would do on a dry run. ``bytes_*`` count
    the tier's memory files, ``live_bytes_*`` those outside ``archive/``."""

    dry_run: bool
    periods: list[str]
    summaries: list[SummaryWritten]
    promoted: list[PromotedLine]
    not_promoted: list[NotPromotedLine]
    archived: list[ArchivedNote]
    dropped: list[DroppedLine]
    superseded: list[SupersededLine]
    operator_model: OperatorUpdate | None
    memories_merged: list[MergedMemories]
    journal_entries: list[str]
    skipped: list[SkippedFile]
    withheld: list[WithheldLine]
    fallbacks: list[FallbackSummary]
    compressed: list[str]
    expired: list[str]
    archive_bytes: int
    archive_packed_bytes: int
    bytes_before: int
    bytes_after: int
    live_bytes_before: int
    live_bytes_after: int
    resumed: bool
    no_journal: Annotated[str | None, "why the run had no journal (typed memories not merged)"]


# -- errors ---------------------------------------------------------------------------------------
# The injection scanner's categories (sidecar.scanner.scan.CATEGORIES), named here in words: importing
# the scanner compiles its rules, which the server leaves to the first write or block.
SCAN_CATEGORIES = (
    "the scanner's category: invisible_unicode, fence_breakout, hidden_instructions, tampering, concealment, "
    "tool_abuse, instruction_override, role_hijack, exfiltration, secret_access, base64_payload or encoded_payload"
)


class FileBytes(TypedDict):
    path: str
    bytes: int


class FindingSection(TypedDict):
    heading: str
    line_start: int
    line_end: int


class ErrorDetail(TypedDict):
    """``sidecar.errors.SidecarError.body``: its code and message, and the extra fields some codes carry."""

    code: Annotated[str, "stable machine-readable code"]
    message: str
    current_entries: NotRequired[Annotated[str, "cap_exceeded: the file as it is"]]
    usage: NotRequired[Usage]
    would_be: NotRequired[int]
    largest_files: NotRequired[
        Annotated[list[FileBytes], "cap_exceeded (tier, files): the tier's largest files, where room is made"]
    ]
    cap_scope: NotRequired[
        Annotated[
            Literal["file", "tier", "files"],
            "cap_exceeded: the file's bytes, the tier's bytes, or the tier's number of files",
        ]
    ]
    field: NotRequired[str]
    causes: NotRequired[list[str]]
    category: NotRequired[Annotated[str, "injection_suspected: " + SCAN_CATEGORIES]]
    pattern: NotRequired[Annotated[str, "injection_suspected: the rule's stable id"]]
    section: NotRequired[
        Annotated[
            FindingSection,
            "injection_suspected: the heading section of the file (after the write) that holds the finding; "
            "lines are 1-based and inclusive",
        ]
    ]


class ErrorAnswer(TypedDict):
    """Every error answer of the agent API (the OpenAPI document's closed ``Error``)."""

    error: ErrorDetail


# -- the duplicate check --------------------------------------------------------------------------
class DuplicateCheckAnswer(TypedDict):
    """The ``memory_check_duplicate`` tool's answer (it has no route of its own)."""

    duplicate: bool
    duplicate_of: DuplicateOf | None


#: Any of the graph's answers (``sidecar.ops.kg.run`` answers all seven operations).
KgAnswer = (
    KgAddAnswer | KgQueryAnswer | KgFactsAnswer | KgTimelineAnswer | KgTraverseAnswer | KgTunnelsAnswer | KgStatsAnswer
)

#: What each operation of ``sidecar.ops.registry`` answers, by HTTP status: the type its op
#: returns. The OpenAPI document derives every success answer from this table (and the MCP tools'
#: output schemas from the document); tests/test_contract.py holds the document equal to it for
#: every operation, so no answer is written by hand.
BY_OPERATION: dict[str, dict[str, type]] = {
    "healthz": {"200": HealthAnswer},
    "tools": {"200": ToolsAnswer},
    "agent_settings": {"200": AgentSettingsAnswer},
    "status": {"200": Status},
    "search": {"200": SearchAnswer},
    "write": {"201": WriteAnswer, "200": WriteAnswer},
    "read": {"200": ReadAnswer},
    "reindex": {"200": Status},
    "block": {"200": BlockAnswer},
    "journal_append": {"201": AppendAnswer, "200": ReplayedAppend},
    "journal_list": {"200": EntriesAnswer},
    "episodic_recall": {"200": RecallResponse},
    "remember": {"201": RememberAnswer},
    "recall": {"200": MemoryRecallAnswer},
    "feedback": {"200": FeedbackAnswer},
    "forget": {"200": ForgetAnswer},
    "restore": {"200": RestoreAnswer},
    "session": {"201": SessionAnswer, "200": SessionAnswer},
    "memories": {"200": MemoriesAnswer},
    "health": {"200": HealthSnapshot},
    "health_compute": {"200": HealthSnapshot},
    "consolidate": {"200": ConsolidateAnswer},
    **{f"kg_{op}": {"201" if op == "add" else "200": shape} for op, shape in KG_ANSWERS.items()},
    "list": {"200": ListAnswer},
    "taxonomy": {"200": TaxonomyAnswer},
    "delete": {"200": DeleteAnswer},
    "identity": {"200": IdentityAnswer},
    "diary_write": {"201": DiaryWriteAnswer},
    "diary_read": {"200": DiaryReadAnswer},
    "ingest": {"200": IngestAnswer},
}
#: The operations whose answer is no JSON object of the sidecar's own, and why.
NOT_TYPED: dict[str, str] = {
    "metrics": "Prometheus text",
    "openapi": "the OpenAPI document itself (OpenAPI's own schema)",
    "mcp": "JSON-RPC, the Model Context Protocol's envelope",
    "mcp_close": "no body (204)",
    "mcp_stream": "server-sent events",
    **{
        name: "an HTML page"
        for name in (
            "ui",
            "ui_file",
            "ui_search",
            "ui_memories",
            "ui_memory",
            "ui_journal",
            "ui_graph",
            "ui_health",
            "ui_block",
        )
    },
}
