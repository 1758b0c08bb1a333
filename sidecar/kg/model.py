"""The knowledge graph's values: a scope, entities, facts as stored and facts to add, and times.

Times are stored as one fixed ISO 8601 text form in UTC (``YYYY-MM-DDTHH:MM:SS.ffffffZ``), so text
comparison orders them; a bare day is midnight UTC of that day.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sidecar.errors import BadRequest

__all__ = ["SINCE_UNKNOWN", "Entity", "Fact", "NewFact", "Scope", "iso", "now_iso", "parse_when", "room_of"]

_FORMAT = "%m-%dT%H:%M:%S.%fZ"
#: The start of a fact whose beginning no one said ("we moved from A": A held until then, since when
#: is unknown): the earliest time the stored form can write.
SINCE_UNKNOWN = "0001-01-01T00:00:00.000000Z"


def iso(when: datetime) -> str:
    """The stored form. The year is written with four digits (``strftime("%Y")`` writes year 5 as
    ``5`` on some platforms, which would sort after every later year)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    when = when.astimezone(UTC)
    return f"{when.year:04d}-{when.strftime(_FORMAT)}"


def now_iso() -> str:
    return iso(datetime.now(UTC))


def parse_when(text: str, field: str = "valid_from") -> str:
    """A day (``2026-03-01``) or an ISO 8601 time, in the stored form; 400 ``invalid_<field>`` otherwise."""
    try:
        return iso(datetime.fromisoformat(text.strip()))
    except (ValueError, TypeError, OverflowError):
        raise BadRequest(f"{field} must be a date (YYYY-MM-DD) or an ISO 8601 time", code=f"invalid_{field}") from None


def room_of(source: str) -> str:
    """The room (topic) a fact's source stands in: a file's path without ``.md`` and line
    (``topics/db``), ``journal/<entry type>`` for a journal entry, else the source itself."""
    if source.startswith("file:"):
        path = source.split(":", 2)[-1].rsplit("#", 1)[0]
        return path.removesuffix(".md")
    return source


@dataclass(frozen=True, slots=True)
class Scope:
    """Whose graph: a workspace, and the agent's own facts (``crew_id`` "") or one crew's."""

    workspace_id: str
    crew_id: str = ""


@dataclass(frozen=True, slots=True)
class Entity:
    id: int
    name: str
    type: str
    aliases: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "type": self.type, "aliases": list(self.aliases)}


@dataclass(frozen=True, slots=True)
class Fact:
    """A stored fact: current while ``valid_to`` is None; never deleted, only given a ``valid_to``."""

    id: int
    subject: str
    subject_id: int
    predicate: str
    object: str
    object_id: int
    valid_from: str
    valid_to: str | None
    confidence: float
    source: str
    room: str
    text: str
    recorded_at: str
    invalidated_by: int | None = None

    def holds_at(self, when: str) -> bool:
        return self.valid_from <= when and (self.valid_to is None or self.valid_to > when)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "current": self.valid_to is None,
            "confidence": self.confidence,
            "source": self.source,
            "room": self.room,
            "text": self.text,
            "recorded_at": self.recorded_at,
            "invalidated_by": self.invalidated_by,
        }


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to add. ``functional``: a new value ends the subject's current one (for ``uses``, of
    the same type); ``replaces``: the value it ends, when the text names it."""

    subject: str
    predicate: str
    object: str
    valid_from: str
    source: str
    text: str = ""
    confidence: float = 1.0
    functional: bool = False
    replaces: str | None = None
    room: str | None = None

    @property
    def where(self) -> str:
        return self.room if self.room is not None else room_of(self.source)
