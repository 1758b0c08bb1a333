"""JSON schemas of the typed-memory requests, written once: the MCP tools' input schemas and the
OpenAPI document's request bodies both come from here (the requests themselves are validated by
``sidecar.episodic.memories``, which names the field of any problem)."""

from __future__ import annotations

from typing import Any

from sidecar.episodic.entry import MAX_SUMMARY_CHARS, MEMORY_TYPES
from sidecar.episodic.query import MAX_K
from sidecar.settings import ID_PATTERN

__all__ = ["request_schemas"]

Schema = dict[str, Any]
_ID = {"type": "string", "pattern": ID_PATTERN}
_TOPIC_KEY = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "pattern": "^[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$",
    "description": "one live memory per key and namespace; a new one replaces it and keeps it as history",
}
_TAG = {
    "type": "string",
    "minLength": 1,
    "maxLength": 64,
    "pattern": "^[^\\x00-\\x1f\\x7f,]*[^\\s,\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f,]*$",
}
_NAMESPACE = {**_ID, "description": "defaults to the sidecar's --namespace"}


def _nullable(schema: Schema) -> Schema:
    """A field a request may also send as null, meaning not given."""
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(properties: Schema, required: list[str]) -> Schema:
    schema: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def request_schemas(*, has_crew: bool, identity: bool) -> dict[str, Schema]:
    """``remember``, ``recall``, ``feedback``, ``forget`` and ``restore`` request schemas. Crew scopes are listed
    only where there is a crew; ``identity`` adds ``workspace_id`` and ``agent_id`` (an orchestrator
    acting for an agent over HTTP; the agent's own tools leave them to the sidecar's settings)."""
    own_or_crew = ["own", "crew"] if has_crew else ["own"]
    who: Schema = {"namespace": _nullable(_NAMESPACE)}
    if identity:
        who |= {
            "workspace_id": _nullable({**_ID, "description": "defaults to the sidecar's --workspace-id"}),
            "agent_id": _nullable({**_ID, "description": "defaults to the sidecar's --agent-id"}),
        }
    scope = {"enum": own_or_crew, "default": "own", "description": "crew: the crew's memory, held by the lead"}
    target = {
        "id": _nullable({**_ID, "description": "the entry's id"}),
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
    restore = _closed({"id": {**_ID, "description": "the retired memory's id"}, **who}, ["id"])
    return {
        "remember": remember,
        "recall": recall,
        "feedback": feedback,
        "forget": _closed(target, []),
        "restore": restore,
    }
