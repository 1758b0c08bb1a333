"""Extractive summaries: whole bullets and sentences taken from a cluster of memory items, chosen
without a model, so a summary is always at hand and the same cluster always gives the same one.

Each item is cut into units: a bullet with its continuation lines, one sentence of a paragraph, or
a fenced block kept whole. Headings, rules and blank lines are structure, not content, and never
become units. Units that say the same thing are merged first: their word sets (bullet markers,
case and stop words aside) have a Jaccard of at least ``DUPLICATE_JACCARD`` and no differing word
holds a digit, so "port 8080" and "port 8081" stay apart. The fullest unit of a group is kept and
credits every item it appeared in, standing where the first of them stood; the others are listed
as dropped duplicates.

Units are then chosen greedily: a unit scores the cluster-wide frequency of its distinct words,
averaged over them, a word already covered by a chosen unit counting a tenth, so the summary
prefers units that bring new words. Choosing goes on while units fit the character budget; the
chosen ones are shown in source order, each on its own line, markers kept.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from sidecar.index.query import STOPWORDS

__all__ = [
    "DUPLICATE_JACCARD",
    "Dropped",
    "Extract",
    "Provenance",
    "SourceItem",
    "extract",
    "sentences",
    "words",
]

DUPLICATE_JACCARD = 0.7
DropReason = Literal["duplicate", "budget"]

_NEW_WEIGHT, _COVERED_WEIGHT = 10, 1
_WORD = re.compile(r"\w+(?:['’.\-]\w+)*")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*\s+")
_ABBREVIATIONS = frozenset({"e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "fig", "approx", "incl"})
# The index's stopwords: the words a query does not search for carry no fact either.
_STOP_WORDS = STOPWORDS


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One memory item of a cluster (a daily-note section, a journal entry) and its stable id."""

    id: str
    text: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """A line of a summary and the ids of the items it came from, in cluster order."""

    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Dropped:
    """A unit left out of a summary: a ``duplicate`` of the line ``kept_as``, or over the ``budget``."""

    text: str
    sources: tuple[str, ...]
    reason: DropReason
    kept_as: str | None = None


@dataclass(frozen=True, slots=True)
class Extract:
    """An extractive summary: its ``text`` (one line per unit), each line's provenance, and what was left out."""

    text: str
    provenance: tuple[Provenance, ...]
    dropped: tuple[Dropped, ...]


@dataclass(slots=True)
class _Unit:
    text: str
    pos: int
    words: frozenset[str]
    sources: list[str] = field(default_factory=list)


def words(text: str) -> frozenset[str]:
    """The normalised words of ``text`` that carry content: NFKC, case-folded, stop words aside
    (all of them when nothing else is left)."""
    tokens = [token.replace("’", "'") for token in _WORD.findall(unicodedata.normalize("NFKC", text).casefold())]
    content = [token for token in tokens if token not in _STOP_WORDS]
    return frozenset(content or tokens)


def extract(items: Sequence[SourceItem], budget: int) -> Extract:
    """The summary of ``items`` in at most ``budget`` characters (lines joined by newlines)."""
    if budget < 0:
        raise ValueError("budget must be >= 0")
    units: list[_Unit] = []
    for item in items:
        for text in _units(item.text):
            units.append(_Unit(text, len(units), words(_marker_stripped(text)), [item.id]))
    kept, dropped = _merge_duplicates(units)
    chosen, over_budget = _choose(kept, _frequencies(units), budget)
    dropped.extend((unit.pos, Dropped(unit.text, tuple(unit.sources), "budget")) for unit in over_budget)
    dropped.sort(key=lambda pair: pair[0])
    chosen.sort(key=lambda unit: unit.pos)
    return Extract(
        text="\n".join(unit.text for unit in chosen),
        provenance=tuple(Provenance(unit.text, _unique(unit.sources)) for unit in chosen),
        dropped=tuple(entry for _, entry in dropped),
    )


def _units(text: str) -> Iterator[str]:
    """The bullets, paragraph sentences and fenced blocks of one item, in order."""
    block: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            block.append(line)
            if line.strip().startswith(fence):
                yield "\n".join(block)
                block, fence = [], None
            continue
        opener = _FENCE.match(line)
        structure = not line.strip() or _HEADING.match(line) or _RULE.match(line)
        if opener or structure or _BULLET.match(line):
            yield from _flush(block)
            block = []
            if opener:
                fence, block = opener.group(1), [line.strip()]
            elif not structure:
                block = [line.strip()]
            continue
        block.append(line.strip())  # a paragraph line, or a bullet's continuation
    if fence is not None:  # an unclosed fence: its lines are content all the same
        yield "\n".join(block)
    else:
        yield from _flush(block)


def _flush(block: list[str]) -> Iterator[str]:
    if not block:
        return
    joined = " ".join(block)
    if _BULLET.match(joined):
        yield joined
    else:
        yield from sentences(joined)


def sentences(paragraph: str) -> Iterator[str]:
    """A paragraph's sentences, in order: a sentence ends at ``.``, ``!``, ``?`` or an ellipsis
    (with any closing quote or bracket) before a space and a word that is not lowercase, and not
    after an abbreviation ("e.g.", "Mrs.")."""
    start = 0
    for match in _SENTENCE_END.finditer(paragraph):
        end = match.end()
        before = paragraph[start : match.start()].rsplit(None, 1)
        last_word = before[-1].casefold().rstrip(".") if before else ""
        if end >= len(paragraph) or paragraph[end].islower() or last_word in _ABBREVIATIONS:
            continue
        yield paragraph[start:end].strip()
        start = end
    if rest := paragraph[start:].strip():
        yield rest


def _marker_stripped(text: str) -> str:
    return _BULLET.sub("", text, count=1)


def _duplicates(a: _Unit, b: _Unit) -> bool:
    if not a.words or not b.words:
        return _marker_stripped(a.text).casefold() == _marker_stripped(b.text).casefold()
    differing = a.words ^ b.words
    if any(char.isdigit() for word in differing for char in word):
        return False
    return len(a.words & b.words) >= DUPLICATE_JACCARD * len(a.words | b.words)


def _fuller(a: _Unit, b: _Unit) -> bool:
    """Whether ``a`` says more than ``b``: more words, then more characters, then earlier."""
    return (len(a.words), len(a.text), -a.pos) > (len(b.words), len(b.text), -b.pos)


def _merge_duplicates(units: list[_Unit]) -> tuple[list[_Unit], list[tuple[int, Dropped]]]:
    """One unit per group of near-duplicates (the fullest, crediting every source); the rest dropped."""
    groups: list[list[_Unit]] = []
    reps: list[_Unit] = []
    postings: dict[str, list[int]] = {}
    for unit in units:
        shared = Counter(g for word in unit.words for g in postings.get(word, ()))
        floor = DUPLICATE_JACCARD * len(unit.words)
        candidates = sorted(g for g, count in shared.items() if count >= floor)
        if not unit.words:
            candidates = [g for g, rep in enumerate(reps) if not rep.words]
        match = next((g for g in candidates if _duplicates(unit, reps[g])), None)
        if match is None:
            match = len(groups)
            groups.append([])
            reps.append(unit)
        groups[match].append(unit)
        if _fuller(unit, reps[match]):
            reps[match] = unit
        for word in unit.words:
            if not postings.setdefault(word, []) or postings[word][-1] != match:
                postings[word].append(match)
    dropped: list[tuple[int, Dropped]] = []
    for group, rep in zip(groups, reps, strict=True):
        rep.sources = [source for unit in group for source in unit.sources]
        rep.pos = group[0].pos  # shown where the fact first appeared
        dropped.extend((u.pos, Dropped(u.text, tuple(u.sources), "duplicate", rep.text)) for u in group if u is not rep)
    return reps, dropped


def _frequencies(units: Sequence[_Unit]) -> Counter[str]:
    """In how many units of the cluster each word occurs (duplicates count: repetition is emphasis)."""
    return Counter(word for unit in units for word in unit.words)


def _score(unit: _Unit, frequency: Counter[str], covered: set[str]) -> Fraction:
    if not unit.words:
        return Fraction(0)
    total = sum(frequency[w] * (_COVERED_WEIGHT if w in covered else _NEW_WEIGHT) for w in unit.words)
    return Fraction(total, len(unit.words))


def _choose(units: list[_Unit], frequency: Counter[str], budget: int) -> tuple[list[_Unit], list[_Unit]]:
    """Greedy choice by score while units fit; scores only fall as words get covered, so a stale
    score on the heap is an upper bound and is refreshed only when it reaches the top."""
    covered: set[str] = set()
    heap = [(-_score(unit, frequency, covered), unit.pos, i) for i, unit in enumerate(units)]
    heapq.heapify(heap)
    chosen: list[_Unit] = []
    over: list[_Unit] = []
    used = 0
    while heap:
        _, pos, i = heapq.heappop(heap)
        unit = units[i]
        fresh = (-_score(unit, frequency, covered), pos, i)
        if heap and fresh > heap[0]:
            heapq.heappush(heap, fresh)
            continue
        cost = len(unit.text) + (1 if chosen else 0)
        if used + cost > budget:
            over.append(unit)
            continue
        chosen.append(unit)
        used += cost
        covered.update(unit.words)
    over.sort(key=lambda unit: unit.pos)
    return chosen, over


def _unique(sources: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(sources))
