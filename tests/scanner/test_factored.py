"""Patterns compiled with their alternations grouped by first character match exactly where and as the
patterns ``re.compile`` makes do: every pattern of the scanner, on the notes it was written from, on
ordinary memory and on texts made to catch a reordering."""

from __future__ import annotations

import functools
import re

import pytest

from sidecar.scanner import deferred, multilingual
from sidecar.scanner import scan as _scan  # noqa: F401  # builds every rule's patterns
from sidecar.scanner.factored import compile_factored
from sidecar.scanner.normalise import normalise
from tests.support.corpus import benign_notes, seen_notes


@functools.cache
def _haystacks() -> tuple[str, str]:
    """Each text in its forms the rules read, as one long string: a pattern runs once over all of
    them. Made once, by the first test (not at collection, in every worker)."""
    texts = seen_notes() + benign_notes()
    return (
        "\n\n".join(normalise(text).folded for text in texts),
        "\n\n".join(normalise(text).cased for text in texts),
    )


# The multilingual layer's patterns by their sources (``_source``: what ``_RX`` and ``_RX_ASCII`` compile,
# with no flags, so ``re.UNICODE`` as every str pattern has): reading ``_RX[key]`` would compile each of
# them at collection, in every worker, where each test compiles its own.
SOURCES = sorted(
    {(p.pattern, p.flags) for p in list(deferred._MADE)}
    | {(multilingual._source(key), re.UNICODE) for key in sorted(multilingual._KEYS)}
    | {(multilingual._source(key, True), re.UNICODE) for key in sorted(multilingual._KEYS)}
)


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], ...]]:
    return [found.regs for found in pattern.finditer(text)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s[0][:40])
def test_every_pattern_matches_as_re_compiles_it(source: tuple[str, int]) -> None:
    pattern, flags = source
    plain, factored = re.compile(pattern, flags), compile_factored(pattern, flags)
    assert factored.pattern == pattern and factored.groupindex == plain.groupindex
    for text in _haystacks():
        assert _matches(factored, text) == _matches(plain, text)


@pytest.mark.parametrize(
    ("pattern", "texts"),
    [
        # alternatives sharing a first character keep their order: the first that leads to a match wins
        (r"(?:a|ab)c", ["ac", "abc", "ab", "xabcx"]),
        (r"\b(?:send|share|sync|s)\b", ["s", "share it", "syncs", "send", "sen"]),
        # an alternative is not moved ahead of one that may start with its character
        (r"(?:ab|[a-z]x|ac|\w+y|ad)", ["ax", "ac", "ady", "ad", "zzy", "ab"]),
        (r"(?:xa|(?=x)\w|xb)", ["xb", "xa", "x"]),
        (r"(?:ba|a?b|bc)", ["bc", "b", "ab"]),
        # captured groups keep their numbers and spans
        (r"(?P<verb>drop|delete|dump)\s+(the\s+)?(?P<what>\w+)|(d)(x)", ["drop the table", "dump logs", "dx"]),
        (r"(?>do|don't|d)n", ["don't", "dn", "don"]),
        (r"(?i)(?:ab|ac)", ["AC", "ab"]),  # matched without regard to case: compiled as it is
    ],
)
def test_grouped_alternations_take_the_same_alternative(pattern: str, texts: list[str]) -> None:
    plain, factored = re.compile(pattern), compile_factored(pattern)
    for text in texts:
        assert _matches(factored, text) == _matches(plain, text), text
        assert [m.lastindex for m in factored.finditer(text)] == [m.lastindex for m in plain.finditer(text)]
