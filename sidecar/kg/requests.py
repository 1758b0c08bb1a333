"""The graph's requests, written once: their JSON schemas feed the MCP tools' input schemas and the
OpenAPI document, and :func:`parse` checks a body against the same schema (a 400 naming the field).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sidecar.errors import BadRequest, NotFound, refuse_unknown
from sidecar.settings import ID_PATTERN

__all__ = ["OPERATIONS", "REQUESTS", "KgRequest", "parse"]

Schema = dict[str, Any]
_TEXT = "^[^\\x00-\\x1f\\x7f]*\\S[^\\x00-\\x1f\\x7f]*$"
_NAME: Schema = {"type": "string", "minLength": 1, "maxLength": 200, "pattern": _TEXT}
_WHEN: Schema = {"type": "string", "minLength": 10, "maxLength": 40, "description": "YYYY-MM-DD or ISO 8601"}


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


_WHO: Schema = {
    "workspace_id": _nullable({"type": "string", "pattern": ID_PATTERN, "description": "default --workspace-id"}),
    "scope": {
        **_nullable({"enum": ["agent", "crew"]}),
        "default": "agent",
        "description": "agent: this agent's graph; crew: the crew's (held by the lead)",
    },
}


def _closed(properties: Schema, required: list[str], description: str) -> Schema:
    schema: Schema = {
        "type": "object",
        "properties": {**properties, **_WHO},
        "additionalProperties": False,
        "description": description,
    }
    if required:
        schema["required"] = required
    return schema


REQUESTS: dict[str, Schema] = {
    "add": _closed(
        {
            "subject": _NAME,
            "predicate": {**_NAME, "maxLength": 64},
            "object": _NAME,
            "valid_from": _nullable({**_WHEN, "description": "when it began holding; default now"}),
            "confidence": {"type": "number", "minimum": 0, "maximum": 1, "default": 1},
            "source": _nullable({**_NAME, "description": "where it was learnt; default api"}),
        },
        ["subject", "predicate", "object"],
        "Add a fact (entities are created as needed). A functional predicate (uses for a known type, owner, "
        "located in, is, status, role...) ends the subject's current value at valid_from.",
    ),
    "query": _closed(
        {
            "entity": _NAME,
            "as_of": _nullable({**_WHEN, "description": "facts holding at this time; default: current facts"}),
            "direction": {"enum": ["out", "in", "both"], "default": "both"},
            "predicate": _nullable({**_NAME, "maxLength": 64}),
            "before": _nullable({**_NAME, "description": "the values the entity had before this one"}),
            "include_invalid": {"type": "boolean", "default": False, "description": "ended facts too"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 100},
        },
        ["entity"],
        "Facts about an entity: current, as of a time, all of them, or what it had before a value.",
    ),
    "invalidate": _closed(
        {
            "fact_id": _nullable({"type": "integer", "minimum": 1}),
            "subject": _nullable(_NAME),
            "predicate": _nullable({**_NAME, "maxLength": 64}),
            "object": _nullable(_NAME),
            "valid_to": _nullable({**_WHEN, "description": "when it stopped holding; default now"}),
        },
        [],
        "End a fact, by fact_id or by subject, predicate and object: it is kept, with valid_to set.",
    ),
    "timeline": _closed(
        {"entity": _NAME, "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 200}},
        ["entity"],
        "Every fact about an entity, ended ones too, in the order they began.",
    ),
    "traverse": _closed(
        {
            "entity": _NAME,
            "hops": {"type": "integer", "minimum": 1, "maximum": 2, "default": 1},
            "as_of": _nullable(_WHEN),
        },
        ["entity"],
        "Entities one or two hops from an entity along the facts holding now (or as_of).",
    ),
    "tunnels": _closed(
        {
            "room_a": _nullable({**_NAME, "description": "a room: a file without .md (topics/db), a folder, journal"}),
            "room_b": _nullable(_NAME),
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
        },
        [],
        "Entities that bridge rooms: their facts stand in two rooms or more (in room_a and room_b when given).",
    ),
    "stats": _closed({}, [], "Entity and fact counts, current and ended, rooms, tunnels, predicates."),
}
OPERATIONS = tuple(REQUESTS)


@dataclass(frozen=True, slots=True)
class KgRequest:
    """One graph operation's request: the body checked against the operation's schema, with its
    defaults filled (``args``: every field of the schema, None where it was not given)."""

    operation: str
    args: Mapping[str, Any]

    @classmethod
    def from_json(cls, operation: str, body: dict[str, Any]) -> KgRequest:
        if operation not in REQUESTS:
            raise NotFound(f"no graph operation {operation!r}", code="not_found")
        return cls(operation, parse(operation, body))

    @property
    def scope(self) -> str:
        """agent (this agent's graph) or crew (the crew's, the lead's)."""
        return str(self.args.get("scope") or "agent")

    def to_json(self) -> dict[str, Any]:
        """The request as a body again (fields not given left out): what a member sends its lead."""
        return {name: value for name, value in self.args.items() if value is not None}


def parse(operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` checked against the operation's schema, with defaults filled; a 400 naming the field."""
    schema = REQUESTS[operation]
    props: Schema = schema["properties"]
    refuse_unknown(body, props)
    out: dict[str, Any] = {}
    for name, spec in props.items():
        value = body.get(name)
        if value is None and name in body and "anyOf" not in spec:
            raise BadRequest(f"{name} may not be null", code=f"invalid_{name}", field=name)
        if value is None:
            if name in schema.get("required", []):
                raise BadRequest(f"{name} is required", code=f"missing_{name}", field=name)
            out[name] = spec.get("default")
            continue
        out[name] = _check(name, spec["anyOf"][0] if "anyOf" in spec else spec, value)
    return out


def _check(name: str, spec: Schema, value: Any) -> Any:
    def bad(why: str) -> BadRequest:
        return BadRequest(f"{name} {why}", code=f"invalid_{name}", field=name)

    if "enum" in spec:
        if not isinstance(value, str) or value not in spec["enum"]:
            raise bad(f"must be one of {', '.join(spec['enum'])}")
        return value
    kind = spec["type"]
    if kind == "boolean":
        if not isinstance(value, bool):
            raise bad("must be true or false")
        return value
    if kind in ("integer", "number"):
        ok = isinstance(value, int) if kind == "integer" else isinstance(value, int | float)
        if isinstance(value, bool) or not ok or not math.isfinite(value):
            raise bad(f"must be a {kind}")
        if not spec.get("minimum", -math.inf) <= value <= spec.get("maximum", math.inf):
            raise bad(f"must be {spec.get('minimum')}..{spec.get('maximum', 'any')}")
        return value
    if not isinstance(value, str):
        raise bad("must be a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad("is not valid Unicode (a lone surrogate)") from None
    if not spec.get("minLength", 0) <= len(value) <= spec.get("maxLength", 10_000):
        raise bad(f"must be {spec.get('minLength', 0)}-{spec.get('maxLength')} characters")
    if "pattern" in spec and not re.search(spec["pattern"], value):
        raise bad("has a form that is not accepted")
    return value
