"""The HTTP routes, made from the registry: each operation of ``sidecar.ops.registry.OPERATIONS``
is served at its method and path by the handler named for it here, and nothing else is served.

Each ``sidecar.http`` module lists the operations it serves by name (its ``HANDLERS``); the ways
in outside this package (MCP's endpoint and tool list, the memory browser's pages) add theirs
when the application is built (``sidecar.server.app``). A handler for a name the registry lacks,
or an operation with no handler, stops the application being built, naming it: a route cannot
exist without its operation, so it cannot skip the registry's rules (``sidecar.http.policy``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.http import (
    block,
    consolidate,
    files,
    journal,
    kg,
    memories,
    metrics,
    openapi_route,
    palace,
    search,
    status,
)
from sidecar.ops.registry import OPERATIONS, Operation

__all__ = ["ANY_METHOD", "HANDLERS", "UI_PREFIX", "add_operations", "routed"]

#: Paths whose one handler answers every method itself: MCP's endpoint (JSON-RPC over POST, its
#: stream over GET, its session closed by DELETE) refuses any other method in JSON-RPC's own shape.
ANY_METHOD = frozenset({"/mcp"})
#: The memory browser's pages, served only when it is on (``--ui``).
UI_PREFIX = "/ui"


def _merge(tables: Iterable[Mapping[str, Handler]]) -> dict[str, Handler]:
    merged: dict[str, Handler] = {}
    for table in tables:
        for name, handler in table.items():
            if name in merged:
                raise ValueError(f"two handlers for the operation {name!r}")
            merged[name] = handler
    return merged


#: The handlers of this package, by operation name.
HANDLERS: Mapping[str, Handler] = _merge(
    m.HANDLERS
    for m in (status, search, files, block, journal, memories, consolidate, metrics, openapi_route, palace, kg)
)


def routed(
    handlers: Mapping[str, Handler], operations: Iterable[Operation] = OPERATIONS
) -> list[tuple[Operation, Handler]]:
    """Each operation with its handler, in the registry's order. ValueError naming every handler
    whose name is no operation and every operation without a handler."""
    ops = tuple(operations)
    names = {op.name for op in ops}
    strays = sorted(set(handlers) - names)
    missing = [op.name for op in ops if op.name not in handlers]
    if strays or missing:
        raise ValueError(f"handlers without an operation: {strays}; operations without a handler: {missing}")
    return [(op, handlers[op.name]) for op in ops]


def add_operations(
    router: web.UrlDispatcher,
    handlers: Mapping[str, Handler],
    *,
    ui: bool,
    operations: Iterable[Operation] = OPERATIONS,
) -> None:
    """Add a route to ``router`` for each operation (its GET answers HEAD too), by walking the
    registry; the memory browser's pages only when ``ui``."""
    shared: dict[str, Handler] = {}
    for op, handler in routed(handlers, operations):
        if not ui and (op.path == UI_PREFIX or op.path.startswith(UI_PREFIX + "/")):
            continue
        if op.path in ANY_METHOD:
            first = shared.get(op.path)
            if first is None:
                shared[op.path] = handler
                router.add_route("*", op.path, handler)
            elif first is not handler:
                raise ValueError(f"the operations at {op.path} must share one handler ({op.name} has another)")
        elif op.method == "GET":
            router.add_get(op.path, handler)
        else:
            router.add_route(op.method, op.path, handler)
