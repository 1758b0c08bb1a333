"""What the injection scanner reads of an append: the new text and the tail of the file it joins.

The scanner judges the heading sections a write changes (``sidecar.scanner.scan.scan_write``). For
an append that is the file's last section, grown, and judged whole it costs the section's length
on every append: tens of ms for a daily note whose one section has grown to tens of KB. A payload
split over two appends is caught by reading the append together with the text it joins, which is
the last lines before it, not the whole section.

So the write thread keeps, for the files written last (``JudgedTails``, keyed by their bytes), the
verdict on their last section as the write that left them judged it. An append to such a file is
judged on a window: that section's heading path, its last ``TAIL_CHARS`` or more (from a sentence
start outside any code fence, so every rule's reach back from a match, a sentence, a quote, a
fence's lead-in, stays inside it) and the new text, as ``scan_write`` judges any append. The
window's verdict is combined with the old section's as the whole section's would be (a block
first; an old finding is still charged to the section, as a whole reading charges it), and
reported at the file's own section and lines. A file the window cannot tell about (a shell edit, a
sidecar just started, a replace, a tail with no sentence start outside a fence within
``MAX_TAIL_CHARS``, line breaks other than ``\\n``, two findings of one level in the section where
the rules' order picks) is judged whole, as before.
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

    from sidecar.scanner.scan import Finding, SectionFinding

    Judge = Callable[[str | None, str], SectionFinding | None]

__all__ = [
    "MAX_TAIL_CHARS",
    "TAIL_CHARS",
    "Judged",
    "JudgedTails",
    "Last",
    "decodable",
    "file_digest",
    "last_section",
    "other_break",
    "scan_append",
]

#: Characters of the joined section read before an append, at least: twice the scanner's reach back
#: from a sentence the window holds whole (a persona's span 500, the seam 400, a quote 300, a
#: sentence's lead-in 160; ``tests/write/test_scan_tail.py`` holds it to that). A long sentence is read
#: in pieces from its own start, which the window holds, as it starts at a sentence start.
TAIL_CHARS = 1024
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


@dataclass(frozen=True, slots=True)
class Last:
    """A text's last heading section: its character offset and 1-based first line, and the heading
    path in force in it (level, name), outermost first."""

    start: int
    line: int
    path: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class Judged:
    """A file's last section and the scanner's verdict on it (None: clean), as the write that left
    the file judged it."""

    last: Last
    #: None for a ``decodable`` section too: its next append is judged whole, without it.
    verdict: Finding | None
    #: The section holds text the scanner decodes as a whole (a ROT13, shift or reversal cue, an
    #: encoded run): it reads such text across the section, so the section is judged whole.
    decodable: bool = False


@dataclass(frozen=True, slots=True)
class _Kept:
    size: int  # the file's bytes, as judged
    digest: bytes
    judged: Judged


class JudgedTails:
    """The files (the ``kept`` written last) whose last section's verdict the write that left them
    knows: their size, digest, last section and its verdict. For one thread (the write thread)."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self._files: OrderedDict[tuple[str, str], _Kept] = OrderedDict()

    def known(self, key: tuple[str, str], data: bytes) -> tuple[Judged, bytes] | None:
        """What is known of the last section of the file ``key``, if the file is ``data`` still, and
        ``data``'s digest."""
        kept = self._files.get(key)
        if kept is None or kept.size != len(data) or file_digest(data) != kept.digest:
            return None
        return kept.judged, kept.digest

    def judged(self, key: tuple[str, str], data: bytes, judged: Judged | None, digest: bytes | None = None) -> None:
        """The file ``key`` is ``data`` now, its last section judged ``judged`` (None: unknown)."""
        self._files.pop(key, None)
        if judged is None:
            return
        self._files[key] = _Kept(len(data), digest or file_digest(data), judged)
        while len(self._files) > self.kept:
            self._files.popitem(last=False)


def scan_append(old: str, new: str, known: Judged, judge: Judge) -> tuple[SectionFinding | None, Judged | None] | None:
    """The verdict on an append of ``new[len(old):]`` to ``old``, whose last section is ``known``:
    ``judge`` (``scan_write``) on the window, combined with the old section's verdict as the whole
    section's would be, at the file's own section and lines; and what is then known of the file's
    last section (None: unknown). None when the window cannot tell (the caller judges the whole
    write): no window fits; the tail alone reads as a finding the whole section did not have (the
    cut took away what framed it); or the window and the old section each have a finding of one
    level in the grown section, where the scanner's rule order picks between them."""
    from sidecar.scanner.scan import SectionFinding, verdict

    last = known.last
    if known.decodable or not new.startswith(old) or len(old) - last.start <= TAIL_CHARS:
        return None
    line_from = old.rfind("\n") + 1  # old's last line: read again with what the append adds to it
    if line_from <= last.start:
        return None
    if other_break(new, last.start):
        return None
    fences = _fence_lines(old, last.start)
    cut = _cut(old, last.start, fences)
    if cut is None:
        return None
    synthetic = "".join(f"{'#' * level} {name}\n" for level, name in last.path)
    added = len(last.path)  # the synthetic heading lines
    window = synthetic + new[cut:]
    if decodable(window):  # the decoders read the whole section: the window cannot stand for it
        return None

    def real(line: int) -> int:
        return line - added - 1 + last.line + old.count("\n", last.start, cut)

    found = judge(synthetic + old[cut:], window)
    held = None  # a flag the tail holds that the section holds too (and its own verdict comes first)
    if found is not None:
        alone = judge(None, synthetic + old[cut:])
        if alone is not None and alone.finding != known.verdict:  # a cut's, unless the section holds it
            held = _held(old, last, fences, cut, synthetic=synthetic, tail=alone.finding, section=known.verdict)
            if held is None:
                return None
        found = replace(found, line_start=last.line if found.line_start <= added + 1 else real(found.line_start))
        found = replace(found, line_end=real(found.line_end))
    in_fence = bisect.bisect_left(fences, line_from) % 2 == 1
    opened, now = _walk(new, line_from, last.line + old.count("\n", last.start, line_from), last, in_fence)
    if opened is not None and opened.start <= len(old):  # the append starts a section: the old one is as it was
        return found, Judged(now, verdict(window[len(synthetic) + now.start - cut :]) if found is not None else None)
    grown_end = last.line + new.count("\n", last.start) - (1 if new.endswith("\n") else 0)
    grown_end = opened.line - 1 if opened is not None else grown_end
    old_verdict, window_found = known.verdict, found
    own = found is not None and found.line_start == last.line and found.finding in (old_verdict, held)
    if own:
        found = None  # the section's own finding, in the tail still: the window added none to it
    if found is None and old_verdict is None:
        return None, Judged(now, None)
    in_grown = found is not None and found.line_start == last.line
    if old_verdict is not None and found is not None and in_grown and found.finding.level == old_verdict.level:
        return None
    if old_verdict is not None and (found is None or old_verdict.level == "block" or found.finding.level == "flag"):
        found = SectionFinding(" > ".join(name for _, name in last.path), last.line, grown_end, old_verdict)
    if now.start != last.start:  # the append opened the file's last section: the window holds it whole
        said = verdict(window[len(synthetic) + now.start - cut :]) if window_found is not None else None
        return found, Judged(now, said)
    if window_found is None or own:  # the grown section is the last: the window added nothing to it
        return found, Judged(now, old_verdict)
    said = verdict(window[synthetic.rfind("\n", 0, len(synthetic) - 1) + 1 if synthetic else 0 :])
    if old_verdict is None or said is None:
        return found, Judged(now, said or old_verdict)
    if said.level != old_verdict.level:  # a block is the section's verdict whatever the rule order
        return found, Judged(now, said if said.level == "block" else old_verdict)
    return found, None


def decodable(text: str) -> bool:
    """Whether ``text`` holds what the scanner decodes across a whole section: a cue to undo ROT13,
    a letter shift or a reversal (the whole text is then read so), a Morse run, or a base64 or hex
    run (their decodings are read together)."""
    from sidecar.scanner.decode import base64_runs, decoded_transforms, hex_runs
    from sidecar.scanner.normalise import normalise

    views = normalise(text)
    if decoded_transforms(views.folded, views.cased):
        return True
    return bool(base64_runs(views.cased)) or bool(hex_runs(views.cased))


def other_break(text: str, start: int = 0) -> bool:
    """Whether ``text`` from ``start`` holds a line break ``\\n`` alone does not cut (one of
    ``_OTHER_BREAKS``, or ``\\r`` not before ``\\n``): a search for each character, which takes no
    time for one the text's kind cannot hold, where a pattern would walk every character (a third of
    a millisecond over 40 KB)."""
    if any(text.find(ch, start) >= 0 for ch in _OTHER_BREAKS):
        return True
    at = text.find("\r", start)
    while at >= 0:
        if not text.startswith("\n", at + 1):
            return True
        at = text.find("\r", at + 1)
    return False


_OTHER_BREAKS = _LINE_ENDS.replace("\r", "").replace("\n", "")


def _fence_lines(text: str, start: int) -> list[int]:
    """Where the fence lines of ``text`` from ``start`` begin (``_FENCE_LINE``); none without a fence's
    marks, found without the pattern's walk over every line."""
    if text.find("```", start) < 0 and text.find("~~~", start) < 0:
        return []
    return [m.start() for m in _FENCE_LINE.finditer(text, start)]


def last_section(text: str) -> Last:
    """The last heading section of ``text`` (read from its start)."""
    return _walk(text, 0, 1, Last(0, 1, ()), False)[1]


def _held(
    old: str, last: Last, fences: list[int], cut: int, *, synthetic: str, tail: Finding, section: Finding | None
) -> Finding | None:
    """``tail``, the tail's own finding, when the section holds it too: a flag, as the section's
    verdict is, and found again in a window cut ``TAIL_CHARS`` further back (so not made by the
    cut). The section's verdict then comes first in the rules' order. None when not."""
    from sidecar.scanner.scan import scan_all

    if section is None or section.level != "flag" or tail.level != "flag":
        return None
    earlier = _cut(old, last.start, fences, before=cut)
    if earlier is None or tail not in scan_all(synthetic + old[earlier:]):
        return None
    return tail


def _cut(old: str, start: int, fences: list[int], before: int | None = None) -> int | None:
    """Where the window starts in ``old``: a line start after the section's first line, at least
    ``TAIL_CHARS`` before the end (or before ``before``), outside a code fence and not within a
    fence's lead-in of one; where a sentence starts (after a blank line, before a list item, quote,
    table row or heading) when one is near. None when there is none within ``MAX_TAIL_CHARS``."""
    floor = max(start, len(old) - MAX_TAIL_CHARS)
    at = (len(old) if before is None else before) - TAIL_CHARS
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


def _walk(text: str, begin: int, line: int, last: Last, in_fence: bool) -> tuple[Last | None, Last]:
    """``last`` carried over the lines of ``text`` from ``begin`` (a line start, on 1-based ``line``,
    inside a fence or not), as ``split_sections`` reads them; and the first section it met (None:
    none)."""
    first: Last | None = None
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
            first = last if first is None else first
        offset += len(piece)
    return first, last


def file_digest(data: bytes) -> bytes:
    """A file's bytes, named: the digest the search's flag cache keeps its verdicts under too."""
    return hashlib.blake2b(data, digest_size=16).digest()
