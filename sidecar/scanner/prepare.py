"""``python -m sidecar.scanner.prepare``: work out everything the scanner defers to its first use
(every pattern's program, the literals its matches hold and every gate's literals together, the
multilingual layer's tables) and keep it for every later process (``warm``), as ``compileall``
compiles a package's bytecode after an install. ``make`` runs it before the tests and before ``make run``; a process that finds the
results already kept writes nothing."""

from __future__ import annotations

from sidecar.scanner import (
    deferred,
    multilingual,
    normalise,
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
    gates = multilingual.warm_all()
    gates += [rule.required_literals(gate, rule.GATE_LITERAL) for gate in rule.GATES]
    for literals in gates:  # the literals a text's words are looked up in: every gate's, at once
        if literals is not None:
            normalise.literals_of(literals)
    return warm.save(always=True)


if __name__ == "__main__":
    prepare()
