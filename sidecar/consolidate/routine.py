"""Routine lines: the ones a week's notes write over and over in one mould with other values.

An agent's log repeats a handful of moulds dozens of times a week: "Merge request 4411 for
billing needs another look", "team sync: 12 action items", "The kelp logger battery is at 40
percent". Such a line reads like a statement (no past-tense verb opens it), yet it is the week's
log, not a fact a later search asks for, and in a summary it crowds the facts out of their budget.

A line's frame is its ``FRAME_WORDS`` words (stop words and numbers aside) that the most lines
of its week hold. A line is routine when ``ROUTINE_LINES`` or more lines of the week hold every
word of its frame: "merge request" in every merge-request line. A fact said a few times a week
never is: its own words are rare, and its frame is one of them with a word of the day. A week of
few lines has no routine at all. Counting the pairs of a line's frequent words keeps it linear in
the week's lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import TypeVar

from sidecar.consolidate.promote import COMMENT
from sidecar.index.query import STOPWORDS
from sidecar.write.dedup import LIST_MARKER

__all__ = ["FRAME_WORDS", "ROUTINE_LINES", "routine", "routine_by"]

FRAME_WORDS = 3
ROUTINE_LINES = 8
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
K = TypeVar("K", bound=Hashable)


def _words(text: str) -> list[str]:
    """A line's words without digits, lowercased, stop words aside, in order."""
    text = LIST_MARKER.sub("", COMMENT.sub(" ", text))
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1]


def routine(texts: Sequence[str]) -> list[bool]:
    """For each of one week's lines, whether it is routine (module docstring)."""
    word_lists = [list(dict.fromkeys(_words(t))) for t in texts]
    df = Counter(w for words in word_lists for w in words)
    frequent = [[w for w in words if df[w] >= ROUTINE_LINES] for words in word_lists]
    together = Counter(frozenset(p) for words in frequent for p in combinations(sorted(words), FRAME_WORDS))
    out = []
    for words in frequent:
        top = sorted(words, key=lambda w: (-df[w], w))[:FRAME_WORDS]
        out.append(len(top) == FRAME_WORDS and together[frozenset(top)] >= ROUTINE_LINES)
    return out


def routine_by(items: Sequence[tuple[K, str]]) -> list[bool]:
    """``routine`` for lines of many weeks at once: (week key, text) pairs, each week apart."""
    weeks: dict[K, list[int]] = {}
    for n, (key, _) in enumerate(items):
        weeks.setdefault(key, []).append(n)
    out = [False] * len(items)
    for members in weeks.values():
        for n, flag in zip(members, routine([items[m][1] for m in members]), strict=True):
            out[n] = flag
    return out
