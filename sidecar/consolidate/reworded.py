"""One statement in other words: what lets a fact said differently each day recur.

Two lines say the same thing when their content words, read as the index reads them (the porter
stem of each word, names included: "Thursdays" / "Thursday", "covers" / "covered"), overlap at a
Jaccard of ``REWORDED_JACCARD`` or more (``TWO_SIDED`` more when each holds a word the other
lacks and no number or name of theirs is shared: "Never run the planer ..." / "Never run the
bandsaw ..." are two rules), they hold the same numbers (a line without any number
aside), and each name one line holds (a capitalised word past a sentence's opening) is a word of
the other: "Dr Okafor covers the Saturday list" / "Saturday surgeries are covered by Dr Okafor" are
one statement, "... Dr Patel covers the Sunday list" another; and, within a run's lines, two
lines that each hold a word the others say of other things too speak of two subjects. ``group`` joins lines transitively,
looking up only lines that share one of their rarest words (the prefix filter, as in
``cluster.py``), so it stays near-linear in its lines.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.consolidate.text import COMMENT, form, learn_forms
from sidecar.index.query import STOPWORDS
from sidecar.write.dedup import LIST_MARKER

__all__ = ["REWORDED_JACCARD", "Statement", "group", "restates", "same", "statement"]

REWORDED_JACCARD = 0.5
TWO_SIDED = 0.1
#: Statements a word is in before it names a subject of its own (``same``'s ``common``).
COMMON_DF = 3
_WORD = re.compile(r"\w[\w.:/-]*\w|\w")
_OPENING = re.compile(r"(?:^|[.!?;:]\s+|[\"“(]\s*)$")


@dataclass(frozen=True, slots=True)
class Statement:
    """A line's content words (forms), its numbers and its names (forms)."""

    words: frozenset[str]
    numbers: frozenset[str]
    names: frozenset[str]
    #: Its names in runs of words side by side ("Luton airport" aside: "Heathrow", "Tadeusz").
    runs: tuple[frozenset[str], ...] = ()


def statement(text: str) -> Statement:
    """``text`` read for comparison (module docstring)."""
    text = LIST_MARKER.sub("", COMMENT.sub(" ", text)).replace("’", "'")
    found = [(m.group(0), m.start()) for m in _WORD.finditer(text)]
    learn_forms(w.lower() for w, _ in found if w.isalpha())
    words: set[str] = set()
    numbers: set[str] = set()
    names: set[str] = set()
    runs: list[set[str]] = []
    last = -2  # the index in ``found`` of the last name read
    for at, (word, start) in enumerate(found):
        lower = word.lower().rstrip(".:/-")
        if any(ch.isdigit() for ch in lower):
            numbers.add(lower)
            words.add(lower)
            continue
        if len(lower) < 2 or lower in STOPWORDS:
            continue
        read = form(lower)
        words.add(read)
        if word[0].isupper() and not _OPENING.search(text[:start]):
            names.add(read)
            if at == last + 1 and runs:
                runs[-1].add(read)
            else:
                runs.append({read})
            last = at
    return Statement(frozenset(words), frozenset(numbers), frozenset(names), tuple(frozenset(r) for r in runs))


def same(a: Statement, b: Statement, threshold: float = REWORDED_JACCARD, common: frozenset[str] = frozenset()) -> bool:
    """Whether ``a`` and ``b`` are one statement (module docstring). ``common`` are words the
    notes use in several statements (a service, a team, a person's role): two lines that each
    hold one the other lacks speak of two subjects ("Escalations for reviews go to Chen" /
    "Escalations for scheduler go to Chen")."""
    if common and (a.words - b.words) & common and (b.words - a.words) & common:
        return False
    if a.numbers and b.numbers and a.numbers != b.numbers:
        return False
    if not a.names <= b.words or not b.names <= a.words:
        return False
    union = len(a.words | b.words)
    if not union:
        return False
    # Each holding a word the other lacks ("bandsaw" / "planer") asks for more in common, unless
    # a value (a number, a name) they share anchors them.
    anchored = bool((a.numbers | a.names) & b.words) and bool((b.numbers | b.names) & a.words)
    two_sided = bool(a.words - b.words) and bool(b.words - a.words)
    need = threshold + TWO_SIDED if two_sided and not anchored else threshold
    return len(a.words & b.words) / union >= need


def restates(new: Statement, old: Statement) -> bool:
    """Whether ``new`` says ``old``'s subject again with another value: it holds every word of
    ``old`` that is no value (two or more; an identifier such as "data-10" is a word), and a number where ``old`` has another number, or a
    name ``old`` lacks where ``old`` has a name ``new`` lacks ("Rent is paid to Corrigan
    Properties" / "From March rent is paid to Northgate Estates"). A line of another subject in
    the same mould lacks one of its words ("platform on-call ..." / "data on-call ..."), or, with
    no number changed, keeps none of ``old``'s names where it has two or more said apart: every
    name swapped is the mould said of another subject ("Airport runs from Heathrow are done by
    Tadeusz" / "Airport runs from Luton airport are done by Colm")."""
    old_numbers, new_numbers = _quantities(old), _quantities(new)
    subject = old.words - old_numbers - old.names
    if len(subject) < 2 or not subject <= new.words:
        return False
    numbers = bool(old_numbers and new_numbers and not new_numbers <= old_numbers and not old_numbers <= new_numbers)
    if not numbers and len(old.runs) >= 2 and not any(run & new.words for run in old.runs):
        return False  # every name of the old line swapped: its mould said of another subject
    names = bool(old.names and new.names - old.words and not old.names <= new.words)
    return numbers or names


def _quantities(said: Statement) -> frozenset[str]:
    """The numbers that are amounts, times or versions (a digit first): an identifier such as
    "data-10" or "nas-2" names a subject."""
    return frozenset(n for n in said.numbers if n[0].isdigit())


def group(
    items: Sequence[Statement],
    threshold: float = REWORDED_JACCARD,
    alone: Sequence[bool] = (),
) -> list[list[int]]:
    """The indexes of ``items`` joined into statements (``same``, transitively), each group in
    order, groups in order of their first item; two groups that each hold an item ``alone`` marks
    (one that stands as a statement on its own) stay apart."""
    df = Counter(word for item in items for word in item.words)
    common = frozenset(word for word, n in df.items() if n >= COMMON_DF)
    parent = list(range(len(items)))
    solo = [bool(alone[n]) if n < len(alone) else False for n in range(len(items))]

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    postings: dict[str, list[int]] = {}
    for n, item in enumerate(items):
        prefix = _prefix(item.words, df, threshold)
        seen: set[int] = set()
        for word in prefix:
            for other in postings.get(word, ()):
                if other in seen:
                    continue
                seen.add(other)
                a, b = root(n), root(other)
                if a != b and not (solo[a] and solo[b]) and same(item, items[other], threshold, common):
                    parent[max(a, b)] = min(a, b)
                    solo[min(a, b)] = solo[a] or solo[b]
        for word in prefix:
            postings.setdefault(word, []).append(n)
    out: dict[int, list[int]] = {}
    for n in range(len(items)):
        out.setdefault(root(n), []).append(n)
    return sorted(out.values(), key=lambda g: g[0])


def _prefix(words: frozenset[str], df: Counter[str], threshold: float) -> list[str]:
    keep = len(words) - math.ceil(threshold * len(words) - 1e-9) + 1
    return sorted(words, key=lambda w: (df[w], w))[: max(keep, 0)]
