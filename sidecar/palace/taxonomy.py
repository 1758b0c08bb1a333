"""Wings and rooms: a wing is a tier (``agent``, ``crew``) or the journal, a room is the folder a
file lives in (``daily``, ``topics``, ``daily/summaries`` ...) or, for the journal, a memory type.
Files at a tier's root (``AGENT.md``, ``pins.md``, ``identity.md``) are the ``evergreen`` room.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sidecar.index.chunker import chunk_markdown
from sidecar.index.files import read_tier_file, scan_tier

__all__ = ["EVERGREEN_ROOM", "JOURNAL_WING", "FileEntry", "list_files", "room_of", "taxonomy"]

EVERGREEN_ROOM = "evergreen"
JOURNAL_WING = "journal"


def room_of(path: str) -> str:
    """The room of a tier path: its folder, or ``evergreen`` at the tier's root."""
    folder, _, _ = path.rpartition("/")
    return folder or EVERGREEN_ROOM


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One memory file: where it sits in the palace, its size, chunks and last change."""

    wing: str
    room: str
    path: str
    bytes: int
    chunks: int
    modified: str  # ISO 8601, UTC

    def to_json(self) -> dict[str, object]:
        return {
            "wing": self.wing,
            "room": self.room,
            "path": self.path,
            "bytes": self.bytes,
            "chunks": self.chunks,
            "modified": self.modified,
        }


def list_files(roots: Mapping[str, Path], *, wing: str | None = None, room: str | None = None) -> list[FileEntry]:
    """Every tier file of the wings in ``roots`` (tier name -> dir), by wing then path; ``wing`` and
    ``room`` narrow it (a room also takes its subfolders: ``daily`` holds ``daily/summaries``)."""
    out = []
    for tier, root in roots.items():
        if wing is not None and tier != wing:
            continue
        for rel, stat in sorted(scan_tier(root).items()):
            where = room_of(rel)
            if room is not None and where != room and not where.startswith(room + "/"):
                continue
            data = read_tier_file(root, rel)
            chunks = len(chunk_markdown(data.decode("utf-8", errors="replace"))) if data else 0
            modified = datetime.fromtimestamp(stat.mtime_ns / 1e9, UTC).isoformat(timespec="seconds")
            out.append(FileEntry(tier, where, rel, stat.size, chunks, modified.replace("+00:00", "Z")))
    return out


def taxonomy(files: Iterable[FileEntry], journal_types: Mapping[str, int] | None = None) -> dict[str, object]:
    """Wings -> rooms with their counts: files, chunks and bytes for a tier's rooms, live memories
    for the journal's (one room per memory type)."""
    wings: dict[str, dict[str, dict[str, int]]] = {}
    for entry in files:
        room = wings.setdefault(entry.wing, {}).setdefault(entry.room, Counter())
        room["files"] += 1
        room["chunks"] += entry.chunks
        room["bytes"] += entry.bytes
    out: list[dict[str, object]] = []
    for wing, rooms in wings.items():
        listed = [{"room": name, **dict(counts)} for name, counts in sorted(rooms.items())]
        out.append({"wing": wing, "files": sum(r["files"] for r in rooms.values()), "rooms": listed})
    if journal_types:
        listed = [{"room": t, "memories": n} for t, n in sorted(journal_types.items())]
        out.append({"wing": JOURNAL_WING, "memories": sum(journal_types.values()), "rooms": listed})
    return {"wings": out}
