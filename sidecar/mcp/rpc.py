"""MCP's wire-level names, shared by the HTTP endpoint, the methods and the stdio server: the
JSON-RPC error codes and ``RpcError``, the protocol versions and headers, the server's instructions
and ``Backend`` (what answers one request). Nothing here imports the application, so a stdio server
that only forwards to a running sidecar does not load it."""

from __future__ import annotations

from typing import Any, Protocol

__all__ = [
    "ASSUMED_VERSION",
    "INSTRUCTIONS",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PROTOCOL_VERSIONS",
    "RESOURCE_NOT_FOUND",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "Backend",
    "RpcError",
]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESOURCE_NOT_FOUND, INTERNAL_ERROR = -32002, -32603
PROTOCOL_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ASSUMED_VERSION = "2025-03-26"  # what the MCP specification says a request without MCP-Protocol-Version speaks
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
INSTRUCTIONS = (
    "Durable memory for this agent. Search it (memory_search) before answering from memory and save what "
    "is worth keeping (memory_write, memory_remember). memory_write reports success only once the bytes are "
    "on stable storage; an error result means nothing was saved, so say so. On a cap error, consolidate the "
    'file\'s entries and retry in the same turn with mode "replace". Which tools are listed follows what '
    "memory can do now: list the tools again at the start of each run. The resources are the memory files; "
    "the memory_block prompt is the memory to keep in mind."
)


class RpcError(Exception):
    """A JSON-RPC error answer, with the HTTP status it travels under."""

    def __init__(self, code: int, message: str, *, status: int = 200, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.data = code, message, status, data


class Backend(Protocol):
    """Answers one MCP request; a fault is an RpcError."""

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...
