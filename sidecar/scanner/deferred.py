"""Patterns compiled when first used, not when the scanner is imported.

The scanner holds hundreds of patterns, and compiling them all took most of a second of CPU in every
process that imports it. Most are never needed by a given text: a rule runs only when its words occur
(``rule.Rule.needles``, word stems), so the patterns of a rule whose words a process never meets need
never be compiled. ``deferred(pattern, flags)`` stands for ``re.compile(pattern, flags)``: its
``pattern`` and ``flags`` are there at once (rules build patterns from others' ``pattern`` and read the
literals every match holds from it), and the first call of a matching method compiles it (its
alternations grouped by first character: ``factored``) and puts the compiled pattern's bound methods
on the instance, so later calls cost what the compiled pattern's own do.
"""

from __future__ import annotations

import re
import threading
import weakref
from typing import Any, cast

from sidecar.scanner.factored import compile_factored

__all__ = ["COMPILED", "compile_all", "deferred", "is_compiled", "is_pattern", "made"]

# The methods copied onto a deferred pattern once compiled: every later call finds them in the
# instance's dictionary, without ``__getattr__``.
_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner")
_ATTRIBUTES = ("groups", "groupindex")
_LOCK = threading.Lock()

#: The source of every deferred pattern compiled in this process, in order (what a test reads to see
#: which patterns a text needed).
COMPILED: list[str] = []
_MADE: weakref.WeakSet[_Deferred] = weakref.WeakSet()  # every deferred pattern alive (``compile_all``)


class _Deferred:
    """A regular expression compiled on first use (see the module's docstring)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self.flags = flags
        self.compiled: re.Pattern[str] | None = None
        _MADE.add(self)

    def __getattr__(self, name: str) -> Any:
        # Only called for names not yet on the instance: a matching method before the first compile.
        if name.startswith("__") or name not in _METHODS + _ATTRIBUTES:
            raise AttributeError(name)
        with _LOCK:
            compiled = self.__dict__.get("compiled") or self._compile()
        return getattr(compiled, name)

    def _compile(self) -> re.Pattern[str]:
        compiled = compile_factored(self.pattern, self.flags)
        for name in _METHODS + _ATTRIBUTES:
            self.__dict__[name] = getattr(compiled, name)
        self.__dict__["compiled"] = compiled
        COMPILED.append(self.pattern)
        return compiled

    def __repr__(self) -> str:
        return f"deferred({self.pattern!r:.60})"


def deferred(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled when one of its methods is first called (by
    ``factored.compile_factored``: the same matches)."""
    return cast("re.Pattern[str]", _Deferred(pattern, flags))


def compile_all() -> int:
    """Compile every deferred pattern not compiled yet (what importing the scanner cost before they were
    deferred); the number compiled."""
    waiting = [pattern for pattern in list(_MADE) if pattern.compiled is None]
    for pattern in waiting:
        pattern.search("")
    return len(waiting)


def made() -> list[re.Pattern[str]]:
    """Every deferred pattern alive, compiled or not."""
    return [cast("re.Pattern[str]", pattern) for pattern in list(_MADE)]


def is_pattern(value: object) -> bool:
    """Whether ``value`` is a pattern: compiled by ``re.compile``, or ``deferred``."""
    return isinstance(value, (re.Pattern, _Deferred))


def is_compiled(pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` has been compiled (always, for a pattern ``re.compile`` made)."""
    return not isinstance(pattern, _Deferred) or pattern.compiled is not None
