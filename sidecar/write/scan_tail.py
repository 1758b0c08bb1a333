"""What the injection scanner reads of an append: the new text and the tail of the file it joins.

The scanner judges the heading sections a write changes (``sidecar.scanner.scan.scan_write``). For
an append that is the file's last section, grown, and judged whole it costs the section's length
on every append: tens of ms for a daily note whose one section has grown to tens of KB. A payload
split over two appends is caught by reading the append together with the text it joins, which is
the last lines before it, not the whole section.

So when the file's last section was judged clean at the write that left it (``CleanTails``, for
the files written last, keyed by their bytes), an append is judged on a window: that section's
heading path, its last ``TAIL_CHARS`` or more (from a line start, outside any code fence, so every
rule's reach back from a match, a sentence, a quote, a fence's lead-in, stays inside it) and the
new text, as ``scan_write`` judges any append; a finding is reported at the file's real section
and lines. A file the window does not fit (a section the last write did not leave judged clean:
a shell edit, a flagged section, a sidecar just started; a replace; a tail with no line start
outside a fence within ``MAX_TAIL_CHARS``; line breaks other than ``\\n``) is judged as before, and
the section an append joins is then read whole, old findings in it included.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidecar.scanner.scan import SectionFinding

    Judge = Callable[[str | None, str], SectionFinding | None]

__all__ = ["MAX_TAIL_CHARS", "TAIL_CHARS", "CleanTails", "Last", "last_section", "scan_append"]

#: Characters of the joined section read before an append, at least: over the scanner's reach back
#: from a match (a sentence read in windows of 600, a quote 300, a persona's span 500, the seam 400).
TAIL_CHARS = 2048
#: A window that would need more than this before the append (one long line, a long code fence
#: open at the cut) is not worth it: the section is judged whole.
MAX_TAIL_CHARS = 16384
_FENCE_REACH = 256  # a fence's lead-in (the prose before it) the scanner reads: kept inside the window

# Headings and fences as ``sidecar.scanner.sections`` reads them (lines as ``str.splitlines`` cuts them).
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
_LINE_ENDS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Where the scanner's sentences start for sure: after a blank line, before a list item, a quote, a
# table row or a heading (``sidecar.scanner.sentences``).
_SENTENCE_START = re.compile(r"\n(?:[ \t]*\n|(?=[ \t]*(?:[-*+>#|]|\d{1,3}[.)][ \t])))")
_OTHER_BREAK = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|\r(?!\n)")  # lines "\n" alone does not cut


@dataclass(frozen=True, slots=True)
class Last:
    """A text's last heading section: its character offset and 1-based first line, and the heading
    path in force in it (level, name), outermost first."""

    start: int
    line: int
    path: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class _Clean:
    size: int  # the file's bytes, as judged
    digest: bytes
    last: Last  # its last section, judged clean


class CleanTails:
    """The files (the ``kept`` written last) whose last section the scanner found clean at the
    write that left them: their size, digest and last section. For one thread (the write thread)."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self._files: OrderedDict[tuple[str, str], _Clean] = OrderedDict()

    def clean(self, key: tuple[str, str], data: bytes) -> Last | None:
        """The last section of the file ``key`` if it was judged clean and the file is ``data`` still."""
        known = self._files.get(key)
        if known is None or known.size != len(data) or _digest(data) != known.digest:
            return None
        return known.last

    def judged(self, key: tuple[str, str], data: bytes, last: Last | None) -> None:
        """The file ``key`` is ``data`` now, and its last section ``last`` was judged clean (None:
        not known clean, forgotten)."""
        self._files.pop(key, None)
        if last is None:
            return
        self._files[key] = _Clean(len(data), _digest(data), last)
        while len(self._files) > self.kept:
            self._files.popitem(last=False)


def scan_append(old: str, new: str, last: Last, judge: Judge) -> tuple[SectionFinding | None, Last | None] | None:
    """``judge`` (``scan_write``'s signature) on the window of an append of ``new[len(old):]`` to
    ``old``, whose last section ``last`` was judged clean: the finding at the file's own section and
    lines, and the new last section when the finding is None. None when no window fits (the caller
    judges the whole write, as it does when the tail alone has a finding, which the whole section,
    judged clean, did not: the cut took away what framed it)."""
    if not new.startswith(old) or len(old) - last.start <= TAIL_CHARS:
        return None
    line_from = old.rfind("\n") + 1  # old's last line: read again with what the append adds to it
    if line_from <= last.start:
        return None
    if _OTHER_BREAK.search(new, last.start) is not None:
        return None
    fences = [m.start() for m in _FENCE_LINE.finditer(old, last.start)]
    cut = _cut(old, last.start, fences)
    if cut is None:
        return None
    synthetic = "".join(f"{'#' * level} {name}\n" for level, name in last.path)
    added = len(last.path)  # the synthetic heading lines
    cut_line = last.line + old.count("\n", last.start, cut)
    found = judge(synthetic + old[cut:], synthetic + new[cut:])
    if found is not None and judge(None, synthetic + old[cut:]) is not None:
        return None  # the tail alone reads as a finding cut from its context: judge the whole section
    if found is not None:
        first = found.line_start - added - 1 + cut_line
        line_start = last.line if found.line_start <= added + 1 else first
        return replace(found, line_start=line_start, line_end=found.line_end - added - 1 + cut_line), None
    in_fence = bisect.bisect_left(fences, line_from) % 2 == 1
    return None, _walk(new, line_from, last.line + old.count("\n", last.start, line_from), last, in_fence)


def last_section(text: str) -> Last:
    """The last heading section of ``text`` (read from its start)."""
    return _walk(text, 0, 1, Last(0, 1, ()), False)


def _cut(old: str, start: int, fences: list[int]) -> int | None:
    """Where the window starts in ``old``: a line start after the section's first line, at least
    ``TAIL_CHARS`` before the end, outside a code fence and not within a fence's lead-in of one;
    where a sentence starts (after a blank line, before a list item, quote, table row or heading)
    when one is near. None when there is none within ``MAX_TAIL_CHARS``."""
    floor = max(start, len(old) - MAX_TAIL_CHARS)
    at = len(old) - TAIL_CHARS
    while at > floor:
        bounds = [m.end() for m in _SENTENCE_START.finditer(old, max(floor, at - 2048), at)]
        cut = bounds[-1] if bounds else old.rfind("\n", floor, at) + 1
        if cut <= floor or cut <= start:
            return None
        index = bisect.bisect_right(fences, cut)  # fence lines before the cut (a fence line at it included)
        near = bisect.bisect_left(fences, cut + _FENCE_REACH)
        if index % 2 == 0 and near == index and not (index and fences[index - 1] == cut):
            return cut
        opener = fences[index - 1] if index % 2 == 1 else fences[min(index, len(fences) - 1)]
        at = min(cut, opener) - _FENCE_REACH
    return None


def _walk(text: str, begin: int, line: int, last: Last, in_fence: bool) -> Last:
    """``last`` carried over the lines of ``text`` from ``begin`` (a line start, on 1-based ``line``,
    inside a fence or not), as ``split_sections`` reads them."""
    path = list(last.path)
    offset = begin
    for number, piece in enumerate(text[begin:].splitlines(keepends=True), start=line):
        bare = piece.rstrip(_LINE_ENDS)
        if _FENCE.match(bare):
            in_fence = not in_fence
        match = None if in_fence else _HEADING.match(bare)
        if match:
            level = len(match.group(1))
            path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, match.group(2).strip())]
            last = Last(offset, number, tuple(path))
        offset += len(piece)
    return last


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()
