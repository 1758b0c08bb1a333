"""The palace's answer shapes, written once: the OpenAPI document and the MCP tools' output schemas
take them from here (its requests are the registry's, ``sidecar.ops.requests``)."""

from __future__ import annotations

from typing import Any

__all__ = ["ANSWERS"]

Schema = dict[str, Any]
STR, INT, NUM, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"}


def _obj(props: Schema, required: tuple[str, ...] = (), *, closed: bool = True) -> Schema:
    schema: Schema = {"type": "object", "properties": props, "required": list(required)}
    if closed:
        schema["additionalProperties"] = False
    return schema


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
