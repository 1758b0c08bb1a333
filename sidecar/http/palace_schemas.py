"""The palace's request and answer shapes, written once: the MCP tools' input schemas and the
OpenAPI document both take them from here, and ``http/palace.py`` checks requests by the same
rules (each problem a 400 naming the field)."""

from __future__ import annotations

from typing import Any

from sidecar.contract import FIELDS
from sidecar.palace.ingest import MAX_TURN_CHARS, MAX_TURNS
from sidecar.palace.layers import IDENTITY_MAX_CHARS
from sidecar.settings import ID_PATTERN

__all__ = ["ANSWERS", "REQUESTS"]

Schema = dict[str, Any]
STR, INT, NUM, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}
NAME = {"type": "string", "minLength": 1, "pattern": "\\S"}


def _obj(props: Schema, required: tuple[str, ...] = (), *, closed: bool = True) -> Schema:
    schema: Schema = {"type": "object", "properties": props, "required": list(required)}
    if closed:
        schema["additionalProperties"] = False
    return schema


REQUESTS: dict[str, Schema] = {
    "list": _obj(
        {
            "wing": {**NAME, "description": "agent, crew (a tier); default every tier"},
            "room": {**NAME, "description": "a folder (daily, topics, daily/summaries) or evergreen (the root files)"},
        }
    ),
    "taxonomy": _obj({}),
    "delete": _obj(
        {
            "tier": FIELDS["tier"],
            "path": FIELDS["path"],
            "heading": {
                **NAME,
                "description": "delete only this heading section (and its subsections): its heading path "
                "('Deploy > Rollback') or its last part; it must name one section",
            },
        },
        ("path",),
    ),
    "identity": _obj(
        {
            "identity": {
                "type": "string",
                "minLength": 1,
                "maxLength": IDENTITY_MAX_CHARS,
                "pattern": "^[^\\u0000]*\\S[^\\u0000]*$",
                "description": "who the agent is: the L0 layer, whole at the top of every memory block",
            }
        },
        ("identity",),
    ),
    "diary_write": _obj(
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "maxLength": 10_000,
                "pattern": "^[^\\u0000]*\\S[^\\u0000]*$",
                "description": "the entry, markdown",
            },
            "agent_id": {"type": "string", "pattern": ID_PATTERN, "description": "default: this sidecar's agent"},
        },
        ("content",),
    ),
    "diary_read": _obj(
        {
            "agent_id": {"type": "string", "pattern": ID_PATTERN, "description": "default: this sidecar's agent"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        }
    ),
    "ingest": _obj(
        {
            "turns": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_TURNS,
                "items": _obj(
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

_FILE = _obj(
    {"wing": STR, "room": STR, "path": STR, "bytes": INT, "chunks": INT, "modified": STR},
    ("wing", "room", "path", "bytes", "chunks", "modified"),
    closed=False,
)
_DIARY_ENTRY = _obj(
    {"agent_id": STR, "at": STR, "path": STR, "line_start": INT, "line_end": INT, "content": STR},
    ("agent_id", "at", "path", "line_start", "line_end", "content"),
    closed=False,
)
ANSWERS: dict[str, Schema] = {
    "list": _obj({"files": {"type": "array", "items": _FILE}}, ("files",), closed=False),
    "taxonomy": _obj(
        {
            "wings": {
                "type": "array",
                "items": _obj(
                    {
                        "wing": STR,
                        "files": INT,
                        "memories": INT,
                        "rooms": {"type": "array", "items": {"type": "object"}},
                    },
                    ("wing", "rooms"),
                    closed=False,
                ),
            }
        },
        ("wings",),
        closed=False,
    ),
    "delete": _obj(
        {
            "tier": STR,
            "path": STR,
            "deleted": {"enum": ["file", "section"]},
            "heading": STR,
            "line_start": INT,
            "line_end": INT,
            "bytes_removed": INT,
            "bytes": INT,
            "seq": INT,
            "journal_id": STR,
        },
        ("tier", "path", "deleted", "bytes_removed", "seq"),
        closed=False,
    ),
    "identity": _obj({"path": STR, "chars": INT, "seq": INT}, ("path", "chars", "seq"), closed=False),
    "diary_write": _obj(
        {"agent_id": STR, "path": STR, "at": STR, "seq": INT}, ("agent_id", "path", "at", "seq"), closed=False
    ),
    "diary_read": _obj(
        {"agent_id": STR, "entries": {"type": "array", "items": _DIARY_ENTRY}}, ("agent_id", "entries"), closed=False
    ),
    "ingest": _obj(
        {
            "dry_run": BOOL,
            "kept": {"type": "array", "items": {"type": "object"}},
            "dropped": {"type": "array", "items": {"type": "object"}},
            "failed": {
                "type": "array",
                "items": {"type": "object"},
                "description": "kept turns that could not be stored: index, chunk, code, message",
            },
            "counts": {"type": "object"},
        },
        ("dry_run", "kept", "dropped", "counts"),
        closed=False,
    ),
    "agent_settings": _obj(
        {
            "path": {"anyOf": [STR, {"type": "null"}]},
            "values": {"type": "object"},
            "errors": {"type": "array", "items": STR},
            "effective": {"type": "object"},
        },
        ("path", "values", "errors", "effective"),
        closed=False,
    ),
}
