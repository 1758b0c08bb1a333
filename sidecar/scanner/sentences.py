"""Sentences: the unit the intent layers read and the span a finding's reason quotes.

A sentence ends at ``.``, ``!``, ``?`` or ``;`` before a space, at the CJK full stops, at a blank
line, before a line that starts a list item, a heading, a quote or a table row, and around a code
fence's line (its first line of code opens a sentence); a wrapped line
of prose stays in its sentence. Each cell of a table row is a sentence of its own (a row is a
record, not a clause: "| Prompt override | instructions are not replaced |"). Long sentences are read in overlapping windows, so the layers stay
linear in the text whatever its shape.
"""

from __future__ import annotations

from collections.abc import Iterator

from sidecar.scanner.deferred import deferred

__all__ = ["MAX_SENTENCE", "sentence_at", "sentences"]

MAX_SENTENCE = 600  # characters read at once; longer sentences are read in windows overlapping by half

# The leading lookahead is a set of characters the engine skips to: four times faster than
# trying each alternative at every position.
_END = deferred(
    r"(?=[.!?:\]\n`~\u3002\uff01\uff1f\uff1b\u061f\u0964])(?:[.!?]+(?=[\s\"')\]*_]|$)|"
    r"[\u3002\uff01\uff1f\uff1b\u061f\u0964]+|\n[ \t]*\n|"
    r"\n(?=[ \t]*(?:[-*+>#|=<\[]|\d{1,3}[.)][ \t]|role\s*:|content\s*:|```|~~~))|[:\]][ \t]*\n|"
    r"(?:```|~~~)[\w.+-]*[ \t]*(?:\n|$))"
)


def sentences(text: str) -> Iterator[tuple[int, int]]:
    """``[start, end)`` spans of the sentences of ``text``, in order, each at most ``MAX_SENTENCE`` long."""
    pos = 0
    for found in _END.finditer(text):
        yield from _windows(text, pos, found.end())
        pos = found.end()
    if pos < len(text):
        yield from _windows(text, pos, len(text))


def _windows(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    if start >= end:
        return
    if text[start] == "|":  # a table row: its cells
        cell = start + 1
        while cell < end:
            border = text.find("|", cell, end)
            stop = end if border == -1 else border
            if text[cell:stop].strip(" \t-:\n"):
                yield from _windows(text, cell, stop)
            cell = stop + 1
        return
    if end - start <= MAX_SENTENCE:
        yield start, end
        return
    step = MAX_SENTENCE // 2
    for begin in range(start, end - step, step):
        yield begin, min(begin + MAX_SENTENCE, end)


def sentence_at(text: str, start: int, end: int, limit: int = 240) -> str:
    """The sentence around ``[start, end)`` as one printable line of at most ``limit`` characters:
    what a finding gives as its reason."""
    found = [m.end() for m in _END.finditer(text, max(0, start - limit), start)]
    begin = found[-1] if found else max(0, start - limit // 2)
    stop = _END.search(text, end, end + limit)
    finish = stop.end() if stop else min(len(text), end + limit // 2)
    piece = " ".join(text[begin:finish].split())
    if len(piece) > limit:
        offset = max(0, min(start - begin - limit // 3, len(piece) - limit))
        piece = piece[offset : offset + limit]
    return "".join(ch if ch.isprintable() else f"<U+{ord(ch):04X}>" for ch in piece)
