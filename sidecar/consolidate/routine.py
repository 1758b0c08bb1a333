"""Routine lines: the ones a week's notes write over and over in one mould with other values.

An agent's log repeats a handful of moulds dozens of times a week: "Merge request 4411 for
billing needs another look", "team sync: 12 action items", "Disk use on nas-2 is 81 percent". Such a line reads like a statement (no past-tense verb opens it), yet it is the week's
log, not a fact a later search asks for, and in a summary it crowds the facts out of their budget.

A line's frame is its ``FRAME_WORDS`` words (stop words and numbers aside) that the most lines
of its week hold. A line is routine when ``ROUTINE_LINES`` or more lines of the week, from
``ROUTINE_DAYS`` notes or more, hold every word of its frame: "merge request needs" in every
merge-request line. A fact said a few times a week never is: its own words are rare, and its
frame is one of them with words of the day. Thirty thresholds listed in one note are a table,
not a log; a week of few lines has no routine at all. Counting the word triples of a line's
frequent words keeps it linear in the week's lines.
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

__all__ = ["FRAME_WORDS", "ROUTINE_DAYS", "ROUTINE_LINES", "routine", "routine_by"]

FRAME_WORDS = 3
ROUTINE_LINES = 8
ROUTINE_DAYS = 3
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
K = TypeVar("K", bound=Hashable)


def _words(text: str) -> list[str]:
    """A line's words without digits, lowercased, stop words aside, in order."""
    text = LIST_MARKER.sub("", COMMENT.sub(" ", text))
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS and len(w) > 1]


def routine(lines: Sequence[tuple[str, str]]) -> list[bool]:
    """For each of one week's lines, (source, text) pairs, whether it is routine (module docstring)."""
    word_lists = [list(dict.fromkeys(_words(text))) for _, text in lines]
    df = Counter(w for words in word_lists for w in words)
    frequent = [[w for w in words if df[w] >= ROUTINE_LINES] for words in word_lists]
    together: Counter[frozenset[str]] = Counter()
    days: dict[frozenset[str], set[str]] = {}
    for (source, _), words in zip(lines, frequent, strict=True):
        for triple in combinations(sorted(words), FRAME_WORDS):
            key = frozenset(triple)
            together[key] += 1
            if len(days.setdefault(key, set())) < ROUTINE_DAYS:
                days[key].add(source)
    out = []
    for words in frequent:
        top = frozenset(sorted(words, key=lambda w: (-df[w], w))[:FRAME_WORDS])
        out.append(len(top) == FRAME_WORDS and together[top] >= ROUTINE_LINES and len(days[top]) >= ROUTINE_DAYS)
    return out


def routine_by(items: Sequence[tuple[K, str, str]]) -> list[bool]:
    """``routine`` for lines of many weeks at once: (week key, source, text), each week apart."""
    weeks: dict[K, list[int]] = {}
    for n, (key, _, _) in enumerate(items):
        weeks.setdefault(key, []).append(n)
    out = [False] * len(items)
    for members in weeks.values():
        for n, flag in zip(members, routine([items[m][1:] for m in members]), strict=True):
            out[n] = flag
    return out
