"""``python -m sidecar.scanner.prepare``: work out everything the scanner defers to its first use
(every pattern's program and the literals its matches hold, the multilingual layer's tables) and
keep it for every later process (``warm``), as ``compileall`` compiles a package's bytecode after
an install. ``make`` runs it before the tests and before ``make run``; a process that finds the
results already kept writes nothing."""

from __future__ import annotations

from sidecar.scanner import (
    deferred,
    multilingual,
    rule,
    scan,  # noqa: F401  (imported, every rule's patterns are made)
    warm,
)

__all__ = ["prepare"]


def prepare() -> int:
    """Work out and keep everything the scanner defers; the number of results written."""
    deferred.compile_all()
    for pattern in deferred.made():
        rule.required_literals(pattern)
        rule.required_literals(pattern, rule.GATE_LITERAL)
    multilingual.warm_all()
    return warm.save(always=True)


if __name__ == "__main__":
    prepare()
