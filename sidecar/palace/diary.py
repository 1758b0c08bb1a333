"""The per-agent diary: entries are heading sections of the day's daily note,
``## Diary (<agent>) <UTC time>``, so they are searched, put in the block and consolidated like
any other note. Headings of level 1-2 inside an entry are made level 3, so an entry can never
end early or forge another agent's entry.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from sidecar.index.files import read_tier_file

__all__ = ["DIARY_HEADING", "diary_entry", "read_diary"]

DIARY_HEADING = re.compile(
    r"^## Diary \((?P<agent>[A-Za-z0-9_.:@/-]{1,128})\) (?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\s*$"
)
_TOP_HEADING = re.compile(r"^(#{1,2})([ \t])")
_ANY_TOP = re.compile(r"^#{1,2}[ \t]")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def diary_entry(agent_id: str, content: str, now: datetime) -> tuple[str, str, str]:
    """(daily note path, markdown to append, its UTC time) for one entry written at ``now`` (UTC)."""
    at = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    lines, fenced = [], False
    for line in content.strip("\n").splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        lines.append(line if fenced else _TOP_HEADING.sub(r"###\2", line))
    return f"daily/{now:%Y-%m-%d}.md", f"## Diary ({agent_id}) {at}\n" + "\n".join(lines) + "\n", at


def read_diary(root: Path, agent_id: str, limit: int = 10) -> list[dict[str, Any]]:
    """The agent's newest ``limit`` entries, newest first, from the daily notes under ``root``."""
    try:
        names = sorted((p.name for p in (root / "daily").iterdir() if p.name.endswith(".md")), reverse=True)
    except OSError:
        return []
    out: list[dict[str, Any]] = []
    for name in names:
        data = read_tier_file(root, f"daily/{name}")
        if data is None:
            continue
        found = _entries(data.decode("utf-8", errors="replace"), agent_id, f"daily/{name}")
        out.extend(sorted(found, key=lambda e: e["at"], reverse=True))
        if len(out) >= limit:
            break
    return out[:limit]


def _entries(text: str, agent_id: str, path: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            fenced = not fenced
        match = None if fenced else DIARY_HEADING.match(line)
        if not fenced and _ANY_TOP.match(line):
            current = None
        if match and match["agent"] == agent_id:
            current = {"agent_id": agent_id, "at": match["at"], "path": path, "line_start": number, "body": []}
            entries.append(current)
        elif current is not None:
            current["body"].append(line)
            current["line_end"] = number
    for entry in entries:
        entry.setdefault("line_end", entry["line_start"])
        entry["content"] = "\n".join(entry.pop("body")).strip("\n")
    return entries
