"""Near-duplicate lookup for the ingest: which earlier text has nearly the same words (Jaccard of
word sets at or above a threshold), without comparing every pair.

It is a prefix-filter similarity join: with every word set ordered one fixed way (rarest word
first), two sets whose
Jaccard is at least ``t`` share a word among the first ``|x| - ceil(t·|x|) + 1`` words of each,
and their sizes differ by at most a factor of ``t``. Only the sets sharing such a prefix word are
compared, so an ingest of a thousand turns against thousands of memories compares a handful of
pairs per turn instead of every one.

Whether a near twin says the same thing is a second question: it does when the new text adds no
content word the twin lacks. "The auth module is owned by Marcus" after "... by Priya" adds
``marcus``: a changed value, an update and not a duplicate.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Generic, TypeVar

__all__ = ["STOPWORDS", "NearIndex", "adds_words"]

_STOPWORDS = (
    "a an the is are was were be been being am of to in on at for by with from and or but so as it its "
    "this that these those there here i we you he she they me us our your my his her their them do does "
    "did has have had will would shall should can could may might must not no yes just also very really "
    "now then than too"
)
STOPWORDS = frozenset(_STOPWORDS.split())


def adds_words(new: frozenset[str], old: frozenset[str]) -> bool:
    """Whether ``new`` holds a content word (not a stopword) that ``old`` lacks."""
    return any(w not in STOPWORDS for w in new - old)


K = TypeVar("K", bound=Hashable)


class NearIndex(Generic[K]):
    """Word sets under keys; ``nearest`` finds the most similar one at or above ``threshold``."""

    def __init__(self, threshold: float, frequency: Mapping[str, int] | None = None) -> None:
        self.threshold = threshold
        #: How many of the sets a word is in: prefixes are taken rarest first, so they are short
        #: lists (a word absent from it counts as the rarest).
        self._frequency = frequency or {}
        self._sets: dict[K, frozenset[str]] = {}
        self._texts: dict[K, str] = {}
        self._postings: dict[str, list[K]] = {}
        #: Sets kept per prefix word (the newest): a word so common that it heads more prefixes than
        #: this is a poor filter, and comparing every set it heads would make a lookup linear.
        self.keep = 64

    def _prefix(self, words: frozenset[str]) -> list[str]:
        frequency = self._frequency
        ordered = sorted(words, key=lambda w: (frequency.get(w, 0), w))
        keep = len(ordered) - math.ceil(self.threshold * len(ordered) - 1e-9) + 1
        return ordered[: max(1, keep)]

    def add(self, key: K, words: frozenset[str], text: str = "") -> None:
        if not words:
            return
        self._sets[key] = words
        self._texts[key] = text
        for word in self._prefix(words):
            held = self._postings.setdefault(word, [])
            held.append(key)
            if len(held) > self.keep:
                del held[0]

    def words(self, key: K) -> frozenset[str]:
        return self._sets[key]

    def text(self, key: K) -> str:
        return self._texts[key]

    def nearest(self, words: frozenset[str]) -> tuple[K, float] | None:
        """The key of the most similar set (the earliest added on a tie) and its similarity, or None."""
        if not words:
            return None
        size = len(words)
        best: tuple[K, float] | None = None
        seen: set[K] = set()
        for word in self._prefix(words):
            for key in self._postings.get(word, ()):
                if key in seen:
                    continue
                seen.add(key)
                other = self._sets[key]
                if not self.threshold * size <= len(other) <= size / self.threshold:
                    continue
                similarity = len(words & other) / len(words | other)
                if similarity >= self.threshold and (best is None or similarity > best[1]):
                    best = (key, similarity)
        return best


class EndsIndex(Generic[K]):
    """Texts by their first and by their last ``WORDS`` words: where a restatement with a swapped
    value ("... is owned by Priya" / "... by Marcus") is found. Each end keeps its ``KEEP`` newest
    texts, so a lookup costs the same however much is indexed."""

    WORDS = 3
    KEEP = 64

    def __init__(self) -> None:
        self._ends: dict[tuple[str, ...], list[K]] = {}

    def _keys(self, words: list[str]) -> list[tuple[str, ...]]:
        if len(words) < self.WORDS + 1:
            return []
        return [("^", *words[: self.WORDS]), ("$", *words[-self.WORDS :])]

    def add(self, key: K, words: list[str]) -> None:
        for end in self._keys(words):
            held = self._ends.setdefault(end, [])
            held.append(key)
            if len(held) > self.KEEP:
                del held[0]

    def candidates(self, words: list[str]) -> list[K]:
        """The texts sharing this one's first or last words, newest first."""
        found: dict[K, None] = {}
        for end in self._keys(words):
            found.update(dict.fromkeys(reversed(self._ends.get(end, []))))
        return list(found)
