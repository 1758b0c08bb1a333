"""What every operation reads from its client, written once: the JSON Schema of its JSON body and
its query parameters.

The registry (``sidecar.ops.registry``) takes each operation's fields from here (the fields a
request may carry: any other is 400 ``unknown_field``); the OpenAPI document's request bodies and
parameters are these schemas (``sidecar.http.openapi``); the MCP tools' input schemas are the same
schemas, narrowed to what the role may use (``sidecar.mcp.tools``). The typed requests that check a
body (``sidecar.contract``, ``sidecar.episodic``, ``sidecar.kg.requests``, ``sidecar.palace``) refuse what these
schemas refuse, each problem a 400 naming its field; ``tests/http/test_requests.py`` holds the three
to one another over every operation of the registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sidecar.contract import (
    BLOCK_REQUEST,
    FIELDS,
    SEARCH_REQUEST,
    SOME_TEXT,
    WRITE_REQUEST,
    BlockRequest,
    ConsolidateRequest,
    DeleteRequest,
    DiaryReadRequest,
    DiaryWriteRequest,
    IdentityRequest,
    IngestRequest,
    ListRequest,
    ReadRequest,
    SearchRequest,
    TaxonomyRequest,
    WriteRequest,
)
from sidecar.episodic.entry import MAX_SUMMARY_CHARS, MEMORY_TYPES, PRIORITIES, SEVERITIES
from sidecar.episodic.memories import (
    FeedbackRequest,
    ForgetRequest,
    RecallRequest,
    RememberRequest,
    RestoreRequest,
)
from sidecar.episodic.query import MAX_K
from sidecar.episodic.session import SessionRequest
from sidecar.kg.requests import REQUESTS as KG_REQUESTS
from sidecar.palace.layers import IDENTITY_MAX_CHARS
from sidecar.palace.limits import MAX_TURN_CHARS, MAX_TURNS
from sidecar.settings import ID_PATTERN

__all__ = [
    "BODIES",
    "PALACE_REQUESTS",
    "PARAMS",
    "TYPES",
    "Body",
    "Param",
    "memory_requests",
    "params_schema",
]

Schema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Body:
    """An operation's JSON body: its schema (a closed object) and, when the OpenAPI document names
    it among its components, that name (else the document writes it out in place)."""

    schema: Schema
    name: str | None = None

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(self.schema.get("properties", {}))


@dataclass(frozen=True, slots=True)
class Param:
    """One query parameter of an operation (query parameters arrive as text)."""

    name: str
    schema: Schema
    required: bool = False
    description: str = ""


def params_schema(params: tuple[Param, ...]) -> Schema:
    """The query parameters as one closed object schema (what an MCP tool that reads them takes)."""
    schema: Schema = {
        "type": "object",
        "properties": {p.name: dict(p.schema) for p in params},
        "required": [p.name for p in params if p.required],
        "additionalProperties": False,
    }
    return schema


def _nullable(schema: Schema) -> Schema:
    """A field a request may also send as null, meaning not given."""
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(properties: Schema, required: list[str] | tuple[str, ...] = (), *, always: bool = False) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required or always:
        schema["required"] = list(required)
    return schema


STR, INT = {"type": "string"}, {"type": "integer"}
ID: Schema = {"type": "string", "pattern": ID_PATTERN}
OPT_ID: Schema = {"anyOf": [{"type": "string", "pattern": "^[A-Za-z0-9_.:@/-]{0,128}$"}, {"type": "null"}]}


# -- typed memories --------------------------------------------------------------------------------
_TOPIC_KEY: Schema = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "pattern": "^[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$",
    "description": "one live memory per key and namespace; a new one replaces it and keeps it as history",
}
_TAG: Schema = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "pattern": "^[^\\x00-\\x1f\\x7f,]*[^\\s,\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f,]*$",
}
_NAMESPACE: Schema = {**ID, "description": "defaults to the sidecar's --namespace"}


def memory_requests(*, has_crew: bool, identity: bool) -> dict[str, Schema]:
    """``remember``, ``recall``, ``feedback``, ``forget`` and ``restore`` request schemas. Crew scopes are listed
    only where there is a crew; ``identity`` adds ``workspace_id`` and ``agent_id`` (an orchestrator
    acting for an agent over HTTP; the agent's own tools leave them to the sidecar's settings)."""
    own_or_crew = ["own", "crew"] if has_crew else ["own"]
    who: Schema = {"namespace": _nullable(_NAMESPACE)}
    if identity:
        who |= {
            "workspace_id": _nullable({**ID, "description": "defaults to the sidecar's --workspace-id"}),
            "agent_id": _nullable({**ID, "description": "defaults to the sidecar's --agent-id"}),
        }
    scope = {"enum": own_or_crew, "default": "own", "description": "crew: the crew's memory, held by the lead"}
    target = {
        "id": _nullable({**ID, "description": "the entry's id"}),
        "topic_key": _nullable(_TOPIC_KEY),
        "scope": scope,
        **who,
    }
    remember = _closed(
        {
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_SUMMARY_CHARS, "pattern": "\\S"},
            "memory_type": {"enum": list(MEMORY_TYPES), "default": "fact"},
            "priority": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 1},
            "tags": {"type": "array", "items": _TAG, "maxItems": 32},
            "topic_key": _nullable(_TOPIC_KEY),
            "expires_at": _nullable({"type": "string", "description": "ISO 8601, in the future"}),
            "ttl_seconds": _nullable(
                {"type": "number", "exclusiveMinimum": 0, "description": "expires this long from now"}
            ),
            "payload": _nullable({"type": "object", "description": "any JSON object kept with the memory"}),
            "scope": scope,
            **who,
        },
        ["content"],
    )
    recall = _closed(
        {
            "query": {"type": "string", "minLength": 1, "pattern": "\\S"},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
            "memory_types": _nullable({"type": "array", "items": {"enum": list(MEMORY_TYPES)}, "minItems": 1}),
            "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "all of them"},
            "scoring": {"enum": ["importance", "activation"], "description": "defaults to --recall-scoring"},
            "explain": {"type": "boolean", "default": False, "description": "show what each score is made of"},
            "scope": {
                "enum": ["own", "crew_shared"] if has_crew else ["own"],
                "description": "crew_shared: the agent's own and the crew's; a lead's default",
            },
            **who,
        },
        ["query"],
    )
    feedback = _closed({**target, "signal": {"enum": ["+", "-", "positive", "negative", "up", "down"]}}, ["signal"])
    restore = _closed({"id": {**ID, "description": "the retired memory's id"}, **who}, ["id"])
    return {
        "remember": remember,
        "recall": recall,
        "feedback": feedback,
        "forget": _closed(target),
        "restore": restore,
    }


# The HTTP API describes every role; a solo sidecar answers a crew scope with 400 invalid_scope.
_MEMORY = memory_requests(has_crew=True, identity=True)

# -- the journal -----------------------------------------------------------------------------------
JOURNAL_ENTRY = _closed(
    {
        "workspace_id": ID,
        "entry_type": {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,64}$", "examples": ["peer.escalation"]},
        "summary": {"type": "string", "maxLength": MAX_SUMMARY_CHARS, "pattern": "\\S"},
        "id": OPT_ID,
        "agent_id": OPT_ID,
        "crew_id": OPT_ID,
        "ts": _nullable({"type": "string", "description": "ISO 8601"}),
        "severity": {"enum": list(SEVERITIES), "default": "info"},
        "priority": {
            "anyOf": [
                {"enum": list(PRIORITIES)},
                {"type": "integer", "minimum": 1, "maximum": 10},
                {"type": "null"},
            ]
        },
        "memory_type": _nullable({"enum": list(MEMORY_TYPES)}),
        "confidence": _nullable({"type": "number", "minimum": 0, "maximum": 1}),
        "tags": _nullable(_MEMORY["remember"]["properties"]["tags"]),
        "expires_at": _nullable({"type": "string", "description": "ISO 8601"}),
        "topic_key": _nullable(_MEMORY["remember"]["properties"]["topic_key"]),
        "namespace": _nullable(ID),
        "payload": _nullable({"type": "object"}),
        "refs": _nullable({"type": "object", "description": "refs.episodic: true forces embedding"}),
    },
    ["workspace_id", "entry_type", "summary"],
)
EPISODIC_RECALL = _closed(
    {
        "workspace_id": ID,
        "query_text": {"type": "string", "pattern": "\\S"},
        "scope": {
            "enum": ["own", "crew_shared"],
            "default": "own",
            "description": "own needs agent_id; crew_shared needs crew_id",
        },
        "agent_id": OPT_ID,
        "crew_id": OPT_ID,
        "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "default": 5},
        "walk_depth": {"enum": [0, 1], "default": 0},
        "hybrid": {"type": "boolean", "default": False},
    },
    ["workspace_id", "query_text"],
)
SESSION = _closed(
    {
        "session_id": ID,
        "source_id": {"type": "string", "minLength": 1, "maxLength": 256},
        "compaction_count": {"type": "integer", "minimum": 0, "default": 0},
        "summary": {"type": "string", "minLength": 1},
        "messages": {
            "type": "array",
            "items": _closed({"content": STR, "role": STR}, ["content"]),
        },
        "workspace_id": ID,
        "agent_id": ID,
    },
    ["session_id"],
)

# -- the palace ------------------------------------------------------------------------------------
_NAME: Schema = {"type": "string", "minLength": 1, "pattern": "\\S"}
_AGENT: Schema = {"type": "string", "pattern": ID_PATTERN, "description": "default: this sidecar's agent"}
PALACE_REQUESTS: dict[str, Schema] = {
    "list": _closed(
        {
            "wing": {**_NAME, "description": "agent, crew (a tier); default every tier"},
            "room": {**_NAME, "description": "a folder (daily, topics, daily/summaries) or evergreen (the root files)"},
        },
        always=True,
    ),
    "taxonomy": _closed({}, always=True),
    "delete": _closed(
        {
            "tier": FIELDS["tier"],
            "path": FIELDS["path"],
            "heading": {
                **_NAME,
                "description": "delete only this heading section (and its subsections): its heading path "
                "('Deploy > Rollback') or its last part; it must name one section",
            },
        },
        ("path",),
    ),
    "identity": _closed(
        {
            "identity": {
                "type": "string",
                "minLength": 1,
                "maxLength": IDENTITY_MAX_CHARS,
                "pattern": SOME_TEXT,
                "description": "who the agent is: the L0 layer, whole at the top of every memory block",
            }
        },
        ("identity",),
    ),
    "diary_write": _closed(
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "maxLength": 10_000,
                "pattern": SOME_TEXT,
                "description": "the entry, markdown",
            },
            "agent_id": _AGENT,
        },
        ("content",),
    ),
    "diary_read": _closed(
        {"agent_id": _AGENT, "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}},
        always=True,
    ),
    "ingest": _closed(
        {
            "turns": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_TURNS,
                "items": _closed(
                    {
                        "role": {"enum": ["user", "assistant", "tool", "system"], "default": "user"},
                        "content": {"type": "string", "maxLength": MAX_TURN_CHARS, "pattern": "^[^\\u0000]*$"},
                        "ts": {
                            "type": "string",
                            "description": "when it was said (ISO 8601): dates its memory, its daily note and its facts",
                        },
                        "id": {
                            "type": "string",
                            "pattern": ID_PATTERN,
                            "description": "the turn's id: a retry of the same turn stores nothing twice",
                        },
                    },
                    ("content",),
                ),
            },
            "dry_run": {"type": "boolean", "default": False, "description": "report what would be kept, keep nothing"},
        },
        ("turns",),
    ),
}

# -- consolidation ---------------------------------------------------------------------------------
CONSOLIDATE = _closed(
    {
        "tier": {"enum": ["agent", "crew"], "default": "agent"},
        "since": _nullable({"type": "string", "description": "YYYY-MM-DD: leave older notes alone"}),
        "dry_run": {"type": "boolean", "default": False, "description": "report, write nothing"},
    },
    always=True,
)

#: Operation name -> its JSON body.
BODIES: dict[str, Body] = {
    "search": Body(SEARCH_REQUEST, "SearchRequest"),
    "write": Body(WRITE_REQUEST, "WriteRequest"),
    "block": Body(BLOCK_REQUEST, "BlockRequest"),
    "journal_append": Body(JOURNAL_ENTRY, "JournalEntryIn"),
    "episodic_recall": Body(EPISODIC_RECALL, "Recall"),
    **{name: Body(schema, f"{name.capitalize()}Memory") for name, schema in _MEMORY.items()},
    "session": Body(SESSION),
    "consolidate": Body(CONSOLIDATE),
    **{f"kg_{name}": Body(schema) for name, schema in KG_REQUESTS.items() if name != "stats"},
    **{name: Body(PALACE_REQUESTS[name]) for name in ("delete", "identity", "diary_write", "ingest")},
}


# -- query parameters ------------------------------------------------------------------------------
def _props(schema: Schema, *names: str, required: tuple[str, ...] = ()) -> tuple[Param, ...]:
    """Query parameters that take a body schema's fields (the same rules, sent as text)."""
    return tuple(Param(n, schema["properties"][n], n in required) for n in names)


_SCOPE = Param("scope", {"enum": ["agent", "crew"], "default": "agent"})
_WORKSPACE = Param("workspace_id", ID, required=True)
_CREW = Param("crew_id", OPT_ID)
# The memory browser (sidecar.ui): a form sends its empty fields, so every optional parameter also
# takes "" (absent).
_FORM_ID: Schema = {"type": "string", "pattern": "^(" + ID_PATTERN.strip("^$") + ")?$"}
_FORM_INT: Schema = {"type": "string", "pattern": "^[0-9]{0,9}$"}


def _choice(*values: str) -> Schema:
    return {"enum": ["", *values]}


#: Operation name -> its query parameters (an operation not named takes none).
PARAMS: dict[str, tuple[Param, ...]] = {
    "status": (_SCOPE,),
    "reindex": (_SCOPE,),
    "read": (
        Param("tier", FIELDS["tier"]),
        Param("path", FIELDS["path"], required=True),
        Param("line_start", FIELDS["line_start"]),
        Param("line_end", FIELDS["line_end"]),
    ),
    "journal_list": (
        _WORKSPACE,
        Param("limit", {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}),
        Param("q", STR),
    ),
    "memories": (
        Param("workspace_id", ID),
        Param("agent_id", ID),
        Param("namespace", ID),
        Param("topic_key", STR),
        Param("limit", {"type": "integer", "minimum": 1, "maximum": 200, "default": 50}),
    ),
    "health": (_WORKSPACE, _CREW),
    "health_compute": (
        _WORKSPACE,
        _CREW,
        Param("recompute", {"type": "string", "pattern": "^(1|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss])$", "default": "1"}),
    ),
    "kg_stats": (Param("workspace_id", ID), _SCOPE),
    "list": _props(PALACE_REQUESTS["list"], "wing", "room"),
    "diary_read": _props(PALACE_REQUESTS["diary_read"], "agent_id", "limit"),
    "ui_file": (Param("tier", _choice("agent", "crew")), Param("path", FIELDS["path"], required=True)),
    "ui_search": (
        Param("query", STR),
        Param("scope", _choice("agent", "crew", "both")),
        Param("limit", _FORM_INT),
    ),
    "ui_memories": (
        Param("memory_type", _choice(*MEMORY_TYPES)),
        Param("namespace", _FORM_ID),
        Param("tag", STR),
        Param("agent_id", _FORM_ID),
        Param("workspace_id", _FORM_ID),
    ),
    "ui_memory": (
        Param("topic_key", STR, required=True),
        Param("namespace", _FORM_ID),
        Param("agent_id", _FORM_ID),
        Param("workspace_id", _FORM_ID),
    ),
    "ui_journal": (Param("q", STR), Param("workspace_id", _FORM_ID), Param("limit", _FORM_INT)),
    "ui_graph": (
        Param("entity", STR),
        Param("workspace_id", _FORM_ID),
        Param("scope", _choice("agent", "crew")),
    ),
    "ui_health": (Param("workspace_id", _FORM_ID), Param("crew_id", _FORM_ID)),
    "ui_block": (
        Param("query", STR),
        Param("budget", _FORM_INT),
        Param("role", _choice("solo", "member", "lead")),
    ),
}


#: Operation name -> the typed request its ways in parse it into (``from_json``: a 400 naming the
#: field of any problem) and its operation takes. Each lists its fields, the fields above. The
#: journal's entry and recall (``episodic``) and the graph's requests (``kg.requests.KgRequest``,
#: checked against the graph's own schemas above) are typed too, without a field list.
TYPES: dict[str, type] = {
    "search": SearchRequest,
    "write": WriteRequest,
    "read": ReadRequest,
    "block": BlockRequest,
    "consolidate": ConsolidateRequest,
    "remember": RememberRequest,
    "recall": RecallRequest,
    "feedback": FeedbackRequest,
    "forget": ForgetRequest,
    "restore": RestoreRequest,
    "session": SessionRequest,
    "list": ListRequest,
    "taxonomy": TaxonomyRequest,
    "delete": DeleteRequest,
    "identity": IdentityRequest,
    "diary_write": DiaryWriteRequest,
    "diary_read": DiaryReadRequest,
    "ingest": IngestRequest,
}
