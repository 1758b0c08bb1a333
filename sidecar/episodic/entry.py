"""Journal entries: the validated input form and the stored form.

Validation lives here so every path in (HTTP, the write queue, tests) gets the same clear errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from sidecar.clock import parse_iso, to_iso
from sidecar.episodic.importance import PRIORITY_FLOORS, base_importance
from sidecar.episodic.selection import wants_embedding
from sidecar.errors import BadRequest, refuse_unknown
from sidecar.settings import ID_RE

__all__ = [
    "DEFAULT_NAMESPACE",
    "MAX_PAYLOAD_CHARS",
    "MAX_SUMMARY_CHARS",
    "MAX_TAGS",
    "MEMORY_TYPES",
    "PRIORITIES",
    "SEVERITIES",
    "STATUSES",
    "JournalEntry",
    "MemoryStatus",
    "MemoryType",
    "StoredEntry",
    "check_namespace",
    "check_topic_key",
    "dumps",
    "invalid",
    "parse_ts",
    "refuse_unknown",
    "require_id",
]

SEVERITIES = ("debug", "info", "warn", "error")
PRIORITIES = ("normal", *PRIORITY_FLOORS)
MAX_SUMMARY_CHARS = 4000
MAX_PAYLOAD_CHARS = 64 * 1024
#: The eight memory types. An entry with a ``memory_type`` is a typed memory: it is embedded,
#: served by recall while live, and never aged out by compaction (it expires instead).
MemoryType = Literal["fact", "decision", "preference", "todo", "error", "context", "workflow", "meeting_ledger"]
MEMORY_TYPES: tuple[MemoryType, ...] = get_args(MemoryType)
#: ``live`` entries are served; ``superseded`` ones were replaced by a newer entry with the same
#: topic key (kept as history); ``retired`` ones took three negative feedbacks.
MemoryStatus = Literal["live", "superseded", "retired"]
STATUSES: tuple[MemoryStatus, ...] = get_args(MemoryStatus)
DEFAULT_NAMESPACE = "default"
MAX_TAGS = 32
MAX_TOPIC_KEY_CHARS = 200
_ID = ID_RE
_TYPE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_TAG = re.compile(r"^[^\x00-\x1f\x7f,]{1,64}$")
_FIELDS = frozenset(
    {"id", "workspace_id", "crew_id", "agent_id", "ts", "entry_type", "severity", "summary"}
    | {"payload", "refs", "priority", "memory_type", "confidence", "tags", "expires_at", "topic_key", "namespace"}
)


def invalid(field: str, message: str, *, missing: bool = False) -> BadRequest:
    """A BadRequest naming ``field``, with the stable code ``invalid_<field>`` (or ``missing_<field>``)."""
    return BadRequest(message, code=f"{'missing' if missing else 'invalid'}_{field}", field=field)


def check_namespace(value: object) -> str:
    """A namespace: the same token rule as the ids."""
    checked = require_id("namespace", value)
    assert checked is not None
    return checked


def check_topic_key(value: object) -> str:
    """A topic key: 1-200 characters, no control characters, not blank."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TOPIC_KEY_CHARS:
        raise invalid("topic_key", f"topic_key must be a non-blank string of at most {MAX_TOPIC_KEY_CHARS} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise invalid("topic_key", "topic_key must not contain control characters")
    return value


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
    priority: str | int | None = None
    ts: datetime | None = None
    id: str | None = None
    memory_type: str | None = None
    confidence: float = 1.0
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    topic_key: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    #: ``payload`` and ``refs`` as stored (compact JSON), serialised once by the check: the
    #: journal stores the form that was validated.
    payload_json: str = field(init=False, repr=False, compare=False)
    refs_json: str = field(init=False, repr=False, compare=False)

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
        if isinstance(self.priority, int) and not isinstance(self.priority, bool):
            if not 1 <= self.priority <= 10:
                raise invalid(
                    "priority", "priority must be an integer from 1 to 10, or one of " + ", ".join(PRIORITIES)
                )
        elif self.priority is not None and self.priority not in PRIORITIES:
            raise invalid("priority", "priority must be an integer from 1 to 10, or one of " + ", ".join(PRIORITIES))
        object.__setattr__(self, "payload_json", _check_object("payload", self.payload))
        object.__setattr__(self, "refs_json", _check_object("refs", self.refs))
        if not isinstance(self.ts, datetime | None):
            raise invalid("ts", "ts must be a datetime")
        if not isinstance(self.expires_at, datetime | None):
            raise invalid("expires_at", "expires_at must be a datetime")
        if self.memory_type is not None and self.memory_type not in MEMORY_TYPES:
            raise invalid("memory_type", f"memory_type must be one of {', '.join(MEMORY_TYPES)}")
        if isinstance(self.confidence, bool) or not isinstance(self.confidence, int | float):
            raise invalid("confidence", "confidence must be a number from 0 to 1")
        if not 0.0 <= self.confidence <= 1.0:
            raise invalid("confidence", "confidence must be a number from 0 to 1")
        _check_tags(self.tags)
        if self.topic_key is not None:
            check_topic_key(self.topic_key)
        check_namespace(self.namespace)

    @classmethod
    def from_json(cls, body: object) -> JournalEntry:
        """Build from a decoded JSON object; unknown fields and wrong types are a BadRequest."""
        if not isinstance(body, dict):
            raise BadRequest("a journal entry must be a JSON object", code="invalid_json")
        refuse_unknown(body, _FIELDS)
        values = dict(body)
        for name in ("ts", "expires_at"):
            if values.get(name) is not None:
                values[name] = parse_ts(name, values[name])
        for name in ("payload", "refs", "confidence", "namespace"):
            if values.get(name) is None:
                values.pop(name, None)
        if values.get("tags") is None:
            values.pop("tags", None)
        elif isinstance(values["tags"], list):
            values["tags"] = tuple(values["tags"])
        for name in ("workspace_id", "entry_type", "summary"):
            values.setdefault(name, None)
        return cls(**values)

    @property
    def embeddable(self) -> bool:
        return self.memory_type is not None or wants_embedding(self.entry_type, self.severity, self.refs)

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
    priority: str | int | None
    embeddable: bool
    memory_type: str | None = None
    confidence: float = 1.0
    tags: tuple[str, ...] = ()
    expires_at: datetime | None = None
    topic_key: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    status: str = "live"
    superseded_by: str | None = None
    importance: float | None = None  # the seed after feedback; None: derived from type and priority
    positive: int = 0
    negative: int = 0
    access_count: int = 0
    accessed_at: datetime | None = None
    supersedes: str | None = None  # set on the answer to a topic-key upsert: the entry it replaced

    @property
    def base_importance(self) -> float:
        if self.importance is not None:
            return self.importance
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
            "memory_type": self.memory_type,
            "confidence": self.confidence,
            "tags": list(self.tags),
            "expires_at": None if self.expires_at is None else to_iso(self.expires_at),
            "topic_key": self.topic_key,
            "namespace": self.namespace,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "supersedes": self.supersedes,
            "importance": self.base_importance,
            "feedback": {"positive": self.positive, "negative": self.negative},
            "access_count": self.access_count,
            "accessed_at": None if self.accessed_at is None else to_iso(self.accessed_at),
        }


def _check_object(name: str, value: object) -> str:
    """``value`` as compact JSON (the stored form), or a BadRequest: not an object, not
    serialisable, or longer than ``MAX_PAYLOAD_CHARS`` as JSON with the default separators
    (``", "`` and ``": "``), each of which is at most two characters of the compact form's one."""
    if not isinstance(value, Mapping):
        raise invalid(name, f"{name} must be a JSON object")
    if isinstance(value, dict) and not value:
        return "{}"
    try:
        text = dumps(value)
        if len(text) <= MAX_PAYLOAD_CHARS // 2:  # spaced, it is at most twice as long
            return text
        spaced = len(text) if len(text) > MAX_PAYLOAD_CHARS else len(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError):
        raise invalid(name, f"{name} must be JSON-serialisable (no NaN)") from None
    if spaced > MAX_PAYLOAD_CHARS:
        raise invalid(name, f"{name} is larger than {MAX_PAYLOAD_CHARS} characters as JSON")
    return text


def dumps(value: object) -> str:
    """JSON as the journal stores it: compact, unescaped, no NaN (``ValueError``)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _check_tags(tags: object) -> None:
    if not isinstance(tags, tuple | list):
        raise invalid("tags", "tags must be a list of strings")
    if len(tags) > MAX_TAGS:
        raise invalid("tags", f"at most {MAX_TAGS} tags")
    for tag in tags:
        if not isinstance(tag, str) or not _TAG.match(tag) or not tag.strip():
            raise invalid("tags", "each tag must be 1-64 characters, not blank, with no commas or control characters")


def parse_ts(name: str, value: object) -> datetime:
    """An ISO 8601 timestamp field, or a BadRequest naming it."""
    if not isinstance(value, str):
        raise invalid(name, f"{name} must be an ISO 8601 string")
    try:
        return parse_iso(value)
    except ValueError:
        raise invalid(name, f"{name} is not an ISO 8601 timestamp: {value[:40]!r}") from None
