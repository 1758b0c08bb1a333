"""A fact as the rules read it, and where a reading of a text's lines stopped: the types the graph
stores and resumes readings with, apart from the rules themselves (``extract``), whose patterns
compile when imported, at the first reading and not at the sidecar's start."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FUNCTIONAL", "Extracted", "Position"]

#: Predicates that hold one value per subject at a time: a new value ends the current one.
#: ``uses`` is functional per type of its object (a database replaces a database, not a cache).
FUNCTIONAL = frozenset({"uses", "owner", "located in", "is", "status", "role", "version", "lead", "works at"})


@dataclass(frozen=True, slots=True)
class Extracted:
    """One fact as read: names as written, the 1-based line, the date it starts (ISO day) if said."""

    subject: str
    predicate: str
    object: str
    line: int
    text: str
    valid_from: str | None = None
    replaces: str | None = None  # the value this one ends, named in the text ("from A to B")
    functional: bool = False


@dataclass(frozen=True, slots=True)
class Position:
    """Where a reading of a text's lines stopped: what the lines after it are read with. ``last`` is
    the last line read (a text that grew by appended lines has it unchanged); ``table`` the index of
    the first row of a table that runs to the last line (a next line may continue it), else -1."""

    lines: int
    last: str
    headings: tuple[tuple[int, str], ...]
    fenced: bool
    note_date: str | None
    table: int

    @property
    def resumes_at(self) -> int:
        """The index of the first line a reading on from here reads: the next line, or the first
        row of a table that may run on (its rows are read again, their facts not given again)."""
        return self.table if self.table >= 0 else self.lines
