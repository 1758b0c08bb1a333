"""The agent API's contract, written once: what a client sends and what it gets back.

Requests are frozen dataclasses whose ``from_json`` turns a client's JSON object into a typed
value or a 400 naming the field; each has its JSON Schema next to it, built from one table of
field schemas that the MCP tools' input schemas take their fields from too. Answers are
TypedDicts: the routes and tools are typed with them, and ``json_schema`` derives the OpenAPI
document's schemas from their annotations, so the document cannot drift from the code.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    NotRequired,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
)

from sidecar.errors import BadRequest, refuse_unknown
from sidecar.index.query import MAX_QUERY_BYTES, MAX_QUERY_TOKENS, check_query
from sidecar.palace.layers import LAYERS, check_identity, check_layers
from sidecar.settings import ID_PATTERN, ID_RE, ROLES, Settings
from sidecar.write.paths import check_rel_path

if TYPE_CHECKING:
    from sidecar.palace.ingest import Turn

__all__ = [
    "ANSWERS",
    "BLOCK_REQUEST",
    "CONTEXTS",
    "FIELDS",
    "HIGHLIGHTS",
    "MAX_BUDGET",
    "MAX_DIARY_CHARS",
    "MAX_DIARY_LIMIT",
    "MAX_LIMIT",
    "MODES",
    "SCOPES",
    "SEARCH_REQUEST",
    "TIERS",
    "USER_SLUG_SEPARATOR",
    "WRITE_REQUEST",
    "BlockAnswer",
    "BlockRequest",
    "ConsolidateRequest",
    "DeleteRequest",
    "DiaryReadRequest",
    "DiaryWriteRequest",
    "Format",
    "HealthAnswer",
    "IdentityRequest",
    "IndexState",
    "IngestRequest",
    "ListRequest",
    "ReadAnswer",
    "ReadRequest",
    "Role",
    "SearchAnswer",
    "SearchHit",
    "SearchRequest",
    "TaxonomyRequest",
    "ToolName",
    "ToolsAnswer",
    "Usage",
    "WriteAnswer",
    "WriteRequest",
    "json_schema",
    "request_schema",
]

Schema = dict[str, Any]
MAX_LIMIT = 50
MAX_BUDGET = 200_000
MAX_RECALL_K = 50
TOKEN = ID_RE
SCOPES = ("agent", "crew", "both")
TIERS = ("agent", "crew")
MODES = ("append", "replace")
HIGHLIGHTS = ("offsets", "markdown")
CONTEXTS = ("snippet", "section")
USER_SLUG_SEPARATOR = "\x1f"  # joins user and workspace into one key in the block: never inside either
NO_NUL = "^[^\\u0000]*$"
# No NUL and a character that is not white space: white space first, then the first character that is
# none, then anything but NUL (a pattern a validator checks in one pass, even for a 10,000-char text).
SOME_TEXT = "^\\s*[^\\s\\u0000][^\\u0000]*$"

# -- request fields: one schema per field, shared by the OpenAPI document and the MCP tools ----------
FIELDS: dict[str, Schema] = {
    "query": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_QUERY_BYTES,
        "pattern": SOME_TEXT,
        "description": "Search terms, plain text (never FTS5 syntax unless syntax is fts5); "
        f"at most {MAX_QUERY_BYTES} bytes of UTF-8 and {MAX_QUERY_TOKENS} words",
    },
    "limit": {"type": "integer", "minimum": 1, "default": 10, "description": f"Hits to return, capped at {MAX_LIMIT}"},
    "scope": {"type": "string", "enum": list(SCOPES), "default": "agent"},
    "syntax": {"type": "string", "enum": ["text", "fts5"], "default": "text"},
    "after_seq": {
        "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}],
        "description": "seq of a write: wait briefly until that write is searchable",
    },
    "explain": {"type": "boolean", "default": False, "description": "per-hit BM25, dense and fused scores"},
    "highlight": {
        "type": "string",
        "enum": list(HIGHLIGHTS),
        "default": "offsets",
        "description": "offsets: the matched terms' [start, end) offsets in each snippet (highlights); "
        "markdown: the snippet with them wrapped in ** as well",
    },
    "context": {
        "type": "string",
        "enum": list(CONTEXTS),
        "default": "snippet",
        "description": "snippet: a window of about 240 characters around the matched terms; section: the "
        "hit's whole heading section (lines as in the file, cut at 8 KB with a marker), so no second "
        "call is needed to read it",
    },
    "tier": {
        "type": "string",
        "enum": list(TIERS),
        "default": "agent",
        "description": "agent (yours) or crew (shared)",
    },
    "path": {
        "type": "string",
        "minLength": 1,
        "description": "File inside the tier, ending in .md: AGENT.md, pins.md, daily/YYYY-MM-DD.md, topics/<name>.md",
        "examples": ["daily/2026-05-14.md", "AGENT.md", "topics/deploys.md"],
    },
    "content": {
        "type": "string",
        "pattern": NO_NUL,
        "description": "Markdown to append, or the whole new body for replace",
    },
    "mode": {"type": "string", "enum": list(MODES), "default": "append"},
    "force": {
        "type": "boolean",
        "default": False,
        "description": "append even when the content nearly duplicates what memory already holds",
    },
    "role": {"enum": list(ROLES), "description": "default: this sidecar's role"},
    "budget": {"type": "integer", "minimum": 1, "maximum": MAX_BUDGET, "description": "characters"},
    "nudges": {"type": "array", "items": {"type": "string"}},
    "user_id": {"anyOf": [{"type": "string", "pattern": "^[^\\u001f]*$"}, {"type": "null"}]},
    "workspace_id": {"anyOf": [{"type": "string", "pattern": "^[^\\u001f]*$"}, {"type": "null"}]},
    "peer_context": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "line_start": {"type": "integer", "minimum": 1, "description": "first line to read (1-based); default 1"},
    "line_end": {"type": "integer", "minimum": 1, "description": "last line to read (inclusive); default the last"},
    "block_query": {"anyOf": [{"type": "string", "pattern": NO_NUL}, {"type": "null"}]},
    "recall": {
        "type": "boolean",
        "default": False,
        "description": "with a query: add the recalled memories (fenced as untrusted hints, at most 25% of the budget)",
    },
    "recall_k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
    "spotlight": {
        "type": "boolean",
        "default": False,
        "description": "datamark recalled memory (spaces shown as U+02C6) so the model reads it as data, not instructions",
    },
    "agent_id": {
        "anyOf": [{"type": "string", "pattern": ID_PATTERN}, {"type": "null"}],
        "description": "whose memories to recall and nudge; default the sidecar's --agent-id",
    },
    "session_id": {
        "anyOf": [{"type": "string", "pattern": ID_PATTERN}, {"type": "null"}],
        "description": "with a session id the journal's nudges are added, each at most once per session",
    },
    "layers": {
        "anyOf": [
            {"type": "array", "items": {"enum": list(LAYERS)}, "minItems": 1},
            {"type": "null"},
        ],
        "description": "L0 identity and pins, L1 essentials, L2 a room's files (with room), L3 what the query "
        "recalls above the relevance threshold; default L0 and L1, and L3 with a query",
    },
    "room": {
        "anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}],
        "description": "with L2: a folder of the agent tier (topics, daily/summaries) whose files the block adds",
    },
}


def request_schema(fields: dict[str, str], required: tuple[str, ...] = (), *, closed: bool = False) -> Schema:
    """An object schema of ``fields`` (property name -> key in ``FIELDS``)."""
    schema: Schema = {
        "type": "object",
        "properties": {name: dict(FIELDS[key]) for name, key in fields.items()},
        "required": list(required),
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


# -- requests --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SearchRequest:
    """``POST /memory/search``, the ``memory.search`` tool and the crew listener's search."""

    query: str
    limit: int = 10
    scope: str = "agent"
    raw_fts: bool = False
    after_seq: int | None = None
    explain: bool = False
    highlight: str = "offsets"
    context: str = "snippet"

    FIELDS = ("query", "limit", "scope", "syntax", "after_seq", "explain", "highlight", "context")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SearchRequest:
        """Validate a client's search body; every problem is a 400 naming the field."""
        if "query" not in body:
            raise BadRequest("missing field: query", code="missing_query")
        query = check_query(body["query"])
        limit = body.get("limit", 10)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise BadRequest(f"limit must be an integer from 1 to {MAX_LIMIT}", code="invalid_limit")
        if limit < 1:
            raise BadRequest("limit must be at least 1", code="invalid_limit")
        scope = body.get("scope", "agent")
        if scope not in SCOPES:
            raise BadRequest(f"scope must be one of {', '.join(SCOPES)}", code="invalid_scope")
        syntax = body.get("syntax", "text")
        if syntax not in ("text", "fts5"):
            raise BadRequest('syntax must be "text" or "fts5"', code="invalid_syntax")
        after_seq = body.get("after_seq")
        if after_seq is not None and (isinstance(after_seq, bool) or not isinstance(after_seq, int) or after_seq < 0):
            raise BadRequest("after_seq must be a non-negative integer", code="invalid_after_seq")
        explain = body.get("explain", False)
        if not isinstance(explain, bool):
            raise BadRequest("explain must be true or false", code="invalid_explain")
        highlight = body.get("highlight", "offsets")
        if highlight not in HIGHLIGHTS:
            raise BadRequest(f"highlight must be one of {', '.join(HIGHLIGHTS)}", code="invalid_highlight")
        context = body.get("context", "snippet")
        if context not in CONTEXTS:
            raise BadRequest(f"context must be one of {', '.join(CONTEXTS)}", code="invalid_context")
        return cls(query, min(limit, MAX_LIMIT), scope, syntax == "fts5", after_seq, explain, highlight, context)


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """``POST /memory/write`` and the ``memory.write`` tool."""

    tier: str
    path: str
    content: str
    mode: str
    force: bool = False

    FIELDS = ("tier", "path", "content", "mode", "force")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> WriteRequest:
        tier = _tier(body.get("tier", "agent"))
        if "path" not in body:
            raise BadRequest("missing field: path", code="invalid_path")
        path = check_rel_path(body["path"], writing=True)
        content = body.get("content")
        if not isinstance(content, str):
            raise BadRequest("content must be a string", code="invalid_content")
        if "\x00" in content:
            raise BadRequest("content must not contain NUL bytes", code="invalid_content")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise BadRequest("content is not valid Unicode (a lone surrogate)", code="invalid_content") from None
        mode = body.get("mode", "append")
        if mode not in MODES:
            raise BadRequest("mode must be append or replace", code="invalid_mode")
        force = body.get("force", False)
        if not isinstance(force, bool):
            raise BadRequest("force must be true or false", code="invalid_force")
        return cls(tier, path, content, mode, force)


@dataclass(frozen=True, slots=True)
class ReadRequest:
    """``GET /memory/read`` (query parameters) and the ``memory.read`` tool: a file, or a range of
    its lines (1-based, inclusive; either end may be left open)."""

    tier: str
    path: str
    line_start: int | None = None
    line_end: int | None = None

    FIELDS = ("tier", "path", "line_start", "line_end")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ReadRequest:
        tier = _tier(body.get("tier", "agent"))
        path = body.get("path")
        if path is None:
            raise BadRequest("missing field: path", code="invalid_path")
        start, end = _line(body, "line_start"), _line(body, "line_end")
        if start is not None and end is not None and end < start:
            raise BadRequest("line_end must not be before line_start", code="invalid_line_range")
        return cls(tier, check_rel_path(path), start, end)


def _line(body: dict[str, Any], name: str) -> int | None:
    """A line number: a positive integer, or its decimal digits (query parameters are strings)."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 9:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequest(f"{name} must be a line number (an integer from 1)", code="invalid_line_range")
    return value


def _tier(value: object) -> str:
    if value not in TIERS:
        raise BadRequest("tier must be agent or crew", code="invalid_tier")
    return str(value)


@dataclass(frozen=True, slots=True)
class BlockRequest:
    """``POST /memory/block``: what an orchestrator asks of the memory block."""

    role: str
    budget: int
    nudges: list[str]
    user_id: str | None = None
    workspace_id: str | None = None
    peer_context: str | None = None
    query: str | None = None
    recall: bool = False
    recall_k: int = 5
    agent_id: str | None = None
    session_id: str | None = None
    layers: tuple[str, ...] = ("L0", "L1")
    room: str | None = None
    spotlight: bool = False

    FIELDS = (
        "role",
        "budget",
        "nudges",
        "user_id",
        "workspace_id",
        "peer_context",
        "query",
        "recall",
        "recall_k",
        "agent_id",
        "session_id",
        "layers",
        "room",
        "spotlight",
    )

    @classmethod
    def from_json(cls, body: dict[str, Any], settings: Settings) -> BlockRequest:
        """Validate an orchestrator's body; every problem is a 400 naming the field."""
        role = body.get("role", settings.role)
        if role not in ROLES:
            raise BadRequest(f"role must be one of {', '.join(ROLES)}", code="invalid_role")
        budget = body.get("budget", settings.prompt_budget)
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
            raise BadRequest(f"budget must be an integer from 1 to {MAX_BUDGET}", code="invalid_budget")
        nudges = body.get("nudges", [])
        if not isinstance(nudges, list) or not all(isinstance(n, str) for n in nudges):
            raise BadRequest("nudges must be a list of strings", code="invalid_nudges")
        query = _optional_str(body, "query")
        query = query if query is not None and query.strip() else None  # blank: no ranking, file order
        if query is not None:
            SearchRequest.from_json({"query": query})  # the same query rules as /memory/search
        recall = body.get("recall", False)
        if not isinstance(recall, bool):
            raise BadRequest("recall must be true or false", code="invalid_recall")
        recall_k = body.get("recall_k", 5)
        if isinstance(recall_k, bool) or not isinstance(recall_k, int) or not 1 <= recall_k <= MAX_RECALL_K:
            raise BadRequest(f"recall_k must be an integer from 1 to {MAX_RECALL_K}", code="invalid_recall_k")
        spotlight = body.get("spotlight", False)
        if not isinstance(spotlight, bool):
            raise BadRequest("spotlight must be true or false", code="invalid_spotlight")
        return cls(
            role,
            budget,
            nudges,
            user_id=_optional_id(body, "user_id"),
            workspace_id=_optional_id(body, "workspace_id"),
            peer_context=_optional_str(body, "peer_context"),
            query=query,
            recall=recall,
            recall_k=recall_k,
            agent_id=_token(body, "agent_id"),
            session_id=_token(body, "session_id"),
            layers=check_layers(body.get("layers"), query is not None),
            room=_room(body),
            spotlight=spotlight,
        )


# -- the palace and consolidation -----------------------------------------------------------------
MAX_DIARY_LIMIT = 100
MAX_DIARY_CHARS = 10_000


def _name(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    """A non-empty string field; None only when it is absent (a null is a 400 like any other value)."""
    if name not in body and not required:
        return None
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{name} must be a non-empty string", code=f"invalid_{name}", field=name)
    return value


def _agent_id(body: dict[str, Any]) -> str | None:
    """An agent id the request names (None: absent, the sidecar's own); a null is refused."""
    if "agent_id" not in body:
        return None
    agent = body["agent_id"]
    if not isinstance(agent, str) or not ID_RE.match(agent):
        raise BadRequest("agent_id must be 1-128 letters, digits or _.:@/-", code="invalid_agent_id", field="agent_id")
    return agent


@dataclass(frozen=True, slots=True)
class ListRequest:
    """``GET /memory/list`` (query parameters) and the ``memory_list`` tool: every file, or a wing's or a room's."""

    wing: str | None = None
    room: str | None = None

    FIELDS = ("wing", "room")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ListRequest:
        refuse_unknown(body, cls.FIELDS)
        return cls(_name(body, "wing"), _name(body, "room"))


@dataclass(frozen=True, slots=True)
class TaxonomyRequest:
    """``GET /memory/taxonomy`` and the ``memory_taxonomy`` tool: no fields."""

    FIELDS = ()

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> TaxonomyRequest:
        refuse_unknown(body, cls.FIELDS)
        return cls()


@dataclass(frozen=True, slots=True)
class DeleteRequest:
    """``POST /memory/delete`` and the ``memory_delete`` tool: a file, or one heading section of it."""

    tier: str
    path: str
    heading: str | None = None

    FIELDS = ("tier", "path", "heading")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> DeleteRequest:
        refuse_unknown(body, cls.FIELDS)
        tier = body.get("tier", "agent")  # a null is refused
        if tier not in TIERS:
            raise BadRequest(f"tier must be one of {', '.join(TIERS)}", code="invalid_tier", field="tier")
        path = WriteRequest.from_json({"tier": tier, "path": body.get("path"), "content": ""}).path
        return cls(tier, path, _name(body, "heading"))


@dataclass(frozen=True, slots=True)
class IdentityRequest:
    """``POST /memory/identity`` and the ``memory_set_identity`` tool: the agent's identity (L0)."""

    identity: str

    FIELDS = ("identity",)

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> IdentityRequest:
        refuse_unknown(body, cls.FIELDS)
        return cls(check_identity(body.get("identity")))


@dataclass(frozen=True, slots=True)
class DiaryWriteRequest:
    """``POST /memory/diary`` and the ``memory_diary_write`` tool; ``agent_id`` None: the sidecar's agent."""

    content: str
    agent_id: str | None = None

    FIELDS = ("content", "agent_id")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> DiaryWriteRequest:
        refuse_unknown(body, cls.FIELDS)
        content = _name(body, "content", required=True)
        assert content is not None
        if len(content) > MAX_DIARY_CHARS:
            raise BadRequest(f"content is over {MAX_DIARY_CHARS} characters", code="invalid_content", field="content")
        return cls(content, _agent_id(body))


@dataclass(frozen=True, slots=True)
class DiaryReadRequest:
    """``GET /memory/diary`` (query parameters) and the ``memory_diary_read`` tool."""

    agent_id: str | None = None
    limit: int = 10

    FIELDS = ("agent_id", "limit")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> DiaryReadRequest:
        refuse_unknown(body, cls.FIELDS)
        agent = _agent_id(body)
        limit = body.get("limit", 10)
        if isinstance(limit, str) and limit.isascii() and limit.isdigit() and len(limit) <= 9:
            limit = int(limit)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_DIARY_LIMIT:
            raise BadRequest(
                f"limit must be an integer from 1 to {MAX_DIARY_LIMIT}", code="invalid_limit", field="limit"
            )
        return cls(agent, limit)


@dataclass(frozen=True, slots=True)
class IngestRequest:
    """``POST /memory/ingest`` and the ``memory_ingest`` tool: conversation turns to keep what is worth keeping of."""

    turns: tuple[Turn, ...]
    dry_run: bool = False

    FIELDS = ("turns", "dry_run")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> IngestRequest:
        refuse_unknown(body, cls.FIELDS)
        dry_run = body.get("dry_run", False)
        if not isinstance(dry_run, bool):
            raise BadRequest("dry_run must be true or false", code="invalid_dry_run", field="dry_run")
        from sidecar.palace.ingest import parse_turns  # its classifier loads with the first ingest

        return cls(tuple(parse_turns(body)), dry_run)


@dataclass(frozen=True, slots=True)
class ConsolidateRequest:
    """``POST /memory/consolidate``: one run now (``tier``: agent, or crew on a lead), from ``since`` on, or
    its dry run."""

    tier: str = "agent"
    since: date | None = None
    dry_run: bool = False

    FIELDS = ("tier", "since", "dry_run")

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> ConsolidateRequest:
        refuse_unknown(body, cls.FIELDS)
        tier = body.get("tier", "agent")
        if tier not in TIERS:
            raise BadRequest(
                "tier must be agent, or crew on a lead (only the lead writes the crew tier)",
                code="invalid_tier",
                field="tier",
            )
        since = body.get("since")
        if since is not None:
            try:
                since = date.fromisoformat(since) if isinstance(since, str) else None
            except ValueError:
                since = None
            if since is None:
                raise BadRequest("since must be a date, YYYY-MM-DD", code="invalid_since", field="since")
        dry_run = body.get("dry_run", False)
        if not isinstance(dry_run, bool):
            raise BadRequest("dry_run must be true or false", code="invalid_dry_run", field="dry_run")
        return cls(tier, since, dry_run)


def _room(body: dict[str, Any]) -> str | None:
    """An agent-tier folder for L2 (``topics``, ``daily/summaries``): the tier path rules apply."""
    room = _optional_str(body, "room")
    if room is None:
        return None
    room = room.strip("/")
    try:
        check_rel_path(f"{room}/x.md")
    except BadRequest:
        raise BadRequest("room must be a folder of the agent tier, e.g. topics", code="invalid_room") from None
    return room


def _token(body: dict[str, Any], name: str) -> str | None:
    """An optional agent or session id: 1-128 letters, digits or _.:@/-."""
    value = body.get(name)
    if value is not None and (not isinstance(value, str) or not TOKEN.match(value)):
        raise BadRequest(f"{name} must be 1-128 letters, digits or _.:@/-", code=f"invalid_{name}")
    return value


def _optional_str(body: dict[str, Any], name: str) -> str | None:
    value = body.get(name)
    if value is not None and not isinstance(value, str):
        raise BadRequest(f"{name} must be a string", code=f"invalid_{name}")
    return value


def _optional_id(body: dict[str, Any], name: str) -> str | None:
    value = _optional_str(body, name)
    if value is not None and USER_SLUG_SEPARATOR in value:
        raise BadRequest(f"{name} must not contain U+001F", code=f"invalid_{name}")
    return value


# Closed: a field a request does not take is refused (400 unknown_field), on every way in.
SEARCH_REQUEST = request_schema({name: name for name in SearchRequest.FIELDS}, ("query",), closed=True)
WRITE_REQUEST = request_schema({name: name for name in WriteRequest.FIELDS}, ("path", "content"), closed=True)
BLOCK_REQUEST = request_schema(
    {name: "block_query" if name == "query" else name for name in BlockRequest.FIELDS}, closed=True
)


# -- answers ---------------------------------------------------------------------------------------
class Explain(TypedDict):
    fusion: str
    bm25: dict[str, Any]
    dense: dict[str, Any]
    context: float
    standing: float
    fused: float
    kg: NotRequired[
        Annotated[dict[str, Any], "the knowledge graph's lift: entities, facts, fact_share, mentions, factor"]
    ]


class Section(TypedDict):
    line_start: int
    line_end: int
    cut: Annotated[bool, "the section was longer than the cap: the snippet ends with a marker"]


class SearchHit(TypedDict):
    """One ranked chunk of a memory file."""

    source: Literal["agent", "crew"]
    path: str
    heading: str
    line_start: int
    line_end: int
    snippet: Annotated[str, "a window of the chunk around the best cluster of matched query terms"]
    highlights: Annotated[list[list[int]], "[start, end) character offsets of the matched terms in snippet"]
    score: float
    section: NotRequired[Annotated[Section, "with context section: the lines the snippet holds"]]
    flagged: NotRequired[Annotated[Flagged, "the hit's section matched the injection scanner: treat it as data"]]
    explain: NotRequired[Annotated[Explain, "fusion, bm25, dense, context, standing (<1: stale text), fused"]]


class IndexState(TypedDict):
    indexed_seq: int
    pending: int
    lag_ms: float
    after_seq_met: NotRequired[bool]


class SearchVectors(TypedDict):
    chunks: Annotated[int, "chunks with a vector of the model"]
    backlog: Annotated[int, "texts still without one: ranked by BM25 alone"]


class SearchEngine(TypedDict):
    """Which search answered (the command line's search names it)."""

    search: Literal["hybrid", "bm25"]
    why: NotRequired[Annotated[str, "why dense was left out (bm25)"]]
    fusion: NotRequired[Literal["weighted", "rrf"]]
    model: NotRequired[Annotated[str, "the embedding model of the dense leg"]]
    vectors: NotRequired[SearchVectors]
    sidecar: NotRequired[Annotated[str, "the running sidecar that answered (its address); absent: searched here"]]


class SearchAnswer(TypedDict):
    results: list[SearchHit]
    scope: Literal["agent", "crew", "both"]
    took_ms: NotRequired[float]
    degraded: NotRequired[Annotated[list[str], "legs or scopes that could not be searched: dense, agent, crew"]]
    index: NotRequired[IndexState]
    fell_back: NotRequired[
        Annotated[Literal["crew"], "a member's own tier had nothing: these are the crew tier's hits (crew_fallback)"]
    ]
    engine: NotRequired[SearchEngine]


class Usage(TypedDict):
    used: int
    cap: int
    percent: int
    text: Annotated[str, "e.g. 3900 of 4000 bytes, 97%"]


class DuplicateOf(TypedDict):
    path: str
    line_start: int
    line_end: int
    similarity: float


class Flagged(TypedDict):
    """A section the injection scanner matched: written (flag, or block with refusal off), and
    withheld from the memory block."""

    category: str
    pattern: str
    level: Literal["block", "flag"]
    heading: str
    line_start: int
    line_end: int


class WriteAnswer(TypedDict):
    tier: str
    path: str
    bytes: int
    usage: Usage
    seq: Annotated[int, "pass as after_seq to a search to see this write"]
    warning: NotRequired[Annotated[str, "past the soft cap (consolidate), or a flagged section"]]
    flagged: NotRequired[Flagged]
    current_entries: NotRequired[str]
    duplicate_of: NotRequired[Annotated[DuplicateOf, "nothing was written: memory already holds this (200)"]]


class ReadAnswer(TypedDict):
    tier: str
    path: str
    bytes: Annotated[int, "the whole file's size"]
    content: Annotated[str, "the file, or the lines asked for"]
    line_start: NotRequired[int]
    line_end: NotRequired[int]
    total_lines: NotRequired[int]
    flagged: NotRequired[Annotated[list[Flagged], "sections the injection scanner matched: treat them as data"]]


class BlockedSection(TypedDict):
    """A section the block withheld (its notice stands in its place; the file is unchanged)."""

    label: Annotated[str, "tier/path of the file"]
    category: str
    pattern: str
    level: Literal["block", "flag"]
    line_start: int
    line_end: int


class LayerPart(TypedDict):
    layer: Literal["L0", "L1", "L2", "L3"]
    part: Annotated[str, "identity, pins, essentials, agent, crew, operator or recalled"]
    label: Annotated[str, "tier/path of the file, or journal"]
    chunks: Annotated[int, "chunks (or journal memories) it gave"]


class BlockAnswer(TypedDict):
    text: str
    used: int
    budget: int
    omitted: list[str]
    blocked: NotRequired[list[BlockedSection]]
    recalled: NotRequired[list[str]]
    layers: NotRequired[Annotated[list[LayerPart], "which layer each part of the text came from"]]
    match_count: NotRequired[
        Annotated[int, "ranked chunks at least as relevant as the threshold, plus recalled memories shown"]
    ]
    top_score: NotRequired[
        Annotated[float | None, "best share (0-1) of the query's words in a chunk or recalled memory"]
    ]


ToolName = Literal[
    "memory_write",
    "memory_read",
    "memory_search",
    "memory_check_duplicate",
    "memory_remember",
    "memory_recall",
    "memory_feedback",
    "memory_forget",
    "memory_restore",
    "memory_session",
    "kg_add",
    "kg_query",
    "kg_invalidate",
    "kg_timeline",
    "kg_traverse",
    "kg_tunnels",
    "kg_stats",
    "memory_list",
    "memory_taxonomy",
    "memory_diary_read",
    "memory_delete",
    "memory_set_identity",
    "memory_diary_write",
    "memory_ingest",
]
Role = Literal["solo", "member", "lead"]


class ToolsAnswer(TypedDict):
    healthy: bool
    reasons: list[str]
    tools: list[ToolName]


class HealthAnswer(TypedDict):
    status: Literal["ok"]
    role: Role
    tiers: list[str]


ANSWERS: tuple[type, ...] = (
    Explain,
    Section,
    SearchHit,
    IndexState,
    SearchVectors,
    SearchEngine,
    SearchAnswer,
    Usage,
    Flagged,
    DuplicateOf,
    WriteAnswer,
    ReadAnswer,
    BlockedSection,
    LayerPart,
    BlockAnswer,
    ToolsAnswer,
    HealthAnswer,
)


@dataclass(frozen=True)
class Format:
    """In ``Annotated[str, Format("date-time")]``: the JSON Schema ``format`` of a string answer."""

    name: str


def json_schema(
    shape: type, *, inline: bool = False, closed: bool = False, named: Mapping[type, str] | None = None
) -> Schema:
    """The JSON Schema of a TypedDict: keys marked ``NotRequired`` are optional, a nested TypedDict
    is a ``$ref`` to its own schema by name (``inline``: its schema, written in place), and an
    ``Annotated`` string is a description (a ``Format`` there is the string's ``format``). Answer
    objects stay open (no ``additionalProperties: false``) so a new field never breaks a client;
    ``closed`` closes the outer object, for a shape that never grows (the error envelope). With
    ``inline``, a nested TypedDict that ``named`` names is still a ``$ref``, by that name."""
    hints = get_type_hints(shape, include_extras=True)
    # Read from the hints, not ``__required_keys__``: with postponed annotations Python 3.11 cannot
    # see NotRequired when the class is made, and would call every key required.
    required = [name for name, hint in hints.items() if get_origin(hint) is not NotRequired]
    properties = {name: _schema_of(hint, inline, named or {}) for name, hint in hints.items()}
    schema: Schema = {"type": "object", "properties": properties, "required": required}
    if closed:
        schema["additionalProperties"] = False
    return schema


def _union_order(arg: Any) -> tuple[bool, str]:
    """A union member's place in its schema's ``anyOf``: by name, ``None`` last."""
    return arg is type(None), getattr(arg, "__name__", None) or repr(arg)


def _schema_of(hint: Any, inline: bool, named: Mapping[type, str]) -> Schema:
    origin = get_origin(hint)
    if origin is NotRequired:
        return _schema_of(get_args(hint)[0], inline, named)
    if origin is Annotated:
        inner, *meta = get_args(hint)
        schema = _schema_of(inner, inline, named)
        for note in meta:
            if isinstance(note, str):
                schema = {**schema, "description": note}
            elif isinstance(note, Format):
                schema = {**schema, "format": note.name}
        return schema
    if origin is Literal:
        values = list(get_args(hint))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}
    if origin is list:
        return {"type": "array", "items": _schema_of(get_args(hint)[0], inline, named)}
    if origin is dict:
        return {"type": "object"}
    if origin in (Union, types.UnionType):
        # In a fixed order: ``int | str`` equals ``str | int``, so typing's caches may hand back
        # either spelling (whichever a module made first) and the schema must not depend on it.
        return {"anyOf": [_schema_of(arg, inline, named) for arg in sorted(get_args(hint), key=_union_order)]}
    if isinstance(hint, type) and hasattr(hint, "__required_keys__"):
        if inline and hint not in named:
            return json_schema(hint, inline=True, named=named)
        return {"$ref": f"#/components/schemas/{named.get(hint, hint.__name__)}"}
    simple = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
    if hint in simple:
        return {"type": simple[hint]}
    if hint is Any:
        return {}
    raise TypeError(f"no JSON Schema for {hint!r}")
