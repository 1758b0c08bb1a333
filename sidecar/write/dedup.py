"""Is an append already in memory? Near-duplicate detection for writes and ``memory.check_duplicate``.

Content is compared line by line: each line of the new content that carries at least
``MIN_TOKENS`` words (headings, fences and short lines like "---" are not judged) must match a line
already in the tier with a Jaccard similarity of their word sets at or above the threshold. Only
when every judged line does is the content a duplicate, so an append that adds one new fact to
repeated ones is written. The lines compared against are the target file's and those of the
chunks the tier's own BM25 ranks first for the content, so a fact already in another file (an
older daily note, a topic) counts too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["LIST_MARKER", "MIN_TOKENS", "Candidate", "Duplicate", "find_duplicate", "jaccard", "tokens", "words"]

MIN_TOKENS = 3
_WORD = re.compile(r"\w+")
#: A markdown list marker (and a task box) at the start of a line.
LIST_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")


@dataclass(frozen=True, slots=True)
class Candidate:
    """Text already in the tier: ``path`` and the line number of the text's first line."""

    path: str
    line_start: int
    text: str


@dataclass(frozen=True, slots=True)
class Duplicate:
    """Where the content already is: the first matched line's file and line span of the matches,
    and the lowest similarity among the content's lines."""

    path: str
    line_start: int
    line_end: int
    similarity: float

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "similarity": round(self.similarity, 3),
        }


def words(line: str) -> list[str]:
    """The line's words in order, lowercased, without a list marker."""
    return [w.lower() for w in _WORD.findall(LIST_MARKER.sub("", line))]


def tokens(line: str) -> frozenset[str]:
    """The line's words as a set, for :func:`jaccard`."""
    return frozenset(words(line))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _judged(text: str) -> Iterable[tuple[int, frozenset[str]]]:
    """(line offset, words) of the lines worth judging: not headings, fences or short lines."""
    fenced = False
    for offset, line in enumerate(text.splitlines()):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or stripped.startswith("#"):
            continue
        words = tokens(stripped)
        if len(words) >= MIN_TOKENS:
            yield offset, words


def find_duplicate(content: str, candidates: Sequence[Candidate], threshold: float) -> Duplicate | None:
    """Where ``content`` already is in ``candidates``, or None when any of its judged lines is new
    (or it has none to judge)."""
    new = [words for _, words in _judged(content)]
    if not new:
        return None
    known = [(c.path, c.line_start + offset, words) for c in candidates for offset, words in _judged(c.text)]
    matches: list[tuple[str, int, float]] = []
    for words in new:
        best = max(((jaccard(words, w), path, line) for path, line, w in known), default=(0.0, "", 0))
        if best[0] < threshold:
            return None
        matches.append((best[1], best[2], best[0]))
    path = matches[0][0]
    lines = [line for p, line, _ in matches if p == path]
    return Duplicate(path, min(lines), max(lines), min(s for _, _, s in matches))
