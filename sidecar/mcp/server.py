"""MCP over streamable HTTP at ``/mcp``: the memory tools for the agent's model; ``GET /memory/tools``.

A small JSON-RPC 2.0 endpoint: each POST gets one JSON body (no SSE stream, so ``GET /mcp`` is
405), ``initialize`` mints the ``Mcp-Session-Id`` every later message carries, ``DELETE`` ends it.
The methods themselves (tools, resources, the memory block prompt) are ``sidecar.mcp.methods``,
which the stdio server answers with too; protocol faults are JSON-RPC errors with their standard
codes.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from typing import Any, cast

import structlog
from aiohttp import web

from sidecar import __version__
from sidecar.contract import ToolName, ToolsAnswer
from sidecar.http.jsonio import json_problem
from sidecar.keys import SETTINGS
from sidecar.mcp.catalog import TOOLS, offered, parse_allowlist
from sidecar.mcp.methods import (
    INSTRUCTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    RpcError,
    capabilities,
    dispatch,
)
from sidecar.mcp.tools import tool_definitions
from sidecar.write import sink as health
from sidecar.write.sink import sink_health

__all__ = [
    "PROTOCOL_VERSIONS",
    "SESSIONS",
    "TOOL_NAMES",
    "McpSessions",
    "routes",
    "setup",
    "tool_definitions",
]

log = structlog.get_logger("sidecar.mcp")
routes = web.RouteTableDef()

PROTOCOL_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
ASSUMED_VERSION = "2025-03-26"  # what the spec says a request without MCP-Protocol-Version speaks
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
MAX_SESSIONS = 1024
TOOL_NAMES = tuple(t.name for t in TOOLS)


class McpSessions:
    """Live sessions (id -> negotiated protocol version); past ``limit`` the least recently used goes."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._live: OrderedDict[str, str] = OrderedDict()

    def open(self, version: str) -> str:
        sid = secrets.token_urlsafe(24)
        self._live[sid] = version
        while len(self._live) > self.limit:
            self._live.popitem(last=False)
        return sid

    def get(self, sid: str) -> str | None:
        version = self._live.get(sid)
        if version is not None:
            self._live.move_to_end(sid)
        return version

    def close(self, sid: str) -> bool:
        return self._live.pop(sid, None) is not None


SESSIONS = web.AppKey("mcp_sessions", McpSessions)


def setup(app: web.Application) -> None:
    """Give ``app`` its MCP session table and the sink-health cache; call before it starts.
    A ``--mcp-tools`` entry that names no tool or group stops the start here, naming it."""
    parse_allowlist(app[SETTINGS].mcp_tools)
    health.setup(app)
    app[SESSIONS] = McpSessions()


@routes.get("/memory/tools")
async def memory_tools(request: web.Request) -> web.Response:
    state = await sink_health(request.app)
    answer: ToolsAnswer = {
        "healthy": state.healthy,
        "reasons": state.reasons,
        "tools": cast(list[ToolName], await offered(request.app)),
    }
    return web.json_response(answer)


# -- transport -------------------------------------------------------------------------------------
@routes.route("*", "/mcp")
async def mcp_endpoint(request: web.Request) -> web.Response:
    if "Origin" in request.headers:  # no browser is a client of a container-local sidecar (DNS rebinding)
        return _rpc_error(None, RpcError(INVALID_REQUEST, "requests from a browser origin are refused", status=403))
    if request.method == "POST":
        return await _post(request)
    if request.method == "DELETE":
        return _delete(request)
    response = _rpc_error(
        None, RpcError(INVALID_REQUEST, "method not allowed: use POST (no server stream)", status=405)
    )
    response.headers["Allow"] = "POST, DELETE"
    return response


async def _post(request: web.Request) -> web.Response:
    try:
        message = await _read_message(request)
    except RpcError as exc:
        return _rpc_error(None, exc)
    msg_id = message.get("id")
    try:
        if message.get("method") == "initialize" and "id" in message:
            return _initialize(request, msg_id, message.get("params"))
        _check_version_header(request)
        _session(request)
        if "method" not in message or "id" not in message:
            return web.Response(status=202)  # a notification, or a response to a request we never send
        result = await dispatch(request.app, message["method"], message.get("params"))
    except RpcError as exc:
        return _rpc_error(msg_id, exc)
    return web.json_response({"jsonrpc": "2.0", "id": msg_id, "result": result})


def _delete(request: web.Request) -> web.Response:
    sid = request.headers.get(SESSION_HEADER)
    if not sid:
        return _rpc_error(None, RpcError(INVALID_REQUEST, f"missing {SESSION_HEADER} header", status=400))
    if not request.app[SESSIONS].close(sid):
        return _rpc_error(None, RpcError(INVALID_REQUEST, "unknown or expired session", status=404))
    return web.Response(status=204)


async def _read_message(request: web.Request) -> dict[str, Any]:
    """The one JSON-RPC message of a POST, after the Accept and Content-Type checks."""
    accept = [part.split(";")[0].strip().lower() for part in request.headers.get("Accept", "*/*").split(",")]
    if not {"application/json", "application/*", "*/*"} & set(accept):
        raise RpcError(INVALID_REQUEST, "the client must accept application/json", status=406)
    if request.content_type != "application/json":
        raise RpcError(INVALID_REQUEST, "Content-Type must be application/json", status=415)
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise RpcError(INVALID_REQUEST, f"request body is over {request.client_max_size} bytes", status=413) from None
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # also an integer of thousands of digits
        raise RpcError(PARSE_ERROR, json_problem(exc), status=400) from None
    return _checked(message)


def _checked(message: Any) -> dict[str, Any]:
    """``message`` if it is one well-formed JSON-RPC 2.0 request, notification or response."""

    def invalid(why: str) -> RpcError:
        return RpcError(INVALID_REQUEST, why, status=400)

    if isinstance(message, list):
        raise invalid("JSON-RPC batches are not supported")
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise invalid('not a JSON-RPC 2.0 message (need an object with "jsonrpc": "2.0")')
    msg_id = message.get("id")
    if "id" in message and (isinstance(msg_id, bool) or not isinstance(msg_id, str | int)):
        raise invalid("id must be a string or an integer")
    if "method" in message and not isinstance(message["method"], str):
        raise invalid("method must be a string")
    if "method" not in message and not ("id" in message and ("result" in message or "error" in message)):
        raise invalid("a message needs a method, or an id with a result or error")
    return message


def _initialize(request: web.Request, msg_id: Any, params: Any) -> web.Response:
    """Negotiate the version (the client's if we speak it, else our newest) and open a session."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return _rpc_error(msg_id, RpcError(INVALID_PARAMS, "initialize needs params.protocolVersion (a string)"))
    asked = params["protocolVersion"]
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
    sid = request.app[SESSIONS].open(version)
    client = params.get("clientInfo")
    client_name = str(client.get("name", ""))[:80] if isinstance(client, dict) else ""
    log.info("mcp.session_opened", version=version, asked=asked, client=client_name)
    result = {
        "protocolVersion": version,
        # listChanged is false here: with no server stream this transport cannot deliver the
        # notification (the stdio server can, and says true); INSTRUCTIONS ask the model to list again.
        "capabilities": capabilities(list_changed=False),
        "serverInfo": {"name": "memory-sidecar", "title": "Agent memory", "version": __version__},
        "instructions": INSTRUCTIONS,
    }
    body = {"jsonrpc": "2.0", "id": msg_id, "result": result}
    return web.json_response(body, headers={SESSION_HEADER: sid})


def _check_version_header(request: web.Request) -> None:
    asked = request.headers.get(VERSION_HEADER, ASSUMED_VERSION)
    if asked not in PROTOCOL_VERSIONS:
        data = {"supported": list(PROTOCOL_VERSIONS), "requested": asked}
        raise RpcError(INVALID_REQUEST, f"unsupported protocol version {asked!r}", status=400, data=data)


def _session(request: web.Request) -> str:
    sid = request.headers.get(SESSION_HEADER)
    if not sid:
        raise RpcError(INVALID_REQUEST, f"missing {SESSION_HEADER} header: initialize first", status=400)
    version = request.app[SESSIONS].get(sid)
    if version is None:
        raise RpcError(INVALID_REQUEST, "unknown or expired session: initialize again", status=404)
    return version


def _rpc_error(msg_id: Any, exc: RpcError) -> web.Response:
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        error["data"] = exc.data
    return web.json_response({"jsonrpc": "2.0", "id": msg_id, "error": error}, status=exc.status)
