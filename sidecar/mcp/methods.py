"""The MCP methods a client calls, whatever carries them (streamable HTTP at ``/mcp``, or stdio).

``dispatch`` answers one request against the application: ``tools/list`` (what the tools can do
now), ``tools/call`` (arguments held to the tool's input schema, the result as text and as
structured content matching its output schema), ``resources/*`` (the tier's markdown files),
``prompts/*`` (the memory block) and ``ping``. A tool's failure is an ``isError`` result carrying
the HTTP API's error body, never a false success; a fault in the request itself is an ``RpcError``
with its JSON-RPC code.
"""

from __future__ import annotations

import functools
from typing import Any

import structlog
from aiohttp import web

from sidecar.errors import BadRequest, EngineUnavailable, SidecarError
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.mcp import prompts, resources
from sidecar.mcp.arguments import check_arguments
from sidecar.mcp.catalog import ToolSpec, allowed, canonical, offered
from sidecar.mcp.rpc import (
    INSTRUCTIONS,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
    RpcError,
)
from sidecar.mcp.tools import IMPLEMENTATIONS, probe, tool_definitions
from sidecar.ops.registry import OPERATIONS, admit
from sidecar.settings import Settings

__all__ = [
    "INSTRUCTIONS",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RpcError",
    "call_tool",
    "capabilities",
    "definitions",
    "dispatch",
    "tool_error",
]

log = structlog.get_logger("sidecar.mcp")


def capabilities(*, list_changed: bool) -> dict[str, Any]:
    """What this server offers; ``list_changed``: whether its transport can tell a client the tool
    list changed (the list follows the memory sink's health)."""
    return {
        "tools": {"listChanged": list_changed},
        "resources": {"listChanged": False, "subscribe": False},
        "prompts": {"listChanged": False},
    }


async def dispatch(app: web.Application, method: str, params: Any) -> dict[str, Any]:
    """The result of one MCP request, or an RpcError."""
    if params is not None and not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    params = params or {}
    if method == "ping":
        return {}
    if method == "tools/list":
        defs = definitions(app[SETTINGS])
        return {"tools": [defs[name] for name in await offered(app)]}
    if method == "tools/call":
        return await call_tool(app, params)
    if method == "resources/list":
        return {"resources": await resources.listed(app)}
    if method == "resources/read":
        return await _answer(resources.read(app, _string(params, "uri")))
    if method == "prompts/list":
        return {"prompts": prompts.listed(app)}
    if method == "prompts/get":
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
        return await _answer(prompts.get(app, _string(params, "name"), arguments))
    raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")


@functools.lru_cache(maxsize=8)
def definitions(settings: Settings) -> dict[str, dict[str, Any]]:
    """Every tool's definition for these settings (built once: the schemas do not change)."""
    return tool_definitions(settings)


async def call_tool(app: web.Application, params: dict[str, Any]) -> dict[str, Any]:
    """``tools/call``: the tool's result, or an isError result saying why nothing was done."""
    name, args = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "params.name must be a string")
    spec = canonical(name)
    settings = app[SETTINGS]
    if spec is None or (settings.memory_enabled and spec.name not in allowed(settings)):
        raise RpcError(INVALID_PARAMS, f"unknown tool: {name!r}")
    if args is not None and not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
    args = args or {}
    try:
        await _admit(app, spec)
        definition = definitions(settings)[spec.name]
        read_only = bool(definition["annotations"]["readOnlyHint"])
        await check_arguments(definition["inputSchema"], args, probe(app, spec.name, read_only=read_only))
        body, text = await IMPLEMENTATIONS[spec.name](app, args)
    except SidecarError as exc:
        log.info("mcp.tool_error", tool=spec.name, code=exc.code)
        return tool_error(exc)
    except Exception:
        log.exception("mcp.tool_failed", tool=spec.name)
        return tool_error(
            SidecarError("internal error: the outcome is unknown, do not assume it happened; see the sidecar log")
        )
    return {"content": [{"type": "text", "text": text}], "structuredContent": dict(body), "isError": False}


_OPERATIONS = {op.name: op for op in OPERATIONS}


async def _admit(app: web.Application, spec: ToolSpec) -> None:
    """Refuse a call the tool cannot do now: memory off (the registry's rule, as over HTTP), or the
    sink not taking what it needs."""
    admit(_OPERATIONS[spec.operation], memory_enabled=app[SETTINGS].memory_enabled)
    if spec.needs not in ("write", "room", "search") or spec.name in await offered(app):
        return
    state = await app[SIDECAR].sink_health()
    why = "; ".join(state.reasons) or "unknown"
    raise EngineUnavailable(
        f"{spec.name} is unavailable: the memory sink is not healthy ({why}). Nothing was written or read; "
        "tell the user the memory could not be saved or read instead of claiming it was.",
        code="sink_unavailable",
        reasons=state.reasons,
    )


def tool_error(exc: SidecarError) -> dict[str, Any]:
    """An isError result: the HTTP API's error body as structured content, and readable text."""
    body = exc.body()
    lines = [f"Error ({exc.code}): {exc.message}"]
    usage = exc.extra.get("usage")
    if isinstance(usage, dict):
        lines.append(f"Usage: {usage.get('text')}")
    if "current_entries" in exc.extra:
        lines.append(f"Current entries:\n{exc.extra['current_entries']}")
    return {"content": [{"type": "text", "text": "\n".join(lines)}], "structuredContent": body, "isError": True}


def _string(params: dict[str, Any], key: str) -> str:
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise RpcError(INVALID_PARAMS, f"params.{key} must be a non-empty string")
    return value


async def _answer(pending: Any) -> dict[str, Any]:
    """A resource or prompt's answer; the sidecar's refusal (no such file, memory off) becomes an
    RpcError carrying its error body, as these methods have no isError result."""
    try:
        result: dict[str, Any] = await pending
    except BadRequest as exc:
        raise RpcError(INVALID_PARAMS, exc.message, data=exc.body()) from None
    except SidecarError as exc:
        code = {403: INVALID_PARAMS, 404: RESOURCE_NOT_FOUND}.get(exc.status, INTERNAL_ERROR)
        raise RpcError(code, exc.message, data=exc.body()) from None
    return result
