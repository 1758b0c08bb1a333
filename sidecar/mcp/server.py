"""MCP over streamable HTTP at ``/mcp``: the memory tools for the agent's model; ``GET /memory/tools``.

A small JSON-RPC 2.0 endpoint: each POST gets one JSON body, ``initialize`` mints the
``Mcp-Session-Id`` every later message carries, ``DELETE`` ends it. ``GET`` opens the session's
server stream, which carries only the notice that the tool list changed (``clients.py``).
The methods themselves (tools, resources, the memory block prompt) are ``sidecar.mcp.methods``,
which the stdio server answers with too; protocol faults are JSON-RPC errors with their standard
codes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import structlog
from aiohttp import web

from sidecar import __version__
from sidecar.contract import ToolName, ToolsAnswer
from sidecar.errors import EngineUnavailable
from sidecar.http.jsonio import json_problem
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.mcp.catalog import TOOLS, offered, parse_allowlist
from sidecar.mcp.clients import McpSessions
from sidecar.mcp.methods import capabilities, dispatch
from sidecar.mcp.rpc import (
    ASSUMED_VERSION,
    INSTRUCTIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    PROTOCOL_VERSIONS,
    SESSION_HEADER,
    VERSION_HEADER,
    RpcError,
)
from sidecar.mcp.tools import tool_definitions
from sidecar.tasks import stop_task

__all__ = [
    "PROTOCOL_VERSIONS",
    "SESSIONS",
    "TOOL_NAMES",
    "McpSessions",
    "mcp_endpoint",
    "memory_tools",
    "setup",
    "tool_definitions",
]

log = structlog.get_logger("sidecar.mcp")

TOOL_NAMES = tuple(t.name for t in TOOLS)
#: How often the offered tools are compared with what each watching session last listed (each look
#: probes the disk, so only while a session has a stream open), and how long a quiet stream waits
#: before a keep-alive comment (which also finds a client that went away).
WATCH_EVERY_S = 5.0
KEEPALIVE_S = 15.0


SESSIONS = web.AppKey("mcp_sessions", McpSessions)
WATCH_EVERY = web.AppKey("mcp_watch_every", float)


def setup(app: web.Application) -> None:
    """Give ``app`` its MCP session table and the watch that tells sessions
    their tool list changed; call before it starts. A ``--mcp-tools`` entry that names no tool or
    group stops the start here, naming it."""
    parse_allowlist(app[SETTINGS].mcp_tools)
    app[SESSIONS] = McpSessions()
    app[WATCH_EVERY] = WATCH_EVERY_S
    app.cleanup_ctx.append(_watching)
    app.on_shutdown.append(_end_streams)


async def _watching(app: web.Application) -> AsyncIterator[None]:
    task = asyncio.create_task(_watch(app), name="mcp-list-watch")
    yield
    await stop_task(task)


async def _watch(app: web.Application) -> None:
    """Tell each session with a stream open when the tools it would list differ from its last list."""
    sessions = app[SESSIONS]
    while True:
        await asyncio.sleep(app[WATCH_EVERY])
        if not sessions.watching():
            continue
        try:
            names = await offered(app)
        except Exception as exc:  # a failed look is tried again next time; the watch goes on
            log.warning("mcp.watch_failed", error=f"{type(exc).__name__}: {exc}")
            continue
        told = sessions.tell_changed(names)
        if told:
            log.info("mcp.tools_changed", sessions=told, tools=len(names))


async def _end_streams(app: web.Application) -> None:
    """At shutdown, before handlers are waited for: every stream ends, so none holds it up."""
    app[SESSIONS].end_streams()


async def memory_tools(request: web.Request) -> web.Response:
    state = await request.app[SIDECAR].sink_health()
    answer: ToolsAnswer = {
        "healthy": state.healthy,
        "reasons": state.reasons,
        "tools": cast(list[ToolName], await offered(request.app)),
    }
    return web.json_response(answer)


# -- transport -------------------------------------------------------------------------------------
async def mcp_endpoint(request: web.Request) -> web.StreamResponse:
    if "Origin" in request.headers:  # no browser is a client of a container-local sidecar (DNS rebinding)
        return _rpc_error(None, RpcError(INVALID_REQUEST, "requests from a browser origin are refused", status=403))
    if request.method == "POST":
        return await _post(request)
    if request.method == "DELETE":
        return _delete(request)
    if request.method == "GET":
        return await _stream(request)
    response = _rpc_error(None, RpcError(INVALID_REQUEST, "method not allowed: use POST, GET or DELETE", status=405))
    response.headers["Allow"] = "GET, POST, DELETE"
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
    if message["method"] == "tools/list":
        request.app[SESSIONS].listed(request.headers[SESSION_HEADER], [t["name"] for t in result["tools"]])
    return web.json_response({"jsonrpc": "2.0", "id": msg_id, "result": result})


async def _stream(request: web.Request) -> web.StreamResponse:
    """``GET /mcp``: the session's server stream (server-sent events), on which it is told when its
    tool list changed; it stays open until the client goes, the session ends or the server stops."""
    accept = request.headers.get("Accept", "")
    if "text/event-stream" not in accept and "*/*" not in accept:
        return _rpc_error(None, RpcError(INVALID_REQUEST, "the stream is text/event-stream", status=406))
    try:
        _check_version_header(request)
        sid = request.headers.get(SESSION_HEADER, "")
        _session(request)
    except RpcError as exc:
        return _rpc_error(None, exc)
    stream = request.app[SESSIONS].attach(sid)
    if stream is None:
        return _rpc_error(None, RpcError(INVALID_REQUEST, "unknown or expired session: initialize again", status=404))
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-store"})
    await response.prepare(request)
    try:
        while True:
            try:
                async with asyncio.timeout(KEEPALIVE_S):
                    message = await stream.get()
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if message is None:
                break
            await response.write(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")
    except ConnectionResetError:
        pass  # the client went away
    finally:
        request.app[SESSIONS].detach(sid, stream)
    return response


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


#: JSON-RPC's implementation-defined server error: here, every session is in use.
SERVER_BUSY = -32000


def _initialize(request: web.Request, msg_id: Any, params: Any) -> web.Response:
    """Negotiate the version (the client's if we speak it, else our newest) and open a session."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return _rpc_error(msg_id, RpcError(INVALID_PARAMS, "initialize needs params.protocolVersion (a string)"))
    asked = params["protocolVersion"]
    version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
    try:
        sid = request.app[SESSIONS].open(version)
    except EngineUnavailable as exc:  # every session in use: refused, none ended for it
        return _rpc_error(msg_id, RpcError(SERVER_BUSY, exc.message, status=503, data=exc.body()["error"]))
    client = params.get("clientInfo")
    client_name = str(client.get("name", ""))[:80] if isinstance(client, dict) else ""
    log.info("mcp.session_opened", version=version, asked=asked, client=client_name)
    result = {
        "protocolVersion": version,
        # A client that opens the session's stream (GET /mcp) is told when its tool list changed.
        "capabilities": capabilities(list_changed=True),
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
