"""Every operation the sidecar offers, in one table, and the rules that hold for all of them.

Each way in (the HTTP routes, the MCP tools, the crew listener) looks its operation up here and
runs ``admit`` before the operation's own code, so a rule written here cannot be skipped by a new
route: the HTTP routes are made by walking ``OPERATIONS`` (``sidecar.http.routes``), and a handler
named for no operation stops the application being built.
What each operation reads from its client (its JSON body's schema, its query parameters) is
``sidecar.ops.requests``'s: its fields are that schema's, the OpenAPI document gives it that
schema, and its MCP tool takes that schema, narrowed (``tests/http/test_requests.py``).

The rules:
- memory off (``memory_enabled`` false, from the environment, the flags or the agent's own
  ``memory.toml``) refuses every operation that reads or writes memory with 403
  ``memory_disabled``; the memory block answers empty instead (an orchestrator builds a prompt
  every turn and an empty block is what "no memory" means there);
- a request may carry only the fields its operation takes: any other is 400 ``unknown_field``,
  naming it (a typo such as ``limt`` would otherwise be ignored without a word);
- no value holds a NUL, a lone surrogate or an integer wider than 64 bits (400 naming the field):
  no store keeps them, and one such row once stopped a whole copy to the crew store.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from sidecar.errors import BadRequest, Forbidden, refuse_unknown
from sidecar.ops.requests import BODIES, PARAMS, Body, Param, Schema, params_schema

__all__ = ["OPERATIONS", "Memory", "Operation", "admit", "by_name", "check_values", "find", "refuse_unknown"]

#: How an operation stands to the agent's memory: ``none`` (it neither reads nor writes it),
#: ``read`` or ``write`` (refused when memory is off), ``empty`` (answers empty when memory is off).
Memory = Literal["none", "read", "write", "empty"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One capability: its name, where HTTP serves it, how it stands to memory, and what it reads
    from its client (``sidecar.ops.requests``: the fields below are the schemas' own)."""

    name: str
    method: str
    path: str
    memory: Memory
    #: Its JSON body's schema, or None for an operation that reads no JSON body of its own.
    request: Body | None
    #: Its query parameters, or None for one that answers in a protocol of its own (MCP's
    #: JSON-RPC checks its own messages).
    params: tuple[Param, ...] | None

    @property
    def touches_memory(self) -> bool:
        return self.memory != "none"

    @property
    def body(self) -> frozenset[str] | None:
        """The JSON body's fields, or None for an operation that reads no JSON body."""
        return self.request.fields if self.request is not None else None

    @property
    def query(self) -> frozenset[str] | None:
        """The query parameters' names, or None (see ``params``)."""
        return frozenset(p.name for p in self.params) if self.params is not None else None

    def arguments(self) -> Schema:
        """What the operation reads, as one object schema (a copy): its JSON body's schema, or its
        query parameters as the properties of a closed object. An MCP tool takes these arguments."""
        if self.request is not None:
            return copy.deepcopy(self.request.schema)
        return copy.deepcopy(params_schema(self.params or ()))


def _op(name: str, method: str, path: str, memory: Memory, *, own_protocol: bool = False) -> Operation:
    params = None if own_protocol else PARAMS.get(name, ())
    return Operation(name, method, path, memory, BODIES.get(name), params)


OPERATIONS: tuple[Operation, ...] = (
    # The service itself: never memory.
    _op("healthz", "GET", "/healthz", "none"),
    _op("metrics", "GET", "/metrics", "none"),
    _op("openapi", "GET", "/openapi.json", "none"),
    _op("tools", "GET", "/memory/tools", "none"),
    _op("mcp", "POST", "/mcp", "none", own_protocol=True),  # each tool call is admitted on its own
    _op("mcp_close", "DELETE", "/mcp", "none", own_protocol=True),
    _op("mcp_stream", "GET", "/mcp", "none", own_protocol=True),  # the server's stream of list changes
    _op("agent_settings", "GET", "/memory/agent-settings", "none"),  # shows whether memory is off
    _op("status", "GET", "/memory/status", "none"),  # the index's state, no memory text
    # Files, search and the block.
    _op("search", "POST", "/memory/search", "read"),
    _op("write", "POST", "/memory/write", "write"),
    _op("read", "GET", "/memory/read", "read"),
    _op("reindex", "POST", "/memory/reindex", "write"),
    _op("block", "POST", "/memory/block", "empty"),
    # The journal and typed memories.
    _op("journal_append", "POST", "/journal", "write"),
    _op("journal_list", "GET", "/journal", "read"),
    _op("episodic_recall", "POST", "/episodic/recall", "read"),
    _op("remember", "POST", "/memory/remember", "write"),
    _op("recall", "POST", "/memory/recall", "read"),
    _op("feedback", "POST", "/memory/feedback", "write"),
    _op("forget", "POST", "/memory/forget", "write"),
    _op("restore", "POST", "/memory/restore", "write"),
    _op("session", "POST", "/memory/session", "write"),
    _op("memories", "GET", "/memory/memories", "read"),
    _op("health", "GET", "/memory/health", "read"),
    _op("health_compute", "POST", "/memory/health", "write"),
    _op("consolidate", "POST", "/memory/consolidate", "write"),
    # The knowledge graph.
    _op("kg_add", "POST", "/kg/add", "write"),
    _op("kg_query", "POST", "/kg/query", "read"),
    _op("kg_invalidate", "POST", "/kg/invalidate", "write"),
    _op("kg_timeline", "POST", "/kg/timeline", "read"),
    _op("kg_traverse", "POST", "/kg/traverse", "read"),
    _op("kg_tunnels", "POST", "/kg/tunnels", "read"),
    _op("kg_stats", "GET", "/kg/stats", "read"),
    # The palace.
    _op("list", "GET", "/memory/list", "read"),
    _op("taxonomy", "GET", "/memory/taxonomy", "read"),
    _op("delete", "POST", "/memory/delete", "write"),
    _op("identity", "POST", "/memory/identity", "write"),
    _op("diary_write", "POST", "/memory/diary", "write"),
    _op("diary_read", "GET", "/memory/diary", "read"),
    _op("ingest", "POST", "/memory/ingest", "write"),
    # The memory browser (sidecar.ui): read-only pages, each a GET whose form fields are its query.
    _op("ui", "GET", "/ui", "read"),
    _op("ui_file", "GET", "/ui/file", "read"),
    _op("ui_search", "GET", "/ui/search", "read"),
    _op("ui_memories", "GET", "/ui/memories", "read"),
    _op("ui_memory", "GET", "/ui/memory", "read"),
    _op("ui_journal", "GET", "/ui/journal", "read"),
    _op("ui_graph", "GET", "/ui/graph", "read"),
    _op("ui_health", "GET", "/ui/health", "read"),
    _op("ui_block", "GET", "/ui/block", "read"),
)
_BY_ROUTE: dict[tuple[str, str], Operation] = {(op.method, op.path): op for op in OPERATIONS}


_BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}


def by_name(name: str) -> Operation:
    """The operation called ``name`` (KeyError for none)."""
    return _BY_NAME[name]


def find(method: str, path: str) -> Operation | None:
    """The operation HTTP serves at ``method`` ``path`` (the route's pattern, not the request's URL)."""
    return _BY_ROUTE.get((method, path))


def admit(op: Operation, *, memory_enabled: bool) -> bool:
    """Whether ``op`` runs as asked: False when memory is off and it answers empty instead.
    Raises 403 ``memory_disabled`` for an operation on memory while memory is off."""
    if memory_enabled or not op.touches_memory:
        return True
    if op.memory == "empty":
        return False
    raise Forbidden(
        "memory is off for this agent (memory: false): memory is not read, written or indexed",
        code="memory_disabled",
    )


#: The integers a request may carry: SQLite's (and PostgreSQL's bigint) range; anything wider is
#: no id, count or offset the sidecar has.
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def check_values(fields: Mapping[str, object]) -> None:
    """400 ``invalid_<field>`` naming the top-level field of a request that holds, anywhere inside
    it, text no store keeps (a NUL, or a lone surrogate: not Unicode) or an integer outside 64 bits.
    One check for every operation, before any of it runs, so nothing is stored half-way."""
    for name, value in fields.items():
        problem = _bad_value(value)
        if problem is not None:
            raise BadRequest(f"{name}: {problem}", code=f"invalid_{name}", field=name)


def _bad_value(value: object) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return "text must not contain NUL (U+0000)"
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return "text is not valid Unicode (a lone surrogate)"
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int):
            if not _INT_MIN <= item <= _INT_MAX:
                return "integer out of range (64 bits)"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None
