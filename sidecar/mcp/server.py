"""MCP over streamable HTTP at ``/mcp``: the memory tools for the agent's model; ``GET /memory/tools``.

A small JSON-RPC 2.0 endpoint: each POST gets one JSON body (no SSE stream, so ``GET /mcp`` is
405), ``initialize`` mints the ``Mcp-Session-Id`` every later message carries, ``DELETE`` ends it.
memory.write and memory.read are listed and callable only while the sink is healthy, memory.search
while the agent index answers. A tool failure is an ``isError`` result carrying the HTTP API's error
material, never a false success; protocol faults are JSON-RPC errors with their standard codes.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import structlog
from aiohttp import web

from sidecar import __version__
from sidecar.contract import MAX_LIMIT, ReadRequest, ToolName, ToolsAnswer, WriteRequest, request_schema
from sidecar.episodic.lifecycle import JOURNAL
from sidecar.errors import BadRequest, EngineUnavailable, SidecarError
from sidecar.http.jsonio import json_problem
from sidecar.http.memories import feedback_op, forget_op, recall_op, remember_op
from sidecar.http.memory_schemas import request_schemas
from sidecar.keys import SETTINGS, WRITES
from sidecar.kg.lifecycle import KG, kg_op
from sidecar.kg.requests import REQUESTS as KG_REQUESTS
from sidecar.mcp.palace_tools import palace_tool, palace_tools
from sidecar.retrieval.answer import search_memory
from sidecar.settings import Settings
from sidecar.write import sink as health
from sidecar.write.reader import read_memory
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
FILE_TOOLS = ("memory.write", "memory.read", "memory.search", "memory.check_duplicate")
#: Typed memories in the journal: offered whenever the journal runs (they do not touch the files).
JOURNAL_TOOLS = ("memory.remember", "memory.recall", "memory.feedback", "memory.forget")
#: The knowledge graph: offered whenever the graph runs.
KG_TOOLS = ("kg.add", "kg.query", "kg.invalidate", "kg.timeline", "kg.traverse", "kg.tunnels", "kg.stats")
#: The palace: read tools always, the tools that write only while memory.write is offered.
PALACE_READ_TOOLS = ("memory.list", "memory.taxonomy", "memory.diary_read")
PALACE_WRITE_TOOLS = ("memory.delete", "memory.set_identity", "memory.diary_write", "memory.ingest")
TOOL_NAMES = (*FILE_TOOLS, *JOURNAL_TOOLS, *KG_TOOLS, *PALACE_READ_TOOLS, *PALACE_WRITE_TOOLS)
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INSTRUCTIONS = (
    "Durable memory for this agent. memory.write reports success only once the bytes are on stable "
    "storage; an error result means nothing was saved, so say so. On a cap error, consolidate the "
    'current_entries and retry in the same turn with mode "replace". Which tools are listed follows the '
    "memory sink's health: list the tools again at the start of each run."
)


class RpcError(Exception):
    """A JSON-RPC error answer, with the HTTP status it travels under."""

    def __init__(self, code: int, message: str, *, status: int = 200, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.status, self.data = code, message, status, data


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
    """Give ``app`` its MCP session table and the sink-health cache; call before it starts."""
    health.setup(app)
    app[SESSIONS] = McpSessions()


@routes.get("/memory/tools")
async def memory_tools(request: web.Request) -> web.Response:
    state = await sink_health(request.app)
    answer: ToolsAnswer = {
        "healthy": state.healthy,
        "reasons": state.reasons,
        "tools": cast(list[ToolName], await _offered(request.app)),
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
        result = await _dispatch(request.app, message["method"], message.get("params"))
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
        # listChanged is false: with no server stream there is no way to deliver the notification.
        "capabilities": {"tools": {"listChanged": False}},
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


# -- methods ---------------------------------------------------------------------------------------
async def _dispatch(app: web.Application, method: str, params: Any) -> dict[str, Any]:
    if params is not None and not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    if method == "ping":
        return {}
    if method == "tools/list":
        defs = tool_definitions(app[SETTINGS])
        return {"tools": [defs[name] for name in await _offered(app)]}
    if method == "tools/call":
        return await _call_tool(app, params or {})
    raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")


async def _call_tool(app: web.Application, params: dict[str, Any]) -> dict[str, Any]:
    name, args = params.get("name"), params.get("arguments")
    if not isinstance(name, str):
        raise RpcError(INVALID_PARAMS, "params.name must be a string")
    if name not in TOOL_NAMES:
        raise RpcError(INVALID_PARAMS, f"unknown tool: {name!r}")
    if args is not None and not isinstance(args, dict):
        raise RpcError(INVALID_PARAMS, "params.arguments must be an object")
    state = await sink_health(app)
    gated = name in FILE_TOOLS and name not in state.tools
    if gated or (name in PALACE_WRITE_TOOLS and "memory.write" not in state.tools):
        why = "; ".join(state.reasons) or "unknown"
        return _tool_error(
            EngineUnavailable(
                f"{name} is unavailable: the memory sink is not healthy ({why}). Nothing was written or read; "
                "tell the user the memory could not be saved or read instead of claiming it was.",
                code="sink_unavailable",
                reasons=state.reasons,
            )
        )
    try:
        body, text = await _TOOLS[name](app, args or {})
    except SidecarError as exc:
        log.info("mcp.tool_error", tool=name, code=exc.code)
        return _tool_error(exc)
    except Exception:
        log.exception("mcp.tool_failed", tool=name)
        return _tool_error(
            SidecarError("internal error: the outcome is unknown, do not assume it happened; see the sidecar log")
        )
    return {"content": [{"type": "text", "text": text}], "structuredContent": body, "isError": False}


async def _offered(app: web.Application) -> list[str]:
    """The file tools the sink's health allows, then the journal's tools while the journal runs."""
    names = list((await sink_health(app)).tools)
    writable = "memory.write" in names
    names += list(JOURNAL_TOOLS) if JOURNAL in app else []
    names += list(KG_TOOLS) if KG in app else []
    return names + list(PALACE_READ_TOOLS) + (list(PALACE_WRITE_TOOLS) if writable else [])


def _tool_error(exc: SidecarError) -> dict[str, Any]:
    """An isError result: the HTTP API's error body as structured content, and readable text."""
    body = exc.body()
    lines = [f"Error ({exc.code}): {exc.message}"]
    usage = exc.extra.get("usage")
    if isinstance(usage, dict):
        lines.append(f"Usage: {usage.get('text')}")
    if "current_entries" in exc.extra:
        lines.append(f"Current entries:\n{exc.extra['current_entries']}")
    return {"content": [{"type": "text", "text": "\n".join(lines)}], "structuredContent": body, "isError": True}


# -- tools -----------------------------------------------------------------------------------------
ToolResult = tuple[Mapping[str, Any], str]


async def _write(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await app[WRITES].write(WriteRequest.from_json(args))
    if "duplicate_of" in body:
        dup = body["duplicate_of"]
        text = (
            f"Not written: memory already holds this at {dup['path']}:{dup['line_start']}-{dup['line_end']} "
            f"(similarity {dup['similarity']}). Send force: true to append it anyway."
        )
        return body, text
    text = f"Saved durably to {body['tier']}/{body['path']} ({body['bytes']} bytes, {body['usage']['text']})."
    if "warning" in body:
        text += f"\nWarning: {body['warning']}\nCurrent entries:\n{body['current_entries']}"
    return body, text


async def _read(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await read_memory(app, args)
    return body, f"{body['tier']}/{body['path']} ({body['bytes']} bytes):\n{body['content']}"


async def _search(app: web.Application, args: dict[str, Any]) -> ToolResult:
    """The same search as ``POST /memory/search``, ``after_seq`` barrier included."""
    body = await search_memory(app, args)
    lines = [
        f"{i}. [{hit['source']}] {hit['path']}:{hit['line_start']}-{hit['line_end']} {hit['heading']}\n   {hit['snippet']}"
        for i, hit in enumerate(body["results"], 1)
    ]
    text = "\n".join(lines) if lines else "No memory matched."
    if body.get("degraded"):
        text += f"\n(degraded: {', '.join(body['degraded'])} could not be searched)"
    return body, text


async def _check_duplicate(app: web.Application, args: dict[str, Any]) -> ToolResult:
    content, tier, path = args.get("content"), args.get("tier", "agent"), args.get("path")
    if not isinstance(content, str) or not content.strip():
        raise BadRequest("content must be a non-empty string", code="invalid_content")
    req = WriteRequest.from_json({"tier": tier, "path": path if path is not None else "x.md", "content": content})
    found = await app[WRITES].check_duplicate(req.tier, req.path if path is not None else None, content)
    if found is None:
        return {"duplicate": False, "duplicate_of": None}, "New: memory holds nothing this close."
    dup = found.to_json()
    text = f"Duplicate of {dup['path']}:{dup['line_start']}-{dup['line_end']} (similarity {dup['similarity']})."
    return {"duplicate": True, "duplicate_of": dup}, text


async def _remember(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await remember_op(app, args)
    text = f"Remembered {body['memory_type']} {body['id']}"
    if body.get("topic_key"):
        text += f" under topic key {body['topic_key']!r}"
    if body.get("supersedes"):
        text += f", replacing {body['supersedes']} (kept as history)"
    return body, text + "."


async def _recall(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await recall_op(app, args)
    lines = [
        f"{i}. [{hit['memory_type'] or hit['entry_type']}, {hit['source']}, score {hit['score']:.3f}] {hit['content']}"
        f"\n   id {hit['id']}" + (f", topic key {hit['topic_key']}" if hit.get("topic_key") else "")
        for i, hit in enumerate(body["hits"], 1)
    ]
    text = "\n".join(lines) if lines else "No memory matched."
    if body.get("degraded"):
        text += f"\n(degraded: {', '.join(body['degraded'])} could not be recalled)"
    return body, text


async def _feedback(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await feedback_op(app, args)
    text = f"Feedback {body['signal']} on {body['id']}: importance {body['importance']:.2f}, status {body['status']}."
    return body, text


async def _forget(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await forget_op(app, args)
    return body, f"Forgot {len(body['forgotten'])} entr{'y' if len(body['forgotten']) == 1 else 'ies'}."


def _kg(operation: str) -> Callable[[web.Application, dict[str, Any]], Awaitable[ToolResult]]:
    """The ``kg.<operation>`` tool: the same operation as ``POST /kg/<operation>``, its facts as lines."""

    async def tool(app: web.Application, args: dict[str, Any]) -> ToolResult:
        body = await kg_op(app, operation, args)
        listed = body.get("facts")
        facts = listed if isinstance(listed, list) else ([body["fact"]] if "fact" in body else [])
        lines = [
            f"#{f['id']} {f['subject']} {f['predicate']} {f['object']} [{f['valid_from'][:10]} .. "
            f"{(f['valid_to'] or 'now')[:10]}] {f['source']}"
            for f in facts
        ]
        if isinstance(body.get("tunnels"), list):
            lines += [f"{t['name']}: {', '.join(t['rooms'])}" for t in body["tunnels"]]
        if "nodes" in body:
            lines += [f"{n['name']} ({n['hops']} hop{'s' if n['hops'] != 1 else ''})" for n in body["nodes"]]
        if operation == "stats":
            lines.append(
                f"{body['entities']} entities, {body['facts']} facts ({body['current']} current, "
                f"{body['invalidated']} ended), {body['rooms']} rooms, {body['tunnels']} tunnels"
            )
        return body, "\n".join(lines) if lines else "Nothing in the graph matched."

    return tool


_TOOLS: dict[str, Callable[[web.Application, dict[str, Any]], Awaitable[ToolResult]]] = {
    "memory.write": _write,
    "memory.read": _read,
    "memory.search": _search,
    "memory.check_duplicate": _check_duplicate,
    "memory.remember": _remember,
    "memory.recall": _recall,
    "memory.feedback": _feedback,
    "memory.forget": _forget,
    **{name: _kg(name.removeprefix("kg.")) for name in KG_TOOLS},
    **{name: palace_tool(name) for name in (*PALACE_READ_TOOLS, *PALACE_WRITE_TOOLS)},
}


def tool_definitions(settings: Settings) -> dict[str, dict[str, Any]]:
    """Name -> MCP tool definition; the tier and scope enums offer only what this role may use."""
    write_tiers = ["agent", "crew"] if settings.role == "lead" else ["agent"]
    read_tiers = ["agent", "crew"] if settings.has_crew else ["agent"]
    scopes = ["agent", "crew", "both"] if settings.has_crew else ["agent"]
    write = _tool(
        "memory.write",
        "Write memory",
        WRITE_DESCRIPTION,
        _input(WriteRequest.FIELDS, ("path", "content"), tier=write_tiers),
        hints=_hints(read_only=False, destructive=True, idempotent=False),
    )
    read = _tool(
        "memory.read",
        "Read memory",
        "Read one memory file as it is on disk; line_start and line_end (1-based, inclusive) read a range "
        "of its lines, e.g. the lines a search hit names.",
        _input(ReadRequest.FIELDS, ("path",), tier=read_tiers),
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    search = _tool(
        "memory.search",
        "Search memory",
        "Search memory (BM25, plus dense scores when a model is configured). Each hit names its file and "
        "lines; its snippet is a window around the matched terms (highlights: their [start, end) offsets, in "
        "Unicode code points), "
        'or with context "section" the whole heading section it is in, so the file need not be read next.',
        _input(("query", "limit", "scope", "after_seq", "context", "highlight"), ("query",), scope=scopes),
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    check = _tool(
        "memory.check_duplicate",
        "Check for a duplicate",
        "Before writing: does memory already hold this content (every line of it nearly word for word)? "
        "Names where, with a similarity. memory.write does the same check for appends.",
        _input(("content", "tier", "path"), ("content",), tier=write_tiers),
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    return {
        "memory.write": write,
        "memory.read": read,
        "memory.search": search,
        "memory.check_duplicate": check,
        **journal_tools(settings),
        **kg_tools(settings),
        **palace_tools(settings),
    }


def kg_tools(settings: Settings) -> dict[str, dict[str, Any]]:
    """The knowledge-graph tools; the crew scope is offered only on a lead (it holds the crew's graph)."""
    out = {}
    for name in KG_TOOLS:
        operation = name.removeprefix("kg.")
        schema = json.loads(json.dumps(KG_REQUESTS[operation]))
        if settings.role != "lead":
            schema["properties"]["scope"]["anyOf"][0]["enum"] = ["agent"]
        read_only = operation not in ("add", "invalidate")
        out[name] = _tool(
            name,
            f"Knowledge graph: {operation}",
            schema.pop("description"),
            schema,
            hints=_hints(read_only=read_only, destructive=False, idempotent=read_only),  # facts are never deleted
        )
    return out


def journal_tools(settings: Settings) -> dict[str, dict[str, Any]]:
    """The typed-memory tools; crew scopes are offered only where there is a crew."""
    schemas = request_schemas(has_crew=settings.has_crew, identity=False)
    remember = _tool(
        "memory.remember",
        "Remember a fact",
        "Store one typed memory (a fact, decision, preference, todo, error, context, workflow or meeting ledger) "
        "that later recall can find. With a topic_key it replaces the live memory holding that key (the old one "
        "is kept as history): use one for facts that change, e.g. current-sprint. expires_at or ttl_seconds "
        "makes it temporary. scope crew shares it with the crew.",
        schemas["remember"],
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    recall = _tool(
        "memory.recall",
        "Recall memories",
        "The memories most relevant to a query, best first, each with its id (for feedback or forget), type, "
        "score and topic key. Only memories that match the query are returned; an empty list means none did. "
        "explain shows what each score is made of.",
        schemas["recall"],
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    feedback = _tool(
        "memory.feedback",
        "Rate a memory",
        'Tell memory whether a recalled memory helped: "+" raises its importance, "-" lowers it; the third "-" '
        "retires it (never recalled again). Name it by id or topic_key.",
        schemas["feedback"],
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    forget = _tool(
        "memory.forget",
        "Forget a memory",
        "Remove a memory by id, or by topic_key (the memory and its history). It is archived, not served again.",
        schemas["forget"],
        hints=_hints(read_only=False, destructive=True, idempotent=True),
    )
    return {"memory.remember": remember, "memory.recall": recall, "memory.feedback": feedback, "memory.forget": forget}


def _input(fields: tuple[str, ...], required: tuple[str, ...], **enums: list[str]) -> dict[str, Any]:
    """A tool's input schema: the contract's field schemas, with the enums this role may use."""
    schema = request_schema({name: name for name in fields}, required, closed=True)
    for name, allowed in enums.items():
        schema["properties"][name]["enum"] = allowed
    if "limit" in schema["properties"]:
        schema["properties"]["limit"]["maximum"] = MAX_LIMIT
    return schema


WRITE_DESCRIPTION = (
    "Save markdown to durable memory. Success means the bytes are on stable storage; an error means nothing "
    "was saved. If a cap refuses the write, the error carries current_entries and usage: consolidate them "
    '(merge duplicates, drop stale lines, summarise) and retry in the same turn with mode "replace" carrying '
    "the consolidated body."
)


def _tool(name: str, title: str, description: str, schema: dict[str, Any], *, hints: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "annotations": {"title": title, **hints},
    }


def _hints(*, read_only: bool, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }
