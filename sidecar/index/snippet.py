"""A short window of a chunk around the first query word it contains."""

from __future__ import annotations

import re

__all__ = ["SNIPPET_CHARS", "flatten", "is_plain", "make_snippet", "snippet_stems"]

SNIPPET_CHARS = 240


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


def snippet_stems(words: list[str]) -> list[str]:
    """What ``make_snippet`` looks for: each word's first 5 letters, lowercased. A search making
    ten snippets for one query computes them once and passes them in."""
    return [stem for word in words if (stem := word.strip("\"'").lower()[:5])]


def make_snippet(
    text: str, words: list[str], width: int = SNIPPET_CHARS, *, stems: list[str] | None = None, plain: bool = False
) -> str:
    """Up to ``width`` characters of ``text`` around the earliest match of a query word.

    Words match on a prefix of their stem-ish form (first 5 letters), which is close enough to
    the porter stemmer for choosing a window; the index did the real matching already.
    ``stems``: ``snippet_stems(words)``, if the caller has it already. ``plain``: ``is_plain(text)``
    is known to be true (the index stored it), so flattening is replacing the line breaks.
    """
    flat = text.replace("\n", " ") if plain else flatten(text)
    if len(flat) <= width:
        return flat
    if stems is None:
        stems = snippet_stems(words)
    if flat.isascii():
        # ASCII: lower() keeps every offset, so a plain find is the case-insensitive search; each
        # stem is looked for only where it would start before the earliest match found so far.
        lowered = flat.lower()
        first = len(lowered)
        for stem in stems:
            at = lowered.find(stem, 0, first + len(stem) - 1)
            if at >= 0:
                first = at
        if first == len(lowered):
            first = 0
    else:
        found = [m.start() for stem in stems if (m := re.search(re.escape(stem), flat, re.IGNORECASE))]
        first = min(found, default=0)
    start = max(0, min(first - width // 4, len(flat) - width))
    cut = flat[start : start + width]
    return ("…" if start > 0 else "") + cut + ("…" if start + width < len(flat) else "")
