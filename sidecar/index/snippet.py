"""The snippet of a hit: a window of its chunk around the best cluster of matched query terms, and
where those terms are in it.

A query word matches a token of the text exactly (case-folded), or, when no token of the text
matches it exactly, by its stem-ish prefix (the first 5 letters, close enough to the porter stemmer
for choosing a window: the index did the real matching already). The window is the one holding the
most distinct query terms, exact matches first; it never starts inside a word when a space is near,
never splits a base character from its combining marks, and always holds an exact match when the
text has one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "SNIPPET_CHARS",
    "Snippet",
    "flatten",
    "is_plain",
    "mark_markdown",
    "mark_terms",
    "query_tokens",
    "sentence_spans",
    "window",
]

SNIPPET_CHARS = 240
ELLIPSIS = "…"
_TOKEN = re.compile(r"\w+")
_PREFIX = 5  # letters of a query token that make a stem-ish match
_MAX_MATCHES = 256  # occurrences looked at per query token: enough to choose a window
_PREFIX_WEIGHT = 0.25
_SNAP = 16  # how far a window edge moves to land on a space instead of inside a word
_JOINERS = frozenset("\u200c\u200d\u034f")


@dataclass(frozen=True, slots=True)
class Snippet:
    """The window's text and the ``[start, end)`` character offsets of the matched terms in it."""

    text: str
    highlights: list[tuple[int, int]]


def flatten(text: str) -> str:
    """``" ".join(text.split())``: runs of whitespace made one space, the ends trimmed. ASCII text
    whose only control characters are single line breaks is done with one replace instead of
    splitting into words (a third of a search's snippet time)."""
    if text.isascii():
        flat = text.replace("\n", " ")
        # Printable ASCII is 0x20-0x7e: no other whitespace (tab, CR, VT, FF, 0x1c-0x1f) is left.
        if flat.isprintable() and "  " not in flat:
            return flat.strip(" ")
    return " ".join(text.split())


def is_plain(text: str) -> bool:
    """Whether ``flatten(text)`` is ``text`` with its line breaks made spaces: no run of whitespace,
    no other whitespace, nothing to trim. The index keeps it per chunk (``chunks.plain``) so that a
    search's snippets skip the check, which costs more than the rest of a snippet."""
    return flatten(text) == text.replace("\n", " ")


def query_tokens(words: list[str]) -> list[str]:
    """The distinct word tokens of the query's words, case-folded (``checkx-7781`` is two). A search
    making ten snippets for one query computes them once and passes them in."""
    seen: dict[str, None] = {}
    for word in words:
        for token in _TOKEN.findall(word.casefold()):
            seen.setdefault(token, None)
    return list(seen)


class _Match(NamedTuple):
    start: int
    end: int
    term: int  # index into the query tokens
    exact: bool


def window(
    text: str, words: list[str], width: int = SNIPPET_CHARS, *, tokens: list[str] | None = None, plain: bool = False
) -> Snippet:
    """Up to ``width`` characters of ``text`` (whitespace flattened) around the best cluster of
    query terms, with an ellipsis where it was cut, and the matched terms' offsets in it.

    ``tokens``: ``query_tokens(words)``, if the caller has it already. ``plain``: ``is_plain(text)``
    is known to be true (the index stored it), so flattening is replacing the line breaks."""
    flat = text.replace("\n", " ") if plain else flatten(text)
    terms = query_tokens(words) if tokens is None else tokens
    matches = _matches(flat, terms)
    if len(flat) <= width:
        return Snippet(flat, [(m.start, m.end) for m in matches])
    start, end = _choose(flat, matches, width)
    lead = ELLIPSIS if start > 0 else ""
    shift = len(lead) - start
    body = lead + flat[start:end] + (ELLIPSIS if end < len(flat) else "")
    return Snippet(body, [(m.start + shift, m.end + shift) for m in matches if start <= m.start and m.end <= end])


def mark_terms(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """The ``[start, end)`` offsets of the query terms in ``text`` as it is (nothing flattened)."""
    return [(m.start, m.end) for m in _matches(text, tokens)]


def mark_markdown(snippet: Snippet) -> Snippet:
    """The snippet with each highlight wrapped in ``**``; the offsets then point inside the marks."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    size = 0
    for start, end in snippet.highlights:
        out.append(snippet.text[at:start])
        size += start - at
        out.append("**" + snippet.text[start:end] + "**")
        spans.append((size + 2, size + 2 + end - start))
        size += end - start + 4
        at = end
    out.append(snippet.text[at:])
    return Snippet("".join(out), spans)


def _matches(flat: str, terms: list[str]) -> list[_Match]:
    """Every whole-token match of a query term, in text order: exact where the text has the term
    as a token, else by prefix (terms with an exact match anywhere take no prefix matches)."""
    if not terms or not flat:
        return []
    if flat.isascii():
        return _ascii_matches(flat, flat.lower(), terms)
    # Case-folded, the text is searched with str.find, unless folding moved its offsets (an "ß"
    # became "ss"): then a case-blind regular expression, several times slower.
    casefolded = flat.casefold()
    folded = casefolded if len(casefolded) == len(flat) else None
    out: list[_Match] = []
    for index, term in enumerate(terms):
        if _wide(term[0]):  # CJK and the like: no spaces between words, the term is its own token
            out += [_Match(at, at + len(term), index, True) for at in _occurrences(flat, folded, term)]
            continue
        exact: list[_Match] = []
        loose: list[_Match] = []
        for start in _occurrences(flat, folded, term[:_PREFIX]):
            if start > 0 and _is_word(flat[start - 1]):
                continue  # inside a word, not at its start
            token = _TOKEN.match(flat, start)
            if token is None:
                continue
            if token.group().casefold() == term:
                exact.append(_Match(start, token.end(), index, True))
            elif not exact and len(term) >= 3:
                loose.append(_Match(start, token.end(), index, False))
        out += exact or loose
    out.sort()
    return out


def _ascii_matches(flat: str, folded: str, terms: list[str]) -> list[_Match]:
    """``_matches`` for ASCII text, where lowering keeps every offset: the common case, kept to
    string methods (a search makes one per hit it shows)."""
    out: list[_Match] = []
    size = len(folded)
    for index, term in enumerate(terms):
        if not term.isascii():
            continue  # no ASCII text holds it
        exact: list[_Match] = []
        loose: list[_Match] = []
        stem = term[:_PREFIX]
        at = folded.find(stem)
        while at >= 0 and len(exact) + len(loose) < _MAX_MATCHES:
            if at == 0 or not (folded[at - 1].isalnum() or folded[at - 1] == "_"):
                end = at + len(term)
                if folded.startswith(term, at) and (end == size or not (folded[end].isalnum() or folded[end] == "_")):
                    exact.append(_Match(at, end, index, True))
                elif not exact and len(term) >= 3:
                    token = _TOKEN.match(folded, at)
                    if token is not None and token.group() != term:
                        loose.append(_Match(at, token.end(), index, False))
            at = folded.find(stem, at + 1)
        out += exact or loose
    out.sort()
    return out


def _occurrences(flat: str, folded: str | None, stem: str) -> list[int]:
    """Where ``stem`` occurs, case-insensitively (at most ``_MAX_MATCHES`` places)."""
    if folded is not None:
        found: list[int] = []
        at = folded.find(stem)
        while at >= 0 and len(found) < _MAX_MATCHES:
            found.append(at)
            at = folded.find(stem, at + 1)
        return found
    pattern = re.compile(re.escape(stem), re.IGNORECASE)
    return [m.start() for _, m in zip(range(_MAX_MATCHES), pattern.finditer(flat), strict=False)]


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_" or unicodedata.combining(char) != 0


def _choose(flat: str, matches: list[_Match], width: int) -> tuple[int, int]:
    """The window ``[start, end)``: the anchor (an exact match when there is one) whose window
    holds the most distinct terms (exact counted whole, prefixes a quarter) wins, the earliest on a
    tie; the cluster is then centred. One pass with two pointers over the matches in text order."""
    if not matches:
        return 0, _edge_end(flat, width)
    if matches[-1].end - matches[0].start <= width:  # one window holds them all (the common case)
        return _centre(flat, matches[0].start, max(m.end for m in matches), width)
    any_exact = any(m.exact for m in matches)
    exact: dict[int, int] = {}
    loose: dict[int, int] = {}
    best, best_span = -1.0, (matches[0].start, matches[0].end)
    j = 0
    for i, anchor in enumerate(matches):
        limit = anchor.start + width
        while j < len(matches) and matches[j].end <= limit:
            counts = exact if matches[j].exact else loose
            counts[matches[j].term] = counts.get(matches[j].term, 0) + 1
            j += 1
        if j > i and (anchor.exact or not any_exact):
            score = len(exact) + _PREFIX_WEIGHT * len(loose.keys() - exact.keys())
            if score > best:
                best, best_span = score, (anchor.start, max(m.end for m in matches[i:j]))
        if j > i:  # the anchor leaves the window before the next one is tried
            counts = exact if anchor.exact else loose
            counts[anchor.term] -= 1
            if not counts[anchor.term]:
                del counts[anchor.term]
        else:
            j = i + 1
    return _centre(flat, *best_span, width)


def _centre(flat: str, first: int, last: int, width: int) -> tuple[int, int]:
    """A window of about ``width`` around ``[first, last)``, its edges on spaces where one is near."""
    start = first - (width - (last - first)) // 2
    start = max(0, min(start, len(flat) - width))
    start = _edge_start(flat, start, first)
    end = _edge_end(flat, start + width)
    if end < last:  # snapping the start left the cluster's end outside: take the window from it
        end = _edge_end(flat, min(len(flat), last + _SNAP))
    return start, max(end, last)


def _edge_start(flat: str, start: int, keep: int) -> int:
    """Move ``start`` to just after a nearby space (not past ``keep``), and off combining marks."""
    if start > 0 and flat[start - 1] != " ":
        space = flat.find(" ", start, min(start + _SNAP, keep))
        if space >= 0:
            start = space + 1
    while 0 < start < keep and _clings(flat[start]):
        start += 1
    return start


def _edge_end(flat: str, end: int) -> int:
    """Move ``end`` back to a nearby space, and never between a character and its marks."""
    if end >= len(flat):
        return len(flat)
    if flat[end] != " ":
        space = flat.rfind(" ", max(0, end - _SNAP), end)
        if space > 0:
            end = space
    while end > 0 and end < len(flat) and _clings(flat[end]):
        end -= 1
    return end


def _clings(char: str) -> bool:
    """A character that belongs to the one before it: a combining mark, a joiner, a variation selector."""
    return unicodedata.combining(char) != 0 or char in _JOINERS or "\ufe00" <= char <= "\ufe0f"


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentence_spans(text: str, longest: int = 240) -> list[tuple[int, int]]:
    """``[start, end)`` of each sentence of ``text`` (split after . ! ? and at line breaks, outer
    whitespace left out, empty ones dropped), each at most ``longest`` characters: what a dense-only
    hit's snippet chooses from."""
    spans = []
    start = 0
    for cut in [*_SENTENCE_END.finditer(text), None]:
        end = cut.start() if cut is not None else len(text)
        part = text[start:end]
        lead = len(part) - len(part.lstrip())
        body = part.strip()
        if body:
            spans.append((start + lead, start + lead + min(len(body), longest)))
        if cut is not None:
            start = cut.end()
    return spans
