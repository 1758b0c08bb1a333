"""Every operation the sidecar offers, in one table, and the rules that hold for all of them.

Each way in (the HTTP routes, the MCP tools, the crew listener) looks its operation up here and
runs ``admit`` before the operation's own code, so a rule written here cannot be skipped by a new
route: a test walks the application's routes and fails on any that is not in ``OPERATIONS``.

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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from sidecar.errors import BadRequest, Forbidden, refuse_unknown

__all__ = ["OPERATIONS", "Memory", "Operation", "admit", "check_values", "find", "refuse_unknown"]

#: How an operation stands to the agent's memory: ``none`` (it neither reads nor writes it),
#: ``read`` or ``write`` (refused when memory is off), ``empty`` (answers empty when memory is off).
Memory = Literal["none", "read", "write", "empty"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One capability: its name, where HTTP serves it, and how it stands to memory."""

    name: str
    method: str
    path: str
    memory: Memory
    #: The JSON body's fields, or None for an operation that reads no JSON body of its own.
    body: frozenset[str] | None
    #: The query parameters it takes, or None for one that answers in a protocol of its own
    #: (MCP's JSON-RPC checks its own messages).
    query: frozenset[str] | None

    @property
    def touches_memory(self) -> bool:
        return self.memory != "none"


def _op(
    name: str, method: str, path: str, memory: Memory, *, body: str | None = None, query: str | None = ""
) -> Operation:
    fields = frozenset(body.split()) if body is not None else None
    return Operation(name, method, path, memory, fields, frozenset(query.split()) if query is not None else None)


OPERATIONS: tuple[Operation, ...] = (
    # The service itself: never memory.
    _op("healthz", "GET", "/healthz", "none"),
    _op("metrics", "GET", "/metrics", "none"),
    _op("openapi", "GET", "/openapi.json", "none"),
    _op("tools", "GET", "/memory/tools", "none"),
    _op("mcp", "POST", "/mcp", "none", query=None),  # each tool call is admitted on its own
    _op("mcp_close", "DELETE", "/mcp", "none", query=None),
    _op("mcp_stream", "GET", "/mcp", "none", query=None),  # the server's stream of list changes
    _op("agent_settings", "GET", "/memory/agent-settings", "none"),  # shows whether memory is off
    _op("status", "GET", "/memory/status", "none", query="scope"),  # the index's state, no memory text
    # Files, search and the block.
    _op(
        "search", "POST", "/memory/search", "read", body="after_seq context explain highlight limit query scope syntax"
    ),
    _op("write", "POST", "/memory/write", "write", body="content force mode path tier"),
    _op("read", "GET", "/memory/read", "read", query="tier path line_start line_end"),
    _op("reindex", "POST", "/memory/reindex", "write", query="scope"),
    _op(
        "block",
        "POST",
        "/memory/block",
        "empty",
        body="agent_id budget layers nudges peer_context query recall recall_k role room session_id spotlight user_id workspace_id",
    ),
    # The journal and typed memories.
    _op(
        "journal_append",
        "POST",
        "/journal",
        "write",
        body="agent_id confidence crew_id entry_type expires_at id memory_type namespace payload priority refs severity summary tags topic_key ts workspace_id",
    ),
    _op("journal_list", "GET", "/journal", "read", query="workspace_id limit q"),
    _op(
        "episodic_recall",
        "POST",
        "/episodic/recall",
        "read",
        body="agent_id crew_id hybrid k query_text scope walk_depth workspace_id",
    ),
    _op(
        "remember",
        "POST",
        "/memory/remember",
        "write",
        body="agent_id confidence content expires_at memory_type namespace payload priority scope tags topic_key ttl_seconds workspace_id",
    ),
    _op(
        "recall",
        "POST",
        "/memory/recall",
        "read",
        body="agent_id explain k memory_types namespace query scope scoring tags workspace_id",
    ),
    _op(
        "feedback",
        "POST",
        "/memory/feedback",
        "write",
        body="agent_id id namespace scope signal topic_key workspace_id",
    ),
    _op("forget", "POST", "/memory/forget", "write", body="agent_id id namespace scope topic_key workspace_id"),
    _op("restore", "POST", "/memory/restore", "write", body="agent_id id namespace workspace_id"),
    _op(
        "session",
        "POST",
        "/memory/session",
        "write",
        body="agent_id compaction_count messages session_id source_id summary workspace_id",
    ),
    _op("memories", "GET", "/memory/memories", "read", query="workspace_id agent_id namespace topic_key limit"),
    _op("health", "GET", "/memory/health", "read", query="workspace_id crew_id"),
    _op("health_compute", "POST", "/memory/health", "write", query="workspace_id crew_id recompute"),
    _op("consolidate", "POST", "/memory/consolidate", "write", body="dry_run since tier"),
    # The knowledge graph.
    _op(
        "kg_add",
        "POST",
        "/kg/add",
        "write",
        body="confidence object predicate scope source subject valid_from workspace_id",
    ),
    _op(
        "kg_query",
        "POST",
        "/kg/query",
        "read",
        body="as_of before direction entity include_invalid limit predicate scope workspace_id",
    ),
    _op(
        "kg_invalidate",
        "POST",
        "/kg/invalidate",
        "write",
        body="fact_id object predicate scope subject valid_to workspace_id",
    ),
    _op("kg_timeline", "POST", "/kg/timeline", "read", body="entity limit scope workspace_id"),
    _op("kg_traverse", "POST", "/kg/traverse", "read", body="as_of entity hops scope workspace_id"),
    _op("kg_tunnels", "POST", "/kg/tunnels", "read", body="limit room_a room_b scope workspace_id"),
    _op("kg_stats", "GET", "/kg/stats", "read", query="workspace_id scope"),
    # The palace.
    _op("list", "GET", "/memory/list", "read", query="wing room"),
    _op("taxonomy", "GET", "/memory/taxonomy", "read"),
    _op("delete", "POST", "/memory/delete", "write", body="heading path tier"),
    _op("identity", "POST", "/memory/identity", "write", body="identity"),
    _op("diary_write", "POST", "/memory/diary", "write", body="agent_id content"),
    _op("diary_read", "GET", "/memory/diary", "read", query="agent_id limit"),
    _op("ingest", "POST", "/memory/ingest", "write", body="dry_run turns"),
    # The memory browser (sidecar.ui): read-only pages, each a GET whose form fields are its query.
    _op("ui", "GET", "/ui", "read"),
    _op("ui_file", "GET", "/ui/file", "read", query="tier path"),
    _op("ui_search", "GET", "/ui/search", "read", query="query scope limit"),
    _op("ui_memories", "GET", "/ui/memories", "read", query="memory_type namespace tag agent_id workspace_id"),
    _op("ui_memory", "GET", "/ui/memory", "read", query="topic_key namespace agent_id workspace_id"),
    _op("ui_journal", "GET", "/ui/journal", "read", query="q workspace_id limit"),
    _op("ui_graph", "GET", "/ui/graph", "read", query="entity workspace_id scope"),
    _op("ui_health", "GET", "/ui/health", "read", query="workspace_id crew_id"),
    _op("ui_block", "GET", "/ui/block", "read", query="query budget role"),
)

_BY_ROUTE: dict[tuple[str, str], Operation] = {(op.method, op.path): op for op in OPERATIONS}


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
