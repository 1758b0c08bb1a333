"""Is an append already in memory? Near-duplicate detection for writes and ``memory.check_duplicate``.

Content is compared line by line: each line of the new content that carries at least
``MIN_TOKENS`` words (headings, fences and short lines like "---" are not judged) must match a line
already in the tier with a Jaccard similarity of their word sets at or above the threshold. Only
when every judged line does is the content a duplicate, so an append that adds one new fact to
repeated ones is written. The lines compared against are the target file's and those of the
chunks the tier's own BM25 ranks first for the content, so a fact already in another file (an
older daily note, a topic) counts too. The target file's lines are judged once (``FileLines``): an
append to a file that only grew since the last one judges only the lines that one added.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "LIST_MARKER",
    "MIN_TOKENS",
    "Candidate",
    "Duplicate",
    "FileLines",
    "find_duplicate",
    "is_judged",
    "jaccard",
    "judged_lines",
    "tier_query",
    "tokens",
    "words",
]

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
    #: The text's judged lines (offset, words), when they are known already (``FileLines``).
    judged: Sequence[tuple[int, frozenset[str]]] | None = None


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


def _judged(text: str, state: list[Any] | None = None) -> Iterable[tuple[int, frozenset[str]]]:
    """(line offset, words) of the lines worth judging: not headings, fences or short lines.
    ``state`` ([line offset, in a code fence]) is where to start, and is left where the text ends."""
    state = state if state is not None else [0, False]
    first, fenced = state
    for offset, line in enumerate(text.splitlines(), first):
        state[0] = offset + 1
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = state[1] = not fenced
            continue
        if fenced or stripped.startswith("#"):
            continue
        words = tokens(stripped)
        if len(words) >= MIN_TOKENS:
            yield offset, words


def judged_lines(content: str) -> list[frozenset[str]]:
    """The words of each line of ``content`` worth judging, in order."""
    return [words for _, words in _judged(content)]


def tier_query(lines: Sequence[frozenset[str]], counts: dict[str, int], threshold: float, rarest: int) -> list[str]:
    """The words to search the tier with for lines already in it (``counts``: each word's postings
    in the tier, 0 where no chunk holds it): each line's ``rarest`` words the tier holds, rarest
    first. A line with so many words no chunk holds that it cannot reach ``threshold`` against any
    line of the tier adds none (a duplicate of it can only be in its own file, read apart), and the
    common words add nothing a duplicate is found by: a line at least ``threshold`` like it holds
    nearly all of its rare ones. Searching those alone scores a few postings, not every chunk's."""
    picked: dict[str, None] = {}
    for words in lines:
        held = sorted((counts[w], w) for w in words if counts[w] > 0)
        if len(held) / len(words) < threshold:
            continue
        picked.update(dict.fromkeys(w for _, w in held[:rarest]))
    return list(picked)


def is_judged(content: str) -> bool:
    """Whether ``content`` has a line to judge: one that is not, no content is a duplicate."""
    return next(iter(_judged(content)), None) is not None


class _Lines(NamedTuple):
    size: int  # bytes judged
    digest: str  # theirs
    ends: tuple[int, bool]  # where they end: (the next line's offset, in a code fence)
    judged: list[tuple[int, frozenset[str]]]


class FileLines:
    """The judged lines of the files appended to lately (the ``kept`` newest), for one thread: a
    file that only grew since its lines were judged (its bytes then start its bytes now, and end a
    line) has only its new lines judged."""

    def __init__(self, kept: int = 64) -> None:
        self.kept = kept
        self.lines_judged = 0  # lines read to judge them, in all
        self._files: OrderedDict[tuple[str, str], _Lines] = OrderedDict()

    def judged(self, key: tuple[str, str], data: bytes) -> list[tuple[int, frozenset[str]]]:
        """The judged lines of the file ``key`` whose bytes are ``data`` now."""
        known = self._files.pop(key, None)
        if (
            known is not None
            and len(data) >= known.size
            and (known.size == 0 or data[known.size - 1 : known.size] == b"\n")
            and (hasher := hashlib.blake2b(data[: known.size], digest_size=16)).hexdigest() == known.digest
        ):
            lines, start, state = list(known.judged), known.size, list(known.ends)
        else:
            lines, start, state, hasher = [], 0, [0, False], hashlib.blake2b(digest_size=16)
        before = state[0]
        lines += _judged(data[start:].decode("utf-8", errors="replace"), state)
        self.lines_judged += state[0] - before
        hasher.update(data[start:])  # the whole file's digest: its judged prefix is hashed once
        self._files[key] = _Lines(len(data), hasher.hexdigest(), (int(state[0]), bool(state[1])), lines)
        while len(self._files) > self.kept:
            self._files.popitem(last=False)
        return lines


def _some_held(words: frozenset[str], threshold: float) -> frozenset[str] | None:
    """Words of ``words`` of which every line at least ``threshold`` like it holds one: a line
    whose Jaccard similarity to ``words`` reaches the threshold holds at least that share of
    ``words`` (the union is no smaller than ``words``), so it misses at most ``len(words) - need``
    of them, and any one more than that includes a word it holds. The longest words, as the
    likeliest to be rare. ``need`` is rounded down by a margin, so the float similarity a line is
    judged by never passes a line this leaves out. None for a threshold any line reaches."""
    if threshold <= 0:
        return None
    need = max(1, math.ceil(threshold * len(words) - 1e-9))
    ordered = sorted(words, key=lambda w: (-len(w), w))
    return frozenset(ordered[: len(words) - need + 1])


def find_duplicate(content: str, candidates: Sequence[Candidate], threshold: float) -> Duplicate | None:
    """Where ``content`` already is in ``candidates``, or None when any of its judged lines is new
    (or it has none to judge)."""
    new = [words for _, words in _judged(content)]
    if not new:
        return None
    known = [(c.path, c.line_start, c.judged if c.judged is not None else list(_judged(c.text))) for c in candidates]
    matches: list[tuple[str, int, float]] = []
    for words in new:
        # A line that cannot reach the threshold is not compared: two sets' Jaccard similarity is at
        # most the smaller's size over the larger's (and that float bounds the computed one), nor one
        # holding none of ``some`` (``_some_held``), so the best of the lines left is the best of
        # all whenever it reaches the threshold.
        size, some = len(words), _some_held(words, threshold)
        best = max(
            (
                (jaccard(words, w), path, start + offset)
                for path, start, lines in known
                for offset, w in lines
                if (some is None or not some.isdisjoint(w))
                and min(size, len(w)) / max(size, len(w)) >= threshold  # judged lines hold MIN_TOKENS words or more
            ),
            default=(0.0, "", 0),
        )
        if best[0] < threshold:
            return None
        matches.append((best[1], best[2], best[0]))
    path = matches[0][0]
    lines = [line for p, line, _ in matches if p == path]
    return Duplicate(path, min(lines), max(lines), min(s for _, _, s in matches))
