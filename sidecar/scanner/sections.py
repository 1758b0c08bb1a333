"""Split a markdown file into heading sections, the unit the scanner judges and the block withholds.

A section runs from a heading line (any level) to the line before the next heading; text before
the first heading is a section with an empty heading. Headings, fences and line numbers follow
``sidecar.index.chunker`` exactly (same heading pattern, fenced blocks kept whole, lines as
``str.splitlines`` counts them), so every chunk lies inside one section with its heading path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sidecar.scanner.deferred import deferred

__all__ = ["Section", "code_fence", "split_sections"]

_HEADING = deferred(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = deferred(r"^[ \t]*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Section:
    """A heading section: its heading path ("Deploy > Rollback"), 1-based inclusive line span and
    its character span in the text (the heading line included)."""

    heading: str
    line_start: int
    line_end: int
    start: int
    end: int


def split_sections(text: str) -> list[Section]:
    """The file's sections in order; an empty file has none."""
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    in_fence = False
    offset = 0
    start, line_start = 0, 1
    number = 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        bare = line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        if _FENCE.match(bare):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(bare)
        if match:
            if number > 1:
                sections.append(Section(_join(path), line_start, number - 1, start, offset))
            level = len(match.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, match.group(2).strip())]
            start, line_start = offset, number
        offset += len(line)
    if number:
        sections.append(Section(_join(path), line_start, number, start, offset))
    return sections


def _join(path: list[tuple[int, str]]) -> str:
    return " > ".join(name for _, name in path)


def code_fence(*texts: str) -> str:
    """A backtick fence longer than any backtick run in ``texts`` (at least three), so text fenced
    with it as data cannot close the fence early."""
    longest = max((len(run) for text in texts for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)
