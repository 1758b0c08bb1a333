"""A hit's whole heading section, read from its file, for searches that ask for ``"context":
"section"``: an agent can answer from it without a second call to read the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.index.chunker import section_lines
from sidecar.index.files import read_tier_file
from sidecar.index.snippet import mark_terms

__all__ = ["SECTION_CAP_BYTES", "with_section"]

#: Longest section text a hit carries; a longer one is cut at a line and says where to read on.
SECTION_CAP_BYTES = 8192


def with_section(root: Path, hit: dict[str, Any], tokens: list[str], cap: int = SECTION_CAP_BYTES) -> dict[str, Any]:
    """``hit`` with its snippet replaced by the heading section it is in (``section`` says which
    lines, and whether the text was cut); the hit as it was when its file cannot be read."""
    data = read_tier_file(root, hit["path"])
    if data is None:
        return hit
    text = data.decode("utf-8", errors="replace")
    first, last = section_lines(text, int(hit["line_start"]))
    lines = text.splitlines()[first - 1 : last]
    body, whole = _capped(lines, cap)
    cut = whole < len(lines)
    if cut:
        body += f"\n[section cut at {cap} bytes: lines {first + whole}-{last} not shown; read them with memory_read]"
    section = {"line_start": first, "line_end": last, "cut": cut}
    highlights = [[a, b] for a, b in mark_terms(body, tokens)]
    return {**hit, "snippet": body, "highlights": highlights, "section": section}


def _capped(lines: list[str], cap: int) -> tuple[str, int]:
    """As many whole lines as fit in ``cap`` UTF-8 bytes, and how many whole lines that is; when not
    even the first fits, the part of it that does."""
    size, kept = 0, 0
    for line in lines:
        size += len(line.encode("utf-8")) + (1 if kept else 0)
        if size > cap:
            break
        kept += 1
    if kept == 0 and lines:
        return lines[0].encode("utf-8")[:cap].decode("utf-8", errors="ignore"), 0
    return "\n".join(lines[:kept]), kept
