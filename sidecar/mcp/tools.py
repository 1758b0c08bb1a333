"""The MCP tools: what each one runs and how it is described to the model.

Every tool runs the same operation as its HTTP route (search, write, read, the journal's memories,
the graph, the palace) and answers with that route's JSON as structured content, plus a few lines
of text for the model. Definitions carry the input schema (from ``sidecar.contract`` and the
routes' schema modules), the output schema (``outputs``) and hints for the client.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from aiohttp import web

from sidecar.contract import (
    MAX_LIMIT,
    DeleteRequest,
    DiaryWriteRequest,
    DuplicateOf,
    IdentityRequest,
    IngestRequest,
    ReadRequest,
    SearchRequest,
    WriteRequest,
    request_schema,
)
from sidecar.errors import BadRequest
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.kg.requests import REQUESTS as KG_REQUESTS
from sidecar.kg.requests import KgRequest
from sidecar.mcp.arguments import Probe
from sidecar.mcp.catalog import TOOLS
from sidecar.mcp.outputs import output_schema
from sidecar.mcp.palace_tools import palace_tool, palace_tools
from sidecar.ops import files, journal, memories
from sidecar.ops.answers import DuplicateCheckAnswer
from sidecar.ops.crew import written_tiers
from sidecar.ops.kg import run as run_kg
from sidecar.ops.registry import by_name
from sidecar.ops.search import search
from sidecar.settings import Settings

__all__ = ["IMPLEMENTATIONS", "ToolResult", "probe", "tool_definitions"]

ToolResult = tuple[Mapping[str, Any], str]
Tool = Callable[[web.Application, dict[str, Any]], Awaitable[ToolResult]]


# -- what each tool runs ---------------------------------------------------------------------------
async def _write(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body, _ = await files.write(app[SIDECAR], WriteRequest.from_json(args))
    if "duplicate_of" in body:
        dup = body["duplicate_of"]
        text = (
            f"Not written: memory already holds this at {dup['path']}:{dup['line_start']}-{dup['line_end']} "
            f"(similarity {dup['similarity']}). Send force: true to append it anyway."
        )
        return body, text
    text = f"Saved durably to {body['tier']}/{body['path']} ({body['bytes']} bytes, {body['usage']['text']})."
    if "warning" in body:
        # The file's entries travel in the structured content; the text names the file instead of
        # echoing it on every write past the soft cap.
        text += (
            f"\nWarning: {body['warning']}\nRead {body['path']} with memory_read, then write it back "
            'consolidated with mode "replace".'
        )
    return body, text


async def _read(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await files.read(app[SIDECAR], ReadRequest.from_json(args))
    return body, f"{body['tier']}/{body['path']} ({body['bytes']} bytes):\n{body['content']}"


async def _search(app: web.Application, args: dict[str, Any]) -> ToolResult:
    """The same search as ``POST /memory/search``, ``after_seq`` barrier included."""
    body = await search(app[SIDECAR], SearchRequest.from_json(args))
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
    found = await app[SIDECAR].writes.check_duplicate(req.tier, req.path if path is not None else None, content)
    if found is None:
        fresh: DuplicateCheckAnswer = {"duplicate": False, "duplicate_of": None}
        return fresh, "New: memory holds nothing this close."
    dup = cast(DuplicateOf, found.to_json())  # the contract's shape, field for field
    text = f"Duplicate of {dup['path']}:{dup['line_start']}-{dup['line_end']} (similarity {dup['similarity']})."
    answer: DuplicateCheckAnswer = {"duplicate": True, "duplicate_of": dup}
    return answer, text


async def _remember(app: web.Application, args: dict[str, Any]) -> ToolResult:
    sc = app[SIDECAR]
    body = await memories.remember(sc, memories.remember_request(sc.settings, args), args)
    text = f"Remembered {body['memory_type']} {body['id']}"
    if body.get("topic_key"):
        text += f" under topic key {body['topic_key']!r}"
    if body.get("supersedes"):
        text += f", replacing {body['supersedes']} (kept as history)"
    return body, text + "."


async def _recall(app: web.Application, args: dict[str, Any]) -> ToolResult:
    sc = app[SIDECAR]
    body = await memories.recall(sc, memories.recall_request(sc.settings, args))
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
    sc = app[SIDECAR]
    body = await memories.feedback(sc, memories.feedback_request(sc.settings, args))
    text = f"Feedback {body['signal']} on {body['id']}: importance {body['importance']:.2f}, status {body['status']}."
    return body, text


async def _forget(app: web.Application, args: dict[str, Any]) -> ToolResult:
    sc = app[SIDECAR]
    body = await memories.forget(sc, memories.forget_request(sc.settings, args))
    return body, f"Forgot {len(body['forgotten'])} entr{'y' if len(body['forgotten']) == 1 else 'ies'}."


async def _restore(app: web.Application, args: dict[str, Any]) -> ToolResult:
    sc = app[SIDECAR]
    body = await memories.restore(sc, memories.restore_request(sc.settings, args))
    text = (
        f"Restored {body['id']}: {body['status']}, confidence {body['confidence']:.2f}, "
        f"importance {body['importance']:.2f}; memory_recall finds it again."
    )
    return body, text


async def _session(app: web.Application, args: dict[str, Any]) -> ToolResult:
    sc = app[SIDECAR]
    body, _ = await journal.session(sc, journal.session_request(sc.settings, args))
    verb = "Already kept" if body["replayed"] else "Kept"
    return body, f"{verb} the session's summary as {body['id']} (seq {body['seq']}): {body['l0_abstract']}"


def _kg(operation: str) -> Tool:
    """The ``kg_<operation>`` tool: the same operation as ``POST /kg/<operation>``, its facts as lines."""

    async def tool(app: web.Application, args: dict[str, Any]) -> ToolResult:
        # Any of the graph's seven answers, read by its keys.
        body: dict[str, Any] = dict(await run_kg(app[SIDECAR], KgRequest.from_json(operation, args)))
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


IMPLEMENTATIONS: dict[str, Tool] = {
    "memory_write": _write,
    "memory_read": _read,
    "memory_search": _search,
    "memory_check_duplicate": _check_duplicate,
    "memory_remember": _remember,
    "memory_recall": _recall,
    "memory_feedback": _feedback,
    "memory_forget": _forget,
    "memory_restore": _restore,
    "memory_session": _session,
    **{t.name: _kg(t.name.removeprefix("kg_")) for t in TOOLS if t.group == "kg"},
    **{t.name: palace_tool(t.name) for t in TOOLS if t.group == "palace"},
}


# -- the operations' own argument checks -----------------------------------------------------------
def probe(app: web.Application, name: str, *, read_only: bool) -> Probe | None:
    """The operation's own check of a tool's arguments, with the HTTP API's codes: its request
    parser, or for a tool that only reads, the tool itself (its refusal is harmless to provoke)."""
    settings = app[SETTINGS]
    parsers: dict[str, Callable[[dict[str, Any]], object]] = {
        "memory_write": WriteRequest.from_json,
        "memory_read": ReadRequest.from_json,
        "memory_search": SearchRequest.from_json,
        "memory_remember": lambda a: memories.remember_request(settings, a),
        "memory_recall": lambda a: memories.recall_request(settings, a),
        "memory_feedback": lambda a: memories.feedback_request(settings, a),
        "memory_forget": lambda a: memories.forget_request(settings, a),
        "memory_restore": lambda a: memories.restore_request(settings, a),
        "memory_session": lambda a: journal.session_request(settings, a),
        **{t.name: _kg_parser(t.name.removeprefix("kg_")) for t in TOOLS if t.group == "kg"},
        "memory_delete": DeleteRequest.from_json,
        "memory_set_identity": IdentityRequest.from_json,
        "memory_diary_write": DiaryWriteRequest.from_json,
        "memory_ingest": IngestRequest.from_json,
    }
    if read_only:
        tool = IMPLEMENTATIONS[name]

        async def run(args: dict[str, Any]) -> None:
            await tool(app, args)

        return run
    parser = parsers.get(name)
    if parser is None:
        return None

    async def parse(args: dict[str, Any]) -> None:
        parser(args)

    return parse


def _kg_parser(operation: str) -> Callable[[dict[str, Any]], object]:
    return lambda args: KgRequest.from_json(operation, args)


# -- definitions -----------------------------------------------------------------------------------
def tool_definitions(settings: Settings) -> dict[str, dict[str, Any]]:
    """Name -> MCP tool definition; the tier and scope enums offer only what this role may use."""
    write_tiers = written_tiers(settings)
    read_tiers = ["agent", "crew"] if settings.has_crew else ["agent"]
    scopes = ["agent", "crew", "both"] if settings.has_crew else ["agent"]
    write = _tool(
        "memory_write",
        "Write memory",
        WRITE_DESCRIPTION,
        arguments("write", tier=write_tiers),
        hints=_hints(read_only=False, destructive=True, idempotent=False),
    )
    read = _tool(
        "memory_read",
        "Read memory",
        "Read one memory file as it is on disk, e.g. the file a search hit or memory_list names; "
        "line_start and line_end (1-based, inclusive) read only those lines.",
        arguments("read", tier=read_tiers),
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    search_args = arguments("search", scope=scopes, leave_out=("syntax", "explain"))
    search_args["properties"]["limit"]["maximum"] = MAX_LIMIT
    search = _tool(
        "memory_search",
        "Search memory",
        "Search the memory files for what you or your crew noted before (keywords, and meaning when a "
        "model is configured); use it before answering from memory. Each hit names its file and lines; its "
        "snippet is a window around the matched terms (highlights: their [start, end) offsets, in Unicode "
        'code points), or with context "section" the whole heading section, so the file need not be read '
        "next. No hits means memory holds nothing on it. After a write, pass its seq as after_seq to see it.",
        search_args,
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    check = _tool(
        "memory_check_duplicate",
        "Check for a duplicate",
        "Before writing: does memory already hold this content (every line of it nearly word for word)? "
        "Names where, with a similarity. memory_write runs the same check on appends.",
        _input(("content", "tier", "path"), ("content",), tier=write_tiers),
        hints=_hints(read_only=True, destructive=False, idempotent=True),
    )
    return {
        "memory_write": write,
        "memory_read": read,
        "memory_search": search,
        "memory_check_duplicate": check,
        **journal_tools(settings),
        **kg_tools(settings),
        **palace_tools(settings),
    }


#: The fields an agent's own tools leave to the sidecar's settings (an orchestrator sends them over HTTP).
IDENTITY_FIELDS = ("workspace_id", "agent_id")


def arguments(operation: str, *, leave_out: tuple[str, ...] = (), **enums: list[str]) -> dict[str, Any]:
    """A tool's input schema: what the registry's ``operation`` reads (``Operation.arguments``),
    without the fields ``leave_out`` names, and with the enums this role may use."""
    schema = by_name(operation).arguments()
    for name in leave_out:
        schema["properties"].pop(name, None)
        if name in schema.get("required", ()):
            schema["required"].remove(name)
    for name, allowed in enums.items():
        field = schema["properties"][name]
        (field["anyOf"][0] if "anyOf" in field else field)["enum"] = allowed
    return schema


def kg_tools(settings: Settings) -> dict[str, dict[str, Any]]:
    """The knowledge-graph tools; the crew scope is offered only on a lead (it holds the crew's graph)."""
    out = {}
    scopes = written_tiers(settings)  # the crew's graph is the lead's
    for spec in (t for t in TOOLS if t.group == "kg"):
        operation = spec.name.removeprefix("kg_")
        if operation == "stats":  # a GET over HTTP: the graph's own request, as a tool's arguments
            schema = json.loads(json.dumps(KG_REQUESTS[operation]))
            schema["properties"]["scope"]["anyOf"][0]["enum"] = scopes
        else:
            schema = arguments(spec.operation, scope=scopes)
        read_only = operation not in ("add", "invalidate")
        out[spec.name] = _tool(
            spec.name,
            f"Knowledge graph: {operation}",
            KG_PREFIX + schema.pop("description"),
            schema,
            hints=_hints(read_only=read_only, destructive=False, idempotent=read_only),  # facts are never deleted
        )
    return out


def journal_tools(settings: Settings) -> dict[str, dict[str, Any]]:
    """The typed-memory tools; crew scopes are offered only where there is a crew."""
    crew = {"scope": ["own", "crew"]} if settings.has_crew else {"scope": ["own"]}
    shared = {"scope": ["own", "crew_shared"]} if settings.has_crew else {"scope": ["own"]}
    remember = _tool(
        "memory_remember",
        "Remember a fact",
        "Store one typed memory (a fact, decision, preference, todo, error, context, workflow or meeting ledger) "
        "that memory_recall can find later. With a topic_key it replaces the live memory holding that key (the "
        "old one is kept as history): use one for facts that change, e.g. current-sprint. expires_at or "
        "ttl_seconds makes it temporary. scope crew shares it with the crew.",
        arguments("remember", leave_out=IDENTITY_FIELDS, **crew),
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    recall = _tool(
        "memory_recall",
        "Recall memories",
        "The typed memories most relevant to a query, best first, each with its id (for memory_feedback or "
        "memory_forget), type, score and topic key. Only memories that match the query are returned; an empty "
        "list means none did. explain shows what each score is made of.",
        arguments("recall", leave_out=IDENTITY_FIELDS, **shared),
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    feedback = _tool(
        "memory_feedback",
        "Rate a memory",
        'Say whether a recalled memory helped: "+" raises its importance, "-" lowers it; the third "-" '
        "retires it (never recalled again). Name it by id or topic_key.",
        arguments("feedback", leave_out=IDENTITY_FIELDS, **crew),
        hints=_hints(read_only=False, destructive=False, idempotent=False),
    )
    forget = _tool(
        "memory_forget",
        "Forget a memory",
        "Remove a typed memory that is wrong or obsolete, by id, or by topic_key (the memory and its history). "
        "It is archived and never recalled again.",
        arguments("forget", leave_out=IDENTITY_FIELDS, **crew),
        hints=_hints(read_only=False, destructive=True, idempotent=True),
    )
    restore = _tool(
        "memory_restore",
        "Restore a memory",
        "Serve a retired memory again (one retired by downvotes, by mistake), by its id: it is live and "
        "recalled again, its negative votes cleared. A forgotten memory is archived, not retired, and stays so.",
        arguments("restore", leave_out=IDENTITY_FIELDS),
        hints=_hints(read_only=False, destructive=False, idempotent=True),
    )
    session = _tool(
        "memory_session",
        "Keep a session's summary",
        "At the end of a session (or a compaction), keep what it was about in the journal: its summary, "
        "or its messages to be summarised. Later sessions recall it. Sent twice (same session_id and "
        "compaction_count, or source_id), it is kept once.",
        session_schema(),
        hints=_hints(read_only=False, destructive=False, idempotent=True),
    )
    return {
        "memory_remember": remember,
        "memory_recall": recall,
        "memory_feedback": feedback,
        "memory_forget": forget,
        "memory_restore": restore,
        "memory_session": session,
    }


def session_schema() -> dict[str, Any]:
    """``POST /memory/session``'s request schema (the registry's), without the identity fields: the
    agent's own tools leave those to the sidecar's settings."""
    schema = arguments("session", leave_out=IDENTITY_FIELDS)
    schema["properties"]["session_id"]["description"] = "the session's id, as your client names it"
    schema["properties"]["summary"]["description"] = "the session's summary (else its messages are summarised)"
    return schema


def _input(fields: tuple[str, ...], required: tuple[str, ...], **enums: list[str]) -> dict[str, Any]:
    """The input schema of a tool with arguments of its own: the contract's field schemas, with the
    enums this role may use."""
    schema = request_schema({name: name for name in fields}, required, closed=True)
    for name, allowed in enums.items():
        schema["properties"][name]["enum"] = allowed
    return schema


KG_PREFIX = (
    "The knowledge graph: facts (subject, predicate, object) with the dates they held, read from memory and "
    "the journal, never deleted. "
)
WRITE_DESCRIPTION = (
    "Save markdown to durable memory: facts, decisions and lessons worth keeping past this session "
    "(AGENT.md for standing facts, daily/YYYY-MM-DD.md for today's notes, topics/<name>.md for a subject). "
    "Appends by default. Success means the bytes are on stable storage; an error means nothing was saved, "
    "so say so. If a cap refuses the write, the error carries usage and the entries of the file: consolidate "
    '(merge duplicates, drop stale lines, summarise) and retry in the same turn with mode "replace" '
    "carrying the shorter body."
)


def _tool(name: str, title: str, description: str, schema: dict[str, Any], *, hints: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": schema,
        "outputSchema": output_schema(name),
        "annotations": {"title": title, **hints},
    }


def _hints(*, read_only: bool, destructive: bool, idempotent: bool) -> dict[str, bool]:
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": False,
    }
