"""The snippet of a hit: a window of its chunk around the best cluster of matched query terms, and
where those terms are in it.

A query word matches a token of the text exactly (case-folded, Latin diacritics dropped, as the
index reads words), or, when no token of the text matches it exactly, by its stem-ish prefix (the
first 5 letters, or those of its other form in "y": "queries" and "query"; close enough to the
porter stemmer for choosing a window: the index did the real matching already). The window is
the one holding the most distinct query terms, exact matches first; it never starts inside a word
when a space is near, never splits a base character from its combining marks, and always holds
an exact match when the text has one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import NamedTuple

__all__ = [
    "SNIPPET_CHARS",
    "Snippet",
    "flatten",
    "fold",
    "held_terms",
    "held_terms_each",
    "is_plain",
    "mark_markdown",
    "mark_terms",
    "query_tokens",
    "sentence_spans",
    "term_spans",
    "window",
]

SNIPPET_CHARS = 240
ELLIPSIS = "…"
_TOKEN = re.compile(r"\w+")
_PREFIX = 5  # letters of a query token that make a stem-ish match
_MAX_MATCHES = 256  # matches kept per query token: enough to choose a window
_SNAP = 16  # how far a window edge moves to land on a space instead of inside a word
_JOINERS = frozenset("\u200c\u200d\u034f")


class Snippet(NamedTuple):
    """The window's text and the ``[start, end)`` character offsets of the matched terms in it. A
    named tuple: a search makes one per hit it shows, and a frozen dataclass costs several times as
    much to build."""

    text: str
    highlights: list[tuple[int, int]]


def flatten(text: str) -> str:
    """``" ".join(text.split())``: runs of whitespace made one space, the ends trimmed. ASCII text
    whose only control characters are line breaks is done with replaces instead of splitting into
    words (a third of a search's snippet time): the breaks made spaces, then runs of spaces halved
    until none is left (a paragraph break takes one more replace)."""
    if text.isascii():
        flat = text.replace("\n", " ")
        # Printable ASCII is 0x20-0x7e: no other whitespace (tab, CR, VT, FF, 0x1c-0x1f) is left.
        if flat.isprintable():
            while "  " in flat:
                flat = flat.replace("  ", " ")
            return flat.strip(" ")
    return " ".join(text.split())


def is_plain(text: str) -> bool:
    """Whether ``flatten(text)`` is ``text`` with its line breaks made spaces: no run of whitespace,
    no other whitespace, nothing to trim. The index keeps it per chunk (``chunks.plain``) so that a
    search's snippets skip the check, which costs more than the rest of a snippet."""
    return flatten(text) == text.replace("\n", " ")


def _latin_bases() -> dict[int, int]:
    """Each Latin letter with diacritics (NFD: an ASCII letter and combining marks) -> its letter."""
    bases = {}
    for code in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00), 0x212B):
        parts = unicodedata.normalize("NFD", chr(code))
        letter, marks = parts[0], parts[1:]
        if marks and letter.isascii() and letter.isalpha() and all(unicodedata.combining(m) for m in marks):
            bases[code] = ord(letter)
    return bases


# The index's tokenizer (unicode61, remove_diacritics 2) reads "crème" as "creme": a query for
# either finds both, and the snippet marks what the index found. One character for one, so a
# folded text keeps its offsets; the letters of Latin-1 are mapped as bytes (the common case, and
# many times faster than a translation of the whole text by a dict).
_LATIN_BASE = _latin_bases()
_LATIN1_BASE = bytes(_LATIN_BASE.get(c, c) for c in range(256))
_ACCENTED = re.compile("[" + "".join(map(chr, _LATIN_BASE)) + "]")


def fold(text: str) -> str:
    """``text`` case-folded, with its Latin letters' diacritics dropped (``Zürich`` -> ``zurich``),
    as the index compares words."""
    folded = text.casefold()
    if folded.isascii() or _ACCENTED.search(folded) is None:
        return folded
    try:
        return folded.encode("latin-1").translate(_LATIN1_BASE).decode("latin-1")
    except UnicodeEncodeError:
        return folded.translate(_LATIN_BASE)


def query_tokens(words: list[str]) -> list[str]:
    """The distinct word tokens of the query's words, folded (``fold``; ``checkx-7781`` is two). A
    search making ten snippets for one query computes them once and passes them in."""
    seen: dict[str, None] = {}
    for word in words:
        for token in _TOKEN.findall(fold(word)):
            seen.setdefault(token, None)
    return list(seen)


# A match: (start, end, index of the query token, exact). Plain tuples, in text order when sorted:
# a search makes one per matched term of every hit it shows.
_Match = tuple[int, int, int, bool]

# Bytes of ASCII text as the matcher reads them: letters lowered, digits and "_" kept, every other
# byte a space. What stands for a character beyond ASCII ("?" after encoding) is a space too, so
# every place a word could start or end is a space, and a word is found with one bytes.find.
_WORD_BYTES = bytes(
    c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122 or c == 95 else 32 for c in range(256)
)


def window(
    text: str, words: list[str], width: int = SNIPPET_CHARS, *, tokens: list[str] | None = None, plain: bool = False
) -> Snippet:
    """Up to ``width`` characters of ``text`` (whitespace flattened) around the best cluster of
    query terms, with an ellipsis where it was cut, and the matched terms' offsets in it.

    ``tokens``: ``query_tokens(words)``, if the caller has it already. ``plain``: ``is_plain(text)``
    is known to be true (the index stored it), so flattening is replacing the line breaks."""
    flat = text.replace("\n", " ") if plain else flatten(text)
    terms = query_tokens(words) if tokens is None else tokens
    if len(flat) <= width:
        return Snippet(flat, [(m[0], m[1]) for m in _matches(flat, terms)])
    if flat.isascii() and terms:
        matches, (start, end) = _ascii_window(flat, terms, width)
    else:
        matches = _matches(flat, terms)
        start, end = _choose(flat, matches, width)
    lead = ELLIPSIS if start > 0 else ""
    shift = len(lead) - start
    body = lead + flat[start:end] + (ELLIPSIS if end < len(flat) else "")
    return Snippet(body, [(a + shift, b + shift) for a, b, _, _ in matches if start <= a and b <= end])


def mark_terms(text: str, tokens: list[str]) -> list[tuple[int, int]]:
    """The ``[start, end)`` offsets of the query terms in ``text`` as it is (nothing flattened)."""
    return [(m[0], m[1]) for m in _matches(text, tokens)]


def term_spans(text: str, tokens: list[str]) -> list[list[tuple[int, int]]]:
    """``[mark_terms(text, [token]) for token in tokens]`` from one reading of ``text``: each
    token's ``[start, end)`` offsets in it, in text order. A token's matches never depend on the
    other tokens, so this is the same, for one encoding and scan of the text instead of one per token."""
    spans: list[list[tuple[int, int]]] = [[] for _ in tokens]
    for start, end, index, _ in _matches(text, tokens):
        spans[index].append((start, end))
    return spans


def held_terms(text: str, tokens: list[str]) -> frozenset[int]:
    """The indexes of the tokens ``text`` holds: ``{i for i, spans in enumerate(term_spans(text,
    tokens)) if spans}``, without listing their places. In ASCII text a token is held when a word
    starts with its stem and either is the token or the token has 3 letters or more (a prefix match),
    or a word starts with its other form: two ``bytes`` searches a token, where listing every match
    of a text that repeats its query's words costs a Python step per match (``held_terms_each``)."""
    return held_terms_each([text], tokens)[0]


def held_terms_each(texts: list[str], tokens: list[str]) -> list[frozenset[int]]:
    """``[held_terms(text, tokens) for text in texts]`` with the ASCII texts read as one: joined by
    spaces and translated once, each text's words searched inside its own bounds (the space each
    side included, so no word runs into the next text's), and the query's needles looked up once.
    What a ranking asking which terms each of its hits holds does once per answer."""
    needles = _needles(tuple(tokens))
    held: list[frozenset[int]] = []
    ascii_texts = [text for text in texts if text.isascii()]
    words = (" " + " ".join(ascii_texts) + " ").encode("ascii").translate(_WORD_BYTES)
    start = 0  # where the space before the next ASCII text is in ``words``
    for text in texts:
        if not text.isascii():
            held.append(frozenset(m[2] for m in _matches(text, tokens)))
            continue
        end = start + len(text) + 2  # [start, end): the text with the space each side
        found = []
        for index, stem, whole, other in needles:
            if (words.find(stem, start, end) >= 0 and (len(whole) >= 5 or words.find(whole, start, end) >= 0)) or (
                other is not None and words.find(other, start, end) >= 0
            ):
                found.append(index)
        held.append(frozenset(found))
        start = end - 1
    return held


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
        words = (" " + flat + " ").encode("ascii").translate(_WORD_BYTES)
        out = _word_matches(flat, words, terms, beyond_ascii=False)
    else:
        # Folded, the text keeps its offsets unless case folding moved them (an "ß" became "ss"):
        # then a case- and accent-blind regular expression finds every term, several times slower.
        folded = fold(flat)
        if len(folded) == len(flat):
            words = (" " + folded + " ").encode("ascii", "replace").translate(_WORD_BYTES)
            out = _word_matches(flat, words, terms, beyond_ascii=True)
            out += _unicode_matches(flat, folded, terms, beyond_ascii_only=True)
        else:
            out = _unicode_matches(flat, None, terms, beyond_ascii_only=False)
    out.sort()
    return out


def _word_matches(flat: str, words: bytes, terms: list[str], *, beyond_ascii: bool) -> list[_Match]:
    """The matches of the query's ASCII terms, found with ``bytes.find`` in ``words``: the
    case-folded text as ``_WORD_BYTES``, a space added at each end (text offset ``i`` is ``i + 1``
    there, so a word starting at ``i`` is found as ``b" " + word`` at ``i``). One scan per term
    tells whether a word starts with its stem; only then are its exact or prefix matches looked for.
    ``beyond_ascii``: ``words`` shows the text's other characters as spaces, so the characters
    beside a match are checked in the text itself."""
    out: list[_Match] = []
    for index, stem, whole, other in _needles(tuple(terms)):
        at = words.find(stem)
        exact: list[_Match] = []
        if at >= 0:
            size = len(whole) - 2
            found = words.find(whole, at)
            while found >= 0 and len(exact) < _MAX_MATCHES:
                if not beyond_ascii or _alone(flat, found, found + size):
                    exact.append((found, found + size, index, True))
                found = words.find(whole, found + size + 1)
            if exact:
                out += exact
                continue
            if size >= 3:
                out += _prefix_matches(flat, words, stem, at, index, beyond_ascii=beyond_ascii)
        elif other is None:
            continue  # the usual case: a hit holds few of its query's terms
        if other is not None and (alike := words.find(other)) >= 0:
            out += _prefix_matches(flat, words, other, alike, index, beyond_ascii=beyond_ascii)
    return out


def _ascii_window(flat: str, terms: list[str], width: int) -> tuple[list[_Match], tuple[int, int]]:
    """``window``'s matches and ``[start, end)`` for ASCII text longer than ``width``: those of
    ``_matches`` and ``_choose``. When every term the text holds matches exactly and has its first
    match inside the window of the text's first match, that window holds them all and wins (no
    later one can hold more), and no match past what it can show is listed: on a text that repeats
    its query's words, its start instead of every match. Else every match is listed and weighed.
    The matches are found as ``_word_matches`` finds them."""
    words = (" " + flat + " ").encode("ascii").translate(_WORD_BYTES)
    firsts: list[tuple[int, int, bytes]] = []
    matches: list[_Match] = []  # the prefix matches of the terms without an exact one
    first, reach = len(words), 0  # where the first exact match starts; the furthest end of a term's first
    for index, stem, whole, other in _needles(tuple(terms)):
        at = words.find(stem)
        found = words.find(whole, at) if at >= 0 else -1
        if found >= 0:
            firsts.append((found, index, whole))
            first = found if found < first else first
            end = found + len(whole) - 2
            reach = end if end > reach else reach
            continue
        if at >= 0 and len(whole) >= 5:
            matches += _prefix_matches(flat, words, stem, at, index, beyond_ascii=False)
        if other is not None and (alike := words.find(other)) >= 0:
            matches += _prefix_matches(flat, words, other, alike, index, beyond_ascii=False)
    held = bool(firsts) and not matches and reach <= first + width  # the first match's window holds every term
    # A match starting from here on is outside every window centred on that one (``_centre``).
    known = first + width + _SNAP if held else len(words)
    for at, index, whole in firsts:
        size = len(whole) - 2
        found, taken = at, 0
        while 0 <= found < known and taken < _MAX_MATCHES:
            matches.append((found, found + size, index, True))
            taken += 1
            found = words.find(whole, found + size + 1)
    matches.sort()
    if not held:
        return matches, _choose(flat, matches, width)
    # Whole words apart: the matches ending in the window are those sorted first.
    last = max(end for _, end, _, _ in matches if end <= first + width)
    return matches, _centre(flat, first, last, width)


def _prefix_matches(flat: str, words: bytes, stem: bytes, at: int, index: int, *, beyond_ascii: bool) -> list[_Match]:
    """The words starting with ``stem`` (the first at ``at``), for a term with no exact match."""
    loose: list[_Match] = []
    while at >= 0 and len(loose) < _MAX_MATCHES:
        end = words.find(b" ", at + len(stem)) - 1
        if not beyond_ascii:
            loose.append((at, end, index, False))
        elif (match := _prefix_match(flat, at, index)) is not None:
            loose.append(match)
        at = words.find(stem, end + 1)
    return loose


def _prefix_match(flat: str, at: int, index: int) -> _Match | None:
    """The prefix match at ``at`` of text beyond ASCII, if a word starts there: the whole word
    (its letters beyond ASCII too)."""
    token = _TOKEN.match(flat, at)
    if token is None or (at > 0 and _is_word(flat[at - 1])):
        return None
    return (at, token.end(), index, False)


@functools.lru_cache(maxsize=256)
def _needles(terms: tuple[str, ...]) -> list[tuple[int, bytes, bytes, bytes | None]]:
    """For each ASCII query term: its index, ``b" " + stem``, ``b" " + term + b" "`` and
    ``b" " + _y_form(term)`` if it has one (``queries``: also the words starting with ``query``):
    what ``_word_matches`` looks for. A search's hits share their query's terms, so it is made once."""
    return [
        (index, b" " + term[:_PREFIX].encode(), b" " + term.encode() + b" ", _needle(_y_form(term)))
        for index, term in enumerate(terms)
        if term.isascii()
    ]


def _needle(stem: str | None) -> bytes | None:
    return None if stem is None else b" " + stem.encode()


def _y_form(term: str) -> str | None:
    """The first letters of the other form of a word in "y", if ``term`` is one: the singular of a
    plural or past tense in "ies"/"ied" ("entries" -> "entry", "carried" -> "carry"), or the "i"
    stem of a word ending in a consonant and "y" ("query" -> "queri", for "queries" and
    "queried"). The index's stemmer reads them alike; their first five letters differ."""
    if len(term) > 4 and term[-3:] in ("ies", "ied"):
        return (term[:-3] + "y")[:_PREFIX]
    if len(term) >= 4 and term[-1] == "y" and term[-2] not in "aeiouy":
        return (term[:-1] + "i")[:_PREFIX]
    return None


def _alone(flat: str, start: int, end: int) -> bool:
    """Whether ``flat[start:end]`` is a whole token: no word character before it, none after."""
    if start > 0 and _is_word(flat[start - 1]):
        return False
    return end == len(flat) or not (flat[end].isalnum() or flat[end] == "_")


def _unicode_matches(flat: str, folded: str | None, terms: list[str], *, beyond_ascii_only: bool) -> list[_Match]:
    """The matches of query terms searched as text: the terms beyond ASCII (``beyond_ascii_only``),
    or every term when case folding moved the text's offsets (``folded`` is then None)."""
    out: list[_Match] = []
    for index, term in enumerate(terms):
        if beyond_ascii_only and term.isascii():
            continue
        if _wide(term[0]):  # CJK and the like: no spaces between words, the term is its own token
            out += [(at, at + len(term), index, True) for at in _occurrences(flat, folded, term)]
            continue
        exact: list[_Match] = []
        loose: list[_Match] = []
        other = _y_form(term) if term.isascii() else None
        stems = [term[:_PREFIX]] if other is None else [term[:_PREFIX], other]
        for stem in stems:
            for start in _occurrences(flat, folded, stem):
                if start > 0 and _is_word(flat[start - 1]):
                    continue  # inside a word, not at its start
                token = _TOKEN.match(flat, start)
                if token is None:
                    continue
                if fold(token.group()) == term:
                    exact.append((start, token.end(), index, True))
                elif not exact and len(term) >= 3:
                    loose.append((start, token.end(), index, False))
        out += exact or loose
    return out


def _occurrences(flat: str, folded: str | None, stem: str) -> list[int]:
    """Where ``stem`` occurs, blind to case and to Latin diacritics (at most ``_MAX_MATCHES`` places)."""
    if folded is not None:
        found: list[int] = []
        at = folded.find(stem)
        while at >= 0 and len(found) < _MAX_MATCHES:
            found.append(at)
            at = folded.find(stem, at + 1)
        return found
    pattern = re.compile("".join(_ACCENTS.get(char, re.escape(char)) for char in stem), re.IGNORECASE)
    return [m.start() for _, m in zip(range(_MAX_MATCHES), pattern.finditer(flat), strict=False)]


def _accent_classes() -> dict[str, str]:
    """Each ASCII letter that has Latin letters with diacritics -> a pattern class of all of them."""
    variants: dict[str, list[str]] = {}
    for code, base in _LATIN_BASE.items():
        variants.setdefault(chr(base).lower(), []).append(chr(code))
    return {base: "[" + base + "".join(chars) + "]" for base, chars in variants.items()}


_ACCENTS = _accent_classes()


def _wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_" or unicodedata.combining(char) != 0


def _choose(flat: str, matches: list[_Match], width: int) -> tuple[int, int]:
    """The window ``[start, end)``: the anchor (an exact match when there is one) whose window
    holds the most distinct terms (exact counted whole, prefixes a quarter) wins, the earliest on a
    tie; the cluster is then centred. One pass with two pointers over the matches in text order
    (a window's matches end in that order too: two matches are the same word or apart)."""
    if not matches:
        return 0, _edge_end(flat, width)
    if matches[-1][1] - matches[0][0] <= width:  # one window holds them all (the common case)
        return _centre(flat, matches[0][0], max(m[1] for m in matches), width)
    # A term's matches are all exact or all prefixes, so a term weighs 4 or 1 (a quarter) in a window.
    # An anchor's window holds the matches from its start (those sorted before it at the same start
    # too) up to its start + width: ``matches[lo:j]``, their terms counted in ``counts``.
    any_exact = any(m[3] for m in matches)
    # No window can score more than every term the text holds: the first anchor whose window holds
    # them all wins (a later one could only tie), so the scan stops there. On a text that repeats
    # its query's words that is the first anchor or so, instead of one step per match.
    weights: dict[int, int] = {}
    for _, _, term, exact in matches:
        weights[term] = 4 if exact else weights.get(term, 1)
    ceiling = sum(weights.values())
    counts: dict[int, int] = {}
    score = best = 0
    best_span = (matches[0][0], matches[0][1])
    lo = j = 0
    for start, _, _, exact in matches:
        while matches[lo][0] < start:  # the matches before this anchor leave the window
            if lo < j:
                _, _, term, term_exact = matches[lo]
                counts[term] -= 1
                score -= 0 if counts[term] else 4 if term_exact else 1
            lo += 1
        j = max(j, lo)
        while j < len(matches) and matches[j][1] <= start + width:
            _, _, term, term_exact = matches[j]
            seen = counts.get(term, 0)
            counts[term] = seen + 1
            score += 0 if seen else 4 if term_exact else 1
            j += 1
        if score > best and (exact or not any_exact):
            best, best_span = score, (start, max(m[1] for m in matches[lo:j]))
            if best == ceiling:
                break
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
    if char < "\u0300":  # none of them comes before the first combining mark (the common case)
        return False
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
