"""A long conversation turn cut into chunks the journal can hold: at most ``CHUNK_CHARS``
characters, cut at sentence boundaries, each chunk after the first starting with about
``OVERLAP_CHARS`` of the one before it (whole sentences), so a fact that straddles a cut is whole
in one of them (800 characters, 100 of overlap).

A single sentence longer than a chunk is cut at a space (or, with none, anywhere).
"""

from __future__ import annotations

import re

__all__ = ["CHUNK_CHARS", "OVERLAP_CHARS", "chunk_text"]

CHUNK_CHARS = 800
OVERLAP_CHARS = 100
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


def _sentences(text: str, limit: int) -> list[str]:
    """The text's sentences, each at most ``limit`` characters (a longer one cut at spaces)."""
    out: list[str] = []
    for whole in _SENTENCE_END.split(text):
        rest = whole
        while len(rest) > limit:
            cut = rest.rfind(" ", 0, limit + 1)
            cut = cut if cut > limit // 2 else limit
            out.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip()
        if rest:
            out.append(rest)
    return out


def chunk_text(text: str, size: int = CHUNK_CHARS, overlap: int = OVERLAP_CHARS) -> list[str]:
    """``text`` whole when it fits in ``size``, else its chunks in order (see the module)."""
    if len(text) <= size:
        return [text]
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for sentence in _sentences(text, size - overlap - 1):
        if current and length + 1 + len(sentence) > size:
            chunks.append(" ".join(current))
            current, length = _tail(current, overlap)
        current.append(sentence)
        length += len(sentence) + (1 if length else 0)
    if current:
        chunks.append(" ".join(current))
    return chunks


def _tail(sentences: list[str], overlap: int) -> tuple[list[str], int]:
    """The last whole sentences of a chunk that fit in ``overlap`` characters (the next chunk's start)."""
    kept: list[str] = []
    length = 0
    for sentence in reversed(sentences):
        if length + len(sentence) + 1 > overlap:
            break
        kept.insert(0, sentence)
        length += len(sentence) + 1
    return kept, max(0, length - 1)
