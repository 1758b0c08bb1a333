"""Split a markdown file into chunks by heading section and paragraph.

A chunk never straddles a heading, carries its heading path ("Deploy > Rollback") and the
1-based line span it came from, and holds at most ``max_chars`` characters of body (a single
line longer than that is cut at the limit). A section's chunks depend on its own lines and the
heading path it starts under only, so a text that grew at its end is chunked again from its last
section on (``chunk_lines`` with ``resume``): the chunks before that section stay as they were.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["MAX_CHUNK_CHARS", "Chunk", "Resume", "chunk_lines", "chunk_markdown", "section_lines"]

MAX_CHUNK_CHARS = 1000
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: str
    body: str
    line_start: int
    line_end: int

    @property
    def hash(self) -> str:
        return hashlib.blake2b(f"{self.heading}\x00{self.body}".encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a chunked text's last heading section starts: ``line``, the 0-based index of its first
    line (its heading, or the text's first line); ``path``, the heading path in force before that
    line; ``chunks``, how many chunks the sections before it made."""

    line: int
    path: tuple[tuple[int, str], ...]
    chunks: int


@dataclass(slots=True)
class _Para:
    lines: list[str]
    start: int  # 1-based line numbers of the first and last source line
    end: int

    def text(self) -> str:
        return "\n".join(self.lines)


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Chunk ``text``; empty sections yield nothing, headings alone still make a chunk."""
    return chunk_lines(text.splitlines(), max_chars)[0]


def chunk_lines(
    lines: list[str], max_chars: int = MAX_CHUNK_CHARS, *, resume: Resume | None = None
) -> tuple[list[Chunk], Resume]:
    """The chunks of ``lines`` and where their last section starts. With ``resume`` (where the last
    section of text these lines start with started), only the chunks from that section on: those
    :func:`chunk_markdown` gives after the first ``resume.chunks``."""
    start, path = (resume.line, list(resume.path)) if resume is not None else (0, [])
    chunks: list[Chunk] = []
    last = Resume(start, tuple(path), 0)
    for heading, paras, heading_line, first, before in _sections(lines, start, path):
        last = Resume(first, before, len(chunks))
        if not paras:
            if heading and heading_line:
                chunks.append(Chunk(heading, "", heading_line, heading_line))
            continue
        chunks.extend(_pack(heading, paras, max_chars))
    done = resume.chunks if resume is not None else 0
    return chunks, Resume(last.line, last.path, done + last.chunks)


_Section = tuple[str, list["_Para"], int, int, tuple[tuple[int, str], ...]]


def _sections(lines: list[str], start: int = 0, path: list[tuple[int, str]] | None = None) -> list[_Section]:
    """Group lines from index ``start`` (a heading, or the first line) under heading ``path`` into
    (heading path, paragraphs, heading line, index of the section's first line, the heading path
    before it) sections; fences are kept whole."""
    sections: list[_Section] = []
    path = list(path or [])
    paras: list[_Para] = []
    current: _Para | None = None
    heading_line = 0
    first, before = start, tuple(path)
    in_fence = False
    for number, line in enumerate(lines[start:], start=start + 1):
        if _FENCE.match(line):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(line)
        if match:
            if number - 1 > start:  # the section before this heading (none when resuming at it)
                sections.append((_join(path), paras, heading_line, first, before))
            first, before = number - 1, tuple(path)
            level = len(match.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, match.group(2).strip())]
            paras, current, heading_line = [], None, number
        elif line.strip() or in_fence:
            if current is None:
                current = _Para([], number, number)
                paras.append(current)
            current.lines.append(line)
            current.end = number
        else:
            current = None
    sections.append((_join(path), paras, heading_line, first, before))
    return sections


def _join(path: list[tuple[int, str]]) -> str:
    return " > ".join(name for _, name in path)


def _pack(heading: str, paras: list[_Para], max_chars: int) -> list[Chunk]:
    """Greedily pack consecutive paragraphs into chunks of at most ``max_chars``."""
    out: list[Chunk] = []
    buf: list[_Para] = []
    size = 0
    for para in _split_long(paras, max_chars):
        extra = len(para.text()) + (2 if buf else 0)
        if buf and size + extra > max_chars:
            out.append(_emit(heading, buf))
            buf, size = [], 0
            extra = len(para.text())
        buf.append(para)
        size += extra
    if buf:
        out.append(_emit(heading, buf))
    return out


def _emit(heading: str, buf: list[_Para]) -> Chunk:
    return Chunk(heading, "\n\n".join(p.text() for p in buf), buf[0].start, buf[-1].end)


def _split_long(paras: list[_Para], max_chars: int) -> list[_Para]:
    """Split paragraphs over the limit by line, and lines over the limit by characters."""
    out: list[_Para] = []
    for para in paras:
        if len(para.text()) <= max_chars:
            out.append(para)
            continue
        current = _Para([], para.start, para.start)
        size = 0
        for offset, line in enumerate(para.lines):
            number = para.start + offset
            pieces = [line[i : i + max_chars] for i in range(0, len(line), max_chars)] or [""]
            for piece in pieces:
                if current.lines and size + len(piece) + 1 > max_chars:
                    out.append(current)
                    current, size = _Para([], number, number), 0
                current.lines.append(piece)
                current.end = number
                size += len(piece) + 1
        if current.lines:
            out.append(current)
    return out


def section_lines(text: str, line: int) -> tuple[int, int]:
    """The 1-based, inclusive line span of the heading section holding ``line``: from its heading
    (or the file's first line) to the line before the next heading, fences kept whole as the
    chunker keeps them."""
    start, end, in_fence = 1, 0, False
    for number, row in enumerate(text.splitlines(), start=1):
        if _FENCE.match(row):
            in_fence = not in_fence
        if not in_fence and _HEADING.match(row):
            if number > line:
                return start, number - 1
            start = number
        end = number
    return start, max(end, start)
