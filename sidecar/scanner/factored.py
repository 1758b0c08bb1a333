"""Regular expressions compiled with their alternations grouped by first character: the same matches, sooner.

The scanner's patterns are mostly long alternations of words (``\\b(?:send|share|sync|...)``). The
regular-expression engine tries each alternative in turn at every place a match may start, so a
hundred words cost a hundred tries at each word of the text. ``compile_factored`` compiles a pattern
whose alternatives that start with the same literal character are tried together under that
character ("s(?:end|hare|ync)"), so one try turns away all of them at a word that starts otherwise.

Matches do not change: the engine takes the first alternative, in order, that leads to a match, and
an alternative is only moved ahead of ones that cannot start with its character (``_first``), which
fail wherever it could match; alternatives that share a character keep their order. Patterns matched
without regard to case are compiled as they are.

The engine's program a pattern compiles to is kept for the next process (``warm``): a process reads
it instead of parsing, grouping and compiling the pattern again.
"""

from __future__ import annotations

import array
import importlib
import re
from typing import Any

from sidecar.scanner import warm

__all__ = ["compile_factored"]

# The standard library's parser and compiler, and the engine they feed: ``re.compile`` in steps.
_PARSER: Any = importlib.import_module("re._parser")
_COMPILER: Any = importlib.import_module("re._compiler")
_OPS: Any = importlib.import_module("re._constants")
_SRE: Any = importlib.import_module("_sre")
_REPEATS = tuple(
    getattr(_OPS, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_OPS, name)
)
# What the steps need; a Python without them compiles every pattern with ``re.compile``.
_INTERNALS = (
    hasattr(_COMPILER, "_code")
    and hasattr(_SRE, "compile")
    and hasattr(_PARSER, "SubPattern")
    and array.array("I").itemsize == getattr(_SRE, "CODESIZE", 0)  # the program's words, as ``warm`` keeps them
)


def compile_factored(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, with every alternation's alternatives grouped by their first
    literal character (see the module's docstring); the pattern's text and flags are kept."""
    if not _INTERNALS:
        return re.compile(pattern, flags)
    try:
        return _compiled(pattern, flags)
    except (AttributeError, TypeError, ValueError, IndexError):
        # Another Python's engine takes other arguments: the pattern as it is (the same matches).
        return re.compile(pattern, flags)


def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    kept = warm.lookup("factored", (pattern, flags))
    if kept is not warm.MISSING:
        try:
            return _program(pattern, kept)
        except Exception:  # the engine turned the program down: compiled again below
            pass
    tree = _PARSER.parse(pattern, flags)
    if not flags & re.IGNORECASE:  # matched without regard to case: compiled as it is
        tree = _PARSER.SubPattern(tree.state, _factored(tree.state, tree.data))
    code = _COMPILER._code(tree, flags)
    names = dict(tree.state.groupdict)
    indexed: list[str | None] = [None] * tree.state.groups
    for name, index in names.items():
        indexed[index] = name
    program = (flags | tree.state.flags, array.array("I", code).tobytes(), tree.state.groups - 1, names, tuple(indexed))
    compiled = _program(pattern, program)
    warm.remember("factored", (pattern, flags), program)
    return compiled


def _program(pattern: str, program: tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]) -> re.Pattern[str]:
    """The compiled pattern of an engine program: its flags, its code (words of ``_SRE.CODESIZE``
    bytes), its groups and their names."""
    flags, code, groups, names, indexed = program
    compiled: re.Pattern[str] = _SRE.compile(pattern, flags, array.array("I", code).tolist(), groups, names, indexed)
    return compiled


def _factored(state: Any, items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """A parsed sequence with each alternation in it grouped (``_grouped``), at every depth but inside
    look-arounds (whose width must stay as it is) and groups matched without regard to case."""
    out: list[tuple[Any, Any]] = []
    for op, av in items:
        if op is _OPS.BRANCH:
            branches = [_PARSER.SubPattern(state, _factored(state, branch.data)) for branch in av[1]]
            out.append((op, (av[0], _grouped(state, branches))))
        elif op is _OPS.SUBPATTERN and not av[1] & re.IGNORECASE:
            out.append((op, (*av[:3], _PARSER.SubPattern(state, _factored(state, av[3].data)))))
        elif op in _REPEATS:
            out.append((op, (av[0], av[1], _PARSER.SubPattern(state, _factored(state, av[2].data)))))
        elif op is _OPS.ATOMIC_GROUP:
            out.append((op, _PARSER.SubPattern(state, _factored(state, av.data))))
        else:
            out.append((op, av))
    return out


def _grouped(state: Any, branches: list[Any]) -> list[Any]:
    """The alternatives, those opening with one literal character put together behind it. An
    alternative joins the last group of its character when no alternative after that group can start
    with the character; otherwise it stays in its place."""
    slots: list[tuple[int | None, list[Any], frozenset[int] | None]] = []  # character, alternatives, first
    for branch in branches:
        char = branch.data[0][1] if branch.data and branch.data[0][0] is _OPS.LITERAL else None
        if char is not None:
            for slot in reversed(slots):
                if slot[0] == char:
                    slot[1].append(branch)
                    break
                if slot[2] is None or char in slot[2]:
                    slots.append((char, [branch], frozenset((char,))))
                    break
            else:
                slots.append((char, [branch], frozenset((char,))))
        else:
            slots.append((None, [branch], _first(branch.data)))
    out = []
    for char, group, _ in slots:
        if char is None or len(group) == 1:
            out.extend(group)
            continue
        rests = _grouped(state, [_PARSER.SubPattern(state, list(branch.data[1:])) for branch in group])
        inner = _PARSER.SubPattern(state, [(_OPS.BRANCH, (None, rests))])
        out.append(_PARSER.SubPattern(state, [(_OPS.LITERAL, char), (_OPS.SUBPATTERN, (None, 0, 0, inner))]))
    return out


def _first(items: list[tuple[Any, Any]]) -> frozenset[int] | None:
    """The characters a match of the sequence can start with, or None when that is not known (any)."""
    for op, av in items:
        if op is _OPS.AT:  # a boundary or an anchor matches no character: the next element starts the match
            continue
        if op is _OPS.LITERAL:
            return frozenset((av,))
        if op is _OPS.IN:
            return _in(av)
        if op is _OPS.SUBPATTERN and not av[1] & re.IGNORECASE:
            return _first(av[3].data)
        if op is _OPS.BRANCH:
            firsts = [_first(branch.data) for branch in av[1]]
            return None if any(f is None for f in firsts) else frozenset().union(*(f for f in firsts if f))
        if op in _REPEATS and av[0] >= 1:
            return _first(av[2].data)
        return None
    return None


def _in(items: list[tuple[Any, Any]]) -> frozenset[int] | None:
    """The characters of a character class made of characters and ranges, or None (a category, a
    negation: any)."""
    out: set[int] = set()
    for op, av in items:
        if op is _OPS.LITERAL:
            out.add(av)
        elif op is _OPS.RANGE:
            out.update(range(av[0], av[1] + 1))
        else:
            return None
    return frozenset(out)
