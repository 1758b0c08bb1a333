"""Split a markdown file into chunks by heading section and paragraph.

A chunk never straddles a heading, carries its heading path ("Deploy > Rollback") and the
1-based line span it came from, and holds at most ``max_chars`` characters of body (a single
line longer than that is cut at the limit). A section's chunks depend on its own lines and the
heading path it starts under only, and within a section paragraphs are packed greedily, so a text
that grew at its end is chunked again from near its end (``chunk_lines`` with ``resume``): from one
of its last section's last chunks where the packing starts afresh whatever is appended, else from
that section's start. The chunks before stay as they were; a day's log of bullets, one paragraph
cut by length, is chunked again from its last chunk or two instead of its whole section.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

__all__ = ["MAX_CHUNK_CHARS", "Chunk", "Inside", "Resume", "chunk_lines", "chunk_markdown", "section_lines"]

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
    """Where chunking a text that grew at its end can start again. ``line``: the 0-based index of a
    line; ``path``: the heading path in force at that line (before it, for a heading); ``chunks``:
    how many chunks the text before it made. Without ``inside``, ``line`` starts the text's last
    heading section (its heading, or the text's first line); with it, one of that section's chunks
    (``Inside``)."""

    line: int
    path: tuple[tuple[int, str], ...]
    chunks: int
    inside: Inside | None = None


@dataclass(frozen=True, slots=True)
class Inside:
    """A resume point at the first line of one of the last section's chunks, where the greedy packing
    starts afresh whatever the text grows by: the chunk starts a line, no fence opens in the section
    before it, and its first paragraph is closed, already longer than a chunk, or (``cut``) the rest
    of such a paragraph, cut again by length from that line as it was. ``heading_line``: the
    section's heading line; ``section``: the section's own start, kept for the next point."""

    heading_line: int
    cut: bool
    section: Resume


@dataclass(slots=True)
class _Para:
    lines: list[str]
    start: int  # 1-based line numbers of the first and last source line
    end: int
    cut: bool = False  # the rest of a paragraph cut by length: cut again, whatever its length

    def text(self) -> str:
        return "\n".join(self.lines)


def chunk_markdown(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """Chunk ``text``; empty sections yield nothing, headings alone still make a chunk."""
    return chunk_lines(text.splitlines(), max_chars)[0]


def chunk_lines(
    lines: list[str], max_chars: int = MAX_CHUNK_CHARS, *, resume: Resume | None = None
) -> tuple[list[Chunk], Resume]:
    """The chunks of ``lines`` and where chunking them again can start once they have grown at
    their end. With ``resume`` (such a point of a text these lines start with), only the chunks
    from that point on: those :func:`chunk_markdown` gives after the first ``resume.chunks``."""
    done = resume.chunks if resume is not None else 0
    chunks: list[Chunk] = []
    sections = _sections(lines, resume)
    last_start = 0  # where the last section's chunks start in ``chunks``
    for heading, paras, heading_line, *_ in sections:
        last_start = len(chunks)
        if not paras:
            if heading and heading_line:
                chunks.append(Chunk(heading, "", heading_line, heading_line))
            continue
        chunks.extend(_pack(heading, paras, max_chars))
    _, paras, heading_line, first, before, path, fenced = sections[-1]
    # Chunking began inside this same section: the point it began at holds as it did.
    held = resume if resume is not None and resume.inside is not None and len(sections) == 1 else None
    section = (
        held.inside.section
        if held is not None and held.inside is not None
        else Resume(first, before, done + last_start)
    )
    own = chunks[last_start:]
    if not fenced:
        for j in range(len(own) - 1, 0, -1):  # the last chunk first; the one before it is the section's
            at = own[j].line_start - 1
            if own[j - 1].line_end >= own[j].line_start:
                continue  # the chunk starts inside a line cut by length
            cut = at > 0 and at != heading_line and bool(lines[at - 1].strip())
            if not cut:
                para = next((p for p in paras if p.start == own[j].line_start), None)
                if para is None:
                    continue
                closed = para.end < len(lines)  # a blank line ends it: the last section has no heading after it
                if not closed and len(para.text()) <= max_chars:
                    continue  # it may grow past the limit and be cut: the chunk before could take its start
            return chunks, Resume(at, path, done + last_start + j, Inside(heading_line, cut, section))
    return chunks, held if held is not None else section


# (heading path, paragraphs, heading line, index of the section's first line, the heading path before
# it, the heading path in it, whether a fence line is in it)
_Section = tuple[str, list["_Para"], int, int, tuple[tuple[int, str], ...], tuple[tuple[int, str], ...], bool]


def _sections(lines: list[str], resume: Resume | None = None) -> list[_Section]:
    """Group lines from ``resume`` (the first line without it) into sections; fences are kept whole."""
    sections: list[_Section] = []
    start = resume.line if resume is not None else 0
    path = list(resume.path) if resume is not None else []
    inside = resume.inside if resume is not None else None
    paras: list[_Para] = []
    current: _Para | None = None
    heading_line = inside.heading_line if inside is not None else 0
    first, before = (inside.section.line, inside.section.path) if inside is not None else (start, tuple(path))
    cut = inside.cut if inside is not None else False  # the first paragraph goes on with a cut one
    in_fence = fenced = False
    for number, line in enumerate(lines[start:], start=start + 1):
        if _FENCE.match(line):
            in_fence, fenced = not in_fence, True
        match = None if in_fence else _HEADING.match(line)
        if match:
            if number - 1 > start:  # the section before this heading (none when resuming at it)
                sections.append((_join(path), paras, heading_line, first, before, tuple(path), fenced))
            first, before = number - 1, tuple(path)
            level = len(match.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, match.group(2).strip())]
            paras, current, heading_line, fenced, cut = [], None, number, False, False
        elif line.strip() or in_fence:
            if current is None:
                current = _Para([], number, number, cut)
                paras.append(current)
                cut = False
            current.lines.append(line)
            current.end = number
        else:
            current, cut = None, False
    sections.append((_join(path), paras, heading_line, first, before, tuple(path), fenced))
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
        if len(para.text()) <= max_chars and not para.cut:
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
