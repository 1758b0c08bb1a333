"""Journal entries: the validated input form and the stored form.

Validation lives here so every path in (HTTP, the write queue, tests) gets the same clear errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sidecar.episodic.clock import parse_iso, to_iso
from sidecar.episodic.importance import PRIORITY_FLOORS, base_importance
from sidecar.episodic.selection import wants_embedding
from sidecar.errors import BadRequest

__all__ = [
    "MAX_PAYLOAD_CHARS",
    "MAX_SUMMARY_CHARS",
    "PRIORITIES",
    "SEVERITIES",
    "JournalEntry",
    "StoredEntry",
    "invalid",
    "require_id",
]

SEVERITIES = ("debug", "info", "warn", "error")
PRIORITIES = ("normal", *PRIORITY_FLOORS)
MAX_SUMMARY_CHARS = 4000
MAX_PAYLOAD_CHARS = 64 * 1024
_ID = re.compile(r"^[A-Za-z0-9_.:@/-]{1,128}$")
_TYPE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_FIELDS = frozenset(
    {"id", "workspace_id", "crew_id", "agent_id", "ts", "entry_type", "severity", "summary"}
    | {"payload", "refs", "priority"}
)


def invalid(field: str, message: str, *, missing: bool = False) -> BadRequest:
    """A BadRequest naming ``field``, with the stable code ``invalid_<field>`` (or ``missing_<field>``)."""
    return BadRequest(message, code=f"{'missing' if missing else 'invalid'}_{field}", field=field)


def require_id(name: str, value: object, *, optional: bool = False) -> str | None:
    """A workspace/crew/agent/entry id: a short token of safe characters, or a clear BadRequest."""
    if value is None or value == "":
        if optional:
            return None
        raise invalid(name, f"{name} is required", missing=True)
    if not isinstance(value, str) or not _ID.match(value):
        raise invalid(name, f"{name} must be a string of 1-128 letters, digits or _.:@/-")
    return value


@dataclass(frozen=True, slots=True)
class JournalEntry:
    """A new journal entry; construction validates it (``BadRequest`` on any bad field)."""

    workspace_id: str
    entry_type: str
    summary: str
    agent_id: str | None = None
    crew_id: str | None = None
    severity: str = "info"
    payload: Mapping[str, Any] = field(default_factory=dict)
    refs: Mapping[str, Any] = field(default_factory=dict)
    priority: str | None = None
    ts: datetime | None = None
    id: str | None = None

    def __post_init__(self) -> None:
        require_id("workspace_id", self.workspace_id)
        for name in ("agent_id", "crew_id", "id"):
            require_id(name, getattr(self, name), optional=True)
        if not isinstance(self.entry_type, str) or not _TYPE.match(self.entry_type):
            raise invalid("entry_type", "entry_type must be a dotted name like peer.escalation")
        if not isinstance(self.summary, str) or not self.summary.strip():
            raise invalid("summary", "summary must be a non-empty string")
        if len(self.summary) > MAX_SUMMARY_CHARS:
            raise invalid("summary", f"summary is longer than {MAX_SUMMARY_CHARS} characters")
        if self.severity not in SEVERITIES:
            raise invalid("severity", f"severity must be one of {', '.join(SEVERITIES)}")
        if self.priority is not None and self.priority not in PRIORITIES:
            raise invalid("priority", f"priority must be one of {', '.join(PRIORITIES)}")
        _check_object("payload", self.payload)
        _check_object("refs", self.refs)
        if not isinstance(self.ts, datetime | None):
            raise invalid("ts", "ts must be a datetime")

    @classmethod
    def from_json(cls, body: object) -> JournalEntry:
        """Build from a decoded JSON object; unknown fields and wrong types are a BadRequest."""
        if not isinstance(body, dict):
            raise BadRequest("a journal entry must be a JSON object", code="invalid_json")
        unknown = sorted(set(body) - _FIELDS)
        if unknown:
            raise BadRequest(f"unknown field(s): {', '.join(unknown)}", code="unknown_field")
        values = dict(body)
        if values.get("ts") is not None:
            values["ts"] = _parse_ts(values["ts"])
        for name in ("payload", "refs"):
            if values.get(name) is None:
                values.pop(name, None)
        for name in ("workspace_id", "entry_type", "summary"):
            values.setdefault(name, None)
        return cls(**values)

    @property
    def embeddable(self) -> bool:
        return wants_embedding(self.entry_type, self.severity, self.refs)

    @property
    def base_importance(self) -> float:
        return base_importance(self.entry_type, self.severity, self.priority)


@dataclass(frozen=True, slots=True)
class StoredEntry:
    """A journal row as read back (``seq`` is the journal order)."""

    seq: int
    id: str
    workspace_id: str
    crew_id: str | None
    agent_id: str | None
    ts: datetime
    entry_type: str
    severity: str
    summary: str
    payload: dict[str, Any]
    refs: dict[str, Any]
    priority: str | None
    embeddable: bool

    @property
    def base_importance(self) -> float:
        return base_importance(self.entry_type, self.severity, self.priority)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "seq": self.seq,
            "workspace_id": self.workspace_id,
            "crew_id": self.crew_id,
            "agent_id": self.agent_id,
            "ts": to_iso(self.ts),
            "entry_type": self.entry_type,
            "severity": self.severity,
            "summary": self.summary,
            "payload": self.payload,
            "refs": self.refs,
            "priority": self.priority,
            "embeddable": self.embeddable,
        }


def _check_object(name: str, value: object) -> None:
    if not isinstance(value, Mapping):
        raise invalid(name, f"{name} must be a JSON object")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        raise invalid(name, f"{name} must be JSON-serialisable (no NaN)") from None
    if len(text) > MAX_PAYLOAD_CHARS:
        raise invalid(name, f"{name} is larger than {MAX_PAYLOAD_CHARS} characters as JSON")


def _parse_ts(value: object) -> datetime:
    if not isinstance(value, str):
        raise invalid("ts", "ts must be an ISO 8601 string")
    try:
        return parse_iso(value)
    except ValueError:
        raise invalid("ts", f"ts is not an ISO 8601 timestamp: {value[:40]!r}") from None
