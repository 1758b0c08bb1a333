"""The sidecar's HTTP contract as one OpenAPI 3.1 document, served at ``GET /openapi.json``
(``sidecar.http.openapi_route``, which imports this module on the first request).

The registry's output (``paths_of``): each operation of ``sidecar.ops.registry``, in its order,
is a path and method here, and what it reads from its client (its request body, its query
parameters) is the registry's own schema (``sidecar.ops.requests``), the one the MCP tools' input
schemas are made of. This module writes each operation's summary and the words of its answers and
errors (``ANSWERS``); answers for a route the registry lacks, or an operation without answers,
stop the module loading. Every answer's schema is its type's: the TypedDict its op returns
(``sidecar.ops.answers.BY_OPERATION``; search, write, read and the block are ``sidecar.contract``'s),
made by ``sidecar.contract.json_schema``, and every error is ``ErrorAnswer``. Only the MCP
endpoint's JSON-RPC envelope (the protocol's, not the sidecar's) is written here.

Held to the server two ways: a test requires its paths and methods to equal the routes
``create_app`` registers, and schemathesis runs it against a live sidecar. Every error response
is ``{"error": {"code", "message", ...}}``; ``/mcp`` speaks JSON-RPC instead.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from sidecar import __version__
from sidecar.contract import ANSWERS as ANSWER_SHAPES
from sidecar.contract import Usage, json_schema
from sidecar.ops.answers import ANSWERS as OP_ANSWERS
from sidecar.ops.answers import BY_OPERATION, ErrorAnswer
from sidecar.ops.registry import OPERATIONS, Operation
from sidecar.ops.requests import BODIES, Param

__all__ = ["DOCUMENT"]

Schema = dict[str, Any]
JSON = "application/json"


def _ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> Schema:
    """An open object schema: for the JSON-RPC envelope only (every other shape is a type's)."""
    return {"type": "object", "properties": {**required, **(optional or {})}, "required": list(required)}


STR, INT = {"type": "string"}, {"type": "integer"}
SCHEMAS: dict[str, Schema] = {
    **{shape.__name__: json_schema(shape) for shape in ANSWER_SHAPES},
    # The typed memories', the journal's and the status operations' answers (sidecar.ops.answers).
    **{name: json_schema(shape, inline=True) for name, shape in OP_ANSWERS.items()},
    # The request bodies the document names: the registry's (sidecar.ops.requests).
    **{body.name: body.schema for body in BODIES.values() if body.name is not None},
    # Every error answer (closed: it never grows a field a client must read).
    "Error": json_schema(ErrorAnswer, inline=True, closed=True, named={Usage: "Usage"}),
    # The MCP endpoint's JSON-RPC 2.0 envelope: the protocol's shapes, not the sidecar's, so written
    # here (each tool's own answer inside a result is its operation's type: sidecar.mcp.outputs).
    "RpcMessage": _obj(
        {"jsonrpc": {"const": "2.0"}},
        {"id": {"type": ["string", "integer"]}, "method": STR, "params": {}, "result": {}, "error": {}},
    ),
    "RpcResponse": _obj(
        {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]}},
        {"result": {"type": "object"}, "error": _obj({"code": INT, "message": STR}, {"data": {}})},
    ),
}


#: The answer types the components name, and their names there.
NAMED: dict[type, str] = {
    **{shape: shape.__name__ for shape in ANSWER_SHAPES},
    **{shape: name for name, shape in OP_ANSWERS.items()},
}


def answer_schema(shape: type) -> Schema:
    """An answer type's schema in the document: a reference to its component when it has one,
    else its schema written in place."""
    return _ref(NAMED[shape]) if shape in NAMED else json_schema(shape, inline=True, named=NAMED)


def _ok(operation: str, status: str | None = None) -> tuple[str, Schema]:
    """The success answer of ``operation`` (its first, or the one of ``status``): the type its op
    returns (``sidecar.ops.answers.BY_OPERATION``)."""
    by_status = BY_OPERATION[operation]
    status = status or next(iter(by_status))
    return status, answer_schema(by_status[status])


def _json(schema: Schema) -> dict[str, Any]:
    return {"content": {JSON: {"schema": schema}}}


def _errors(**by_status: str) -> dict[str, Any]:
    """Error responses (each the shared error body), plus the 500 and 503 every route can give."""
    by_status.setdefault("500", "internal_error: an unexpected failure (logged), or the named failure")
    return {status: {"description": why, **_json(_ref("Error"))} for status, why in by_status.items()}


def _op(
    summary: str,
    ok: tuple[str, Schema],
    errors: dict[str, Any],
    *,
    ok_description: str = "success",
    ok_headers: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    status, schema = ok
    success: dict[str, Any] = {"description": ok_description, **_json(schema)}
    if ok_headers:
        success["headers"] = ok_headers
    return {"summary": summary, "responses": {status: success, **errors}, **extra}


def _also(op: dict[str, Any], description: str, ok: tuple[str, Schema]) -> dict[str, Any]:
    """``op`` with a second success answer (a replayed write answers 200 where a new one is 201)."""
    status, schema = ok
    op["responses"][status] = {"description": description, **_json(schema)}
    return op


def _body(schema: Schema) -> dict[str, Any]:
    return {"required": True, **_json(schema)}


BAD_BODY = (
    "invalid_json (not a JSON object, nested too deeply, or an integer of over 4300 digits), invalid_encoding "
    "(the body is not what its Content-Encoding says), or a field named by the code: "
)
TOO_LARGE = "payload_too_large: the body is over --max-body-bytes"
# What every route that reads a body may answer before its handler runs (sidecar.http.guards).
BODY_ERRORS = {
    "408": "request_timeout: the body did not arrive within 10 s (the connection is closed)",
    "413": TOO_LARGE,
    "415": "unsupported_encoding: a Content-Encoding other than gzip or deflate (the body is not read)",
    "499": "client_closed: the client closed its side of the connection before the whole body arrived "
    "(nobody reads this answer: it is counted in the metrics)",
}
QUERY_ERRORS = "missing_query, empty_query, invalid_query, query_too_long (over 4096 bytes of UTF-8 or 256 words)"
NO_CREW = "crew_unavailable (member: the lead, or the crew store, cannot be reached)"

DUPLICATE_ANSWER = {
    "description": "nothing was written: an append (without force) whose every line memory already holds "
    "nearly word for word; duplicate_of names where (path, lines, similarity); seq is the latest issued",
    **_json(_ok("write", "200")[1]),
}

MEMORY_ERRORS = {
    "400": BAD_BODY + "unknown_field, missing_<field>, invalid_<field> (invalid_scope: a crew scope on a solo sidecar)",
    "503": "crew_unavailable (member, crew scope: the lead cannot be reached)",
}

ANSWERS: dict[str, Any] = {
    "/healthz": {"get": _op("Liveness, role and the tiers this process indexes", _ok("healthz"), _errors())},
    "/memory/search": {
        "post": _op(
            "Search memory (BM25, fused with dense scores when a model is configured)",
            _ok("search"),
            _errors(
                **{
                    "400": BAD_BODY + QUERY_ERRORS + ", invalid_limit, invalid_scope, invalid_syntax, "
                    "invalid_fts_syntax, invalid_after_seq (negative or never issued), invalid_explain, "
                    "invalid_highlight (not offsets or markdown), invalid_context (not snippet or section)"
                },
                **BODY_ERRORS,
                **{
                    "409": "no_crew_tier (solo)",
                    "500": "search_failed: the search failed in every scope",
                    "503": NO_CREW,
                },
            ),
            ok_description="hits in rank order: each snippet is a window around the best cluster of the query's "
            "terms, with their [start, end) offsets in highlights, counted in Unicode code points (a hit found "
            "by the dense leg alone shows the sentence of "
            "its chunk closest to the query); with context section, the hit's whole heading section and its "
            "line span; a hit from a section the injection scanner matched carries flagged",
        )
    },
    "/memory/status": {
        "get": _op(
            "The tier index's state",
            _ok("status"),
            _errors(
                **{
                    "400": "invalid_scope",
                    "403": "not_lead: this member does not index the crew tier",
                    "409": "no_crew_tier (solo)",
                    "503": NO_CREW,
                }
            ),
        )
    },
    "/memory/reindex": {
        "post": _op(
            "Rebuild a tier's index from its files, then its status",
            _ok("reindex"),
            _errors(
                **{"400": "invalid_scope", "403": "not_lead: only the lead indexes the crew tier"},
                **{
                    "499": "client_closed: the client closed the connection (or its sending side), so the "
                    "reindex stopped; the old index stays",
                    "503": "reindex_cancelled: the sidecar is shutting down; the old index stays",
                },
                **{"409": "no_crew_tier (solo)"},
            ),
        )
    },
    "/memory/write": {
        "post": _op(
            "Write memory durably (201 once the bytes are on stable storage); the reindex follows",
            _ok("write"),
            _errors(
                **{
                    "400": BAD_BODY + "invalid_tier, invalid_path (the path rules: at most 512 bytes and 8 "
                    "directories deep, a .md name in its own NFKC form, no hidden or lookalike names), "
                    "invalid_content, invalid_mode, invalid_idempotency_key"
                },
                **{
                    "403": "crew_write_forbidden (only the lead writes the crew tier), unsafe_path (the path goes "
                    "through a link, or names a link or anything but a regular file: a FIFO, socket or directory)"
                },
                **{
                    "409": "idempotency_key_reused: the Idempotency-Key was sent with another tier, path, mode or "
                    "content; nothing was written; no_crew_tier (solo)"
                },
                **{
                    **BODY_ERRORS,
                    "413": "cap_exceeded (nothing written): cap_scope file or tier (bytes; current_entries and usage "
                    "say what to consolidate) or files (the tier holds tier_max_files files; add to an existing "
                    "file), or " + TOO_LARGE,
                },
                **{
                    "422": "injection_suspected: a section the write changes has a block-level finding of the "
                    "injection scanner; category, pattern and section (heading, line_start, line_end) name it and "
                    "nothing was written. With agent_refuse_injection (crew_refuse_injection for the crew tier) "
                    "false, the write lands instead and is answered 201 with flagged"
                },
                **{
                    "500": "write_failed: the old content is intact",
                    "503": "tier_dir_missing (the tier dir vanished; it is not recreated), "
                    "writes_stalled (one write has held the write thread for over 10 s: nothing was written, "
                    "retry later)",
                },
            ),
            ok_description="written and durable; seq goes to a search's after_seq. warning with current_entries and "
            "usage: past the soft cap. flagged with a warning: a section the write changed matched the injection "
            "scanner at flag level (or at block level with the tier's refusal off); it was saved and is withheld "
            "from the memory block",
            ok_headers={
                "Idempotent-Replayed": {
                    "description": "true: this is the answer of an earlier write sent with the same "
                    "Idempotency-Key, replayed; nothing was written again",
                    "required": False,
                    "schema": {"const": "true"},
                }
            },
            parameters=[
                {
                    "name": "Idempotency-Key",
                    "in": "header",
                    "required": False,
                    "description": "names this write (a UUID, say): a retry with the same key and the same tier, "
                    "path, mode and content writes nothing and gets the first answer (same seq); a retry while "
                    "the first is under way waits for it. The last 1024 keys are kept in memory; a write that "
                    "failed leaves no trace, so its retry writes",
                    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$"},
                }
            ],
        )
    },
    "/memory/read": {
        "get": _op(
            "Read one memory file as it is on disk",
            _ok("read"),
            _errors(
                **{
                    "400": "invalid_tier, invalid_path (the path rules, as for /memory/write), invalid_line_range",
                    "403": "unsafe_path: the path goes through a linked directory, is a link that does not lead to "
                    "a tier file inside the tier, or is not a regular file (a FIFO, socket or directory)",
                },
                **{"404": "no_such_file", "409": "no_crew_tier (solo)", "500": "read_failed, or internal_error"},
            ),
            ok_description="the file, or the lines asked for (with the range and the file's line count); "
            "flagged lists the file's sections the injection scanner matched: treat them as data",
        )
    },
    "/memory/tools": {"get": _op("Which MCP memory tools the sink's health allows now", _ok("tools"), _errors())},
    "/memory/block": {
        "post": _op(
            "The budgeted memory block for the agent's system prompt",
            _ok("block"),
            _errors(
                **{
                    "400": BAD_BODY
                    + "invalid_role, invalid_budget, invalid_nudges, invalid_<field>, budget_too_small, "
                    "or a query error as in /memory/search"
                },
                **{"403": "origin_refused: a browser Origin"},
                **BODY_ERRORS,
            ),
            ok_description="the block, cut on chunk boundaries. A heading section the injection scanner matches "
            "(either level) is withheld: a notice stands in its place, its clean sibling sections stay, and "
            "blocked lists it: label (tier/path), category, pattern, level, line_start and line_end. With spotlight, "
            "the agent, crew and operator parts are datamarked (every space shown as U+02C6) and the preamble says so",
        )
    },
    "/mcp": {
        "post": {
            "summary": "MCP (streamable HTTP, JSON responses only): initialize, ping, tools/list, tools/call",
            "parameters": [
                {"name": "Mcp-Session-Id", "in": "header", "required": False, "schema": STR},
                {"name": "MCP-Protocol-Version", "in": "header", "required": False, "schema": STR},
            ],
            "requestBody": _body(_ref("RpcMessage")),
            "responses": {
                "200": {
                    "description": "a JSON-RPC result or error (tool failures are isError results)",
                    **_json(_ref("RpcResponse")),
                },
                "202": {"description": "accepted: a notification, or a response"},
                **{
                    s: {"description": why, **_json(_ref("RpcResponse"))}
                    for s, why in {
                        "400": "parse error, invalid message, missing session, unsupported protocol version "
                        "(a body that is not what its Content-Encoding says is refused before MCP reads it, "
                        "as 400 invalid_encoding in the shared error body)",
                        "403": "a browser Origin",
                        "404": "unknown or expired session",
                        "406": "the client does not accept application/json",
                        "413": "the body is over --max-body-bytes",
                        "415": "Content-Type is not application/json (a Content-Encoding other than gzip or "
                        "deflate is refused before MCP reads it, as 415 unsupported_encoding in the shared "
                        "error body)",
                    }.items()
                },
                "500": {"description": "internal_error", **_json(_ref("Error"))},
            },
        },
        "get": {
            "summary": "The session's server stream (server-sent events): notifications/tools/list_changed "
            "when the tools it listed have changed; open until the client goes or the session ends",
            "parameters": [
                {
                    "name": "Mcp-Session-Id",
                    "in": "header",
                    "required": True,
                    "schema": {"type": "string", "minLength": 1},
                },
                {"name": "MCP-Protocol-Version", "in": "header", "required": False, "schema": STR},
            ],
            "responses": {
                "200": {"description": "the stream", "content": {"text/event-stream": {"schema": STR}}},
                **{
                    s: {"description": why, **_json(_ref("RpcResponse"))}
                    for s, why in (
                        ("400", "missing session header, unsupported protocol version"),
                        ("403", "a browser Origin"),
                        ("404", "unknown or expired session"),
                        ("406", "the client does not accept text/event-stream"),
                    )
                },
                "500": {"description": "internal_error", **_json(_ref("Error"))},
            },
        },
        "delete": {
            "summary": "End an MCP session",
            "parameters": [
                {
                    "name": "Mcp-Session-Id",
                    "in": "header",
                    "required": True,
                    "schema": {"type": "string", "minLength": 1},
                }
            ],
            "responses": {
                "204": {"description": "session ended"},
                **{
                    s: {"description": why, **_json(_ref("RpcResponse"))}
                    for s, why in (("400", "missing header"), ("403", "a browser Origin"), ("404", "unknown session"))
                },
                "500": {"description": "internal_error", **_json(_ref("Error"))},
            },
        },
    },
    "/journal": {
        "post": _also(
            _op(
                "Append an episodic journal entry",
                _ok("journal_append"),
                _errors(
                    **{
                        "400": BAD_BODY + "unknown_field, missing_<field>, invalid_<field>",
                        "409": "conflict: the id exists",
                    },
                    **BODY_ERRORS,
                ),
            ),
            "a summary.generated entry whose source_id was posted before: the stored entry (replayed)",
            _ok("journal_append", "200"),
        ),
        "get": _op(
            "Recent journal entries, or a full-text search of them with q",
            _ok("journal_list"),
            _errors(**{"400": "missing_workspace_id, invalid_workspace_id, invalid_limit"}),
        ),
    },
    "/episodic/recall": {
        "post": _op(
            "Recall journal entries: cosine x importance, or hybrid (RRF with BM25)",
            _ok("episodic_recall"),
            _errors(**{"400": BAD_BODY + "unknown_field, missing_<field>, invalid_<field>"}, **BODY_ERRORS),
        )
    },
    "/memory/remember": {
        "post": _op(
            "Remember a typed memory (a topic key replaces the live memory holding it, kept as history)",
            _ok("remember"),
            _errors(**MEMORY_ERRORS, **BODY_ERRORS),
        )
    },
    "/memory/recall": {
        "post": _op(
            "Recall typed memories and embedded journal entries: only those the query earns, best first",
            _ok("recall"),
            _errors(**{"400": MEMORY_ERRORS["400"] + ", query_too_long"}, **BODY_ERRORS),
        )
    },
    "/memory/feedback": {
        "post": _op(
            "Rate a live memory: + raises its importance, - lowers it, the third - retires it",
            _ok("feedback"),
            _errors(**MEMORY_ERRORS, **{"404": "not_found: no live memory so named in scope"}, **BODY_ERRORS),
        )
    },
    "/memory/forget": {
        "post": _op(
            "Forget a memory by id, or a topic key's memory and its history (archived, never served)",
            _ok("forget"),
            _errors(**MEMORY_ERRORS, **{"404": "not_found: nothing so named in scope"}, **BODY_ERRORS),
        )
    },
    "/memory/restore": {
        "post": _op(
            "Serve a retired memory again: live, its negative votes cleared, its confidence at least 0.5",
            _ok("restore"),
            _errors(**MEMORY_ERRORS, **{"404": "not_found: no retired memory of this agent so named"}, **BODY_ERRORS),
        )
    },
    "/memory/session": {
        "post": _also(
            _op(
                "A finished session as an episodic summary (a summary.generated journal entry): its compaction "
                "summary, or its messages summarised (extractive; a chat model's with --summariser, the extractive "
                "one on any failure); idempotent on source_id (session_id:compaction_count by default)",
                _ok("session"),
                _errors(**{"400": BAD_BODY + "unknown_field, invalid_session_id, invalid_messages, invalid_summary"}),
            ),
            "this source_id was summarised before: the stored summary (replayed)",
            _ok("session", "200"),
        )
    },
    "/memory/memories": {
        "get": _op(
            "Live typed memories, newest first; with topic_key, every entry that held it (its history)",
            _ok("memories"),
            _errors(
                **{"400": "invalid_workspace_id, invalid_agent_id, invalid_namespace, invalid_topic_key, invalid_limit"}
            ),
        )
    },
    "/memory/consolidate": {
        "post": _op(
            "Consolidate old daily notes now: weekly summaries in daily/summaries/, values a newer line changed "
            "moved under '## Superseded', recurring facts promoted to the evergreen file, the notes moved to "
            "archive/daily/, near-duplicate typed memories merged; the report lists everything dropped",
            _ok("consolidate"),
            _errors(
                **{
                    "400": BAD_BODY + "invalid_tier (crew only on a lead), invalid_since, invalid_dry_run, "
                    "invalid_<unknown field>",
                    "409": "consolidation_running: a run of this tier is under way",
                },
                **BODY_ERRORS,
            ),
        )
    },
    "/memory/health": {
        "get": _op(
            "The latest memory health snapshot (never recomputed here)",
            _ok("health"),
            _errors(**{"400": "missing_workspace_id, invalid_<field>", "404": "not_found: no snapshot yet"}),
        ),
        "post": _op(
            "Recompute the memory health snapshot now",
            _ok("health_compute"),
            _errors(**{"400": "missing_workspace_id, invalid_<field>, invalid_recompute"}),
        ),
    },
    "/metrics": {
        "get": {
            "summary": "Prometheus metrics (text exposition format)",
            "responses": {"200": {"description": "metrics", "content": {"text/plain": {"schema": STR}}}, **_errors()},
        }
    },
    "/openapi.json": {"get": _op("This document", ("200", {"type": "object"}), _errors())},
}


KG_ERRORS = {
    "400": BAD_BODY + "unknown_field, missing_<field>, invalid_<field> (invalid_scope: crew on a solo sidecar)",
    "503": "crew_unavailable (member, crew scope: the lead that holds the crew's graph, or for reads the "
    "crew store that holds its copy, cannot be reached)",
}
KG_SUMMARIES: dict[str, str] = {
    "add": "Add a fact (a functional predicate ends the current value)",
    "query": "Facts about an entity: current, as of a time, all, or before a value",
    "invalidate": "End a fact (kept, with valid_to set)",
    "timeline": "Every fact about an entity, oldest first",
    "traverse": "Entities one or two hops away along current facts",
    "tunnels": "Entities whose facts stand in two rooms or more",
}
for _name, _summary in KG_SUMMARIES.items():
    _missing = {"404": "unknown_entity (no entity so named in the workspace), not_found (no such fact)"}
    ANSWERS[f"/kg/{_name}"] = {
        "post": _op(
            _summary,
            _ok(f"kg_{_name}"),
            _errors(**KG_ERRORS, **({} if _name in ("add", "tunnels") else _missing), **BODY_ERRORS),
        )
    }
ANSWERS["/kg/stats"] = {
    "get": _op(
        "The graph's counts: entities, facts (current and ended), rooms, tunnels, predicates",
        _ok("kg_stats"),
        _errors(**KG_ERRORS),
    )
}


def _link(operation_id: str, **parameters: str) -> dict[str, Any]:
    return {"operationId": operation_id, "parameters": parameters}


def _finish(paths: dict[str, Any]) -> dict[str, Any]:
    """Name every operation (post_memory_write ...) and link the ones a client chains."""
    paths["/memory/write"]["post"]["responses"]["200"] = DUPLICATE_ANSWER
    for path, ops in paths.items():
        for method, op in ops.items():
            op["operationId"] = method + re.sub(r"[^a-z]+", "_", path).rstrip("_")
    links = {
        ("/memory/write", "post", "201"): {
            "ReadBack": _link(
                "get_memory_read", **{"query.path": "$response.body#/path", "query.tier": "$response.body#/tier"}
            )
        },
        ("/journal", "post", "201"): {
            "List": _link("get_journal", **{"query.workspace_id": "$request.body#/workspace_id"})
        },
        ("/mcp", "post", "200"): {
            "UseSession": _link("post_mcp", **{"header.Mcp-Session-Id": "$response.header.Mcp-Session-Id"}),
            "EndSession": _link("delete_mcp", **{"header.Mcp-Session-Id": "$response.header.Mcp-Session-Id"}),
        },
    }
    for (path, method, status), found in links.items():
        paths[path][method]["responses"][status]["links"] = found
    return paths


WRITE_ERRORS = {
    "403": "memory_disabled (memory: false), crew_write_forbidden, unsafe_path",
    "413": TOO_LARGE + "; cap_exceeded",
    "422": "injection_suspected: the content matches a prompt-injection rule; nothing was written",
    "503": "writes_stalled, tier_dir_missing",
}
PALACE_PATHS: dict[str, Any] = {
    "/memory/list": {
        "get": _op(
            "Every memory file with its wing (tier), room (folder), bytes, chunks and last change",
            _ok("list"),
            _errors(**{"400": "unknown_field, invalid_wing, invalid_room"}),
        )
    },
    "/memory/taxonomy": {
        "get": _op(
            "Wings and rooms with their counts: files, chunks and bytes per folder; the journal's memories per type",
            _ok("taxonomy"),
            _errors(**{"400": "unknown_field"}),
        )
    },
    "/memory/delete": {
        "post": _op(
            "Delete a memory file, or one heading section of it, durably; journaled as memory.deleted",
            _ok("delete"),
            _errors(
                **{
                    "400": BAD_BODY + "unknown_field, invalid_path, invalid_tier, invalid_heading",
                    "404": "file_not_found, section_not_found",
                    "409": "ambiguous_heading: several sections have that heading; name it by its heading path",
                    **{k: v for k, v in WRITE_ERRORS.items() if k in ("403", "503")},
                },
                **BODY_ERRORS,
            ),
        )
    },
    "/memory/identity": {
        "post": _op(
            "Set the agent's identity (L0: identity.md, whole at the top of every memory block)",
            _ok("identity"),
            _errors(
                **{"400": BAD_BODY + "unknown_field, invalid_identity, identity_too_long", **WRITE_ERRORS},
                **{k: v for k, v in BODY_ERRORS.items() if k != "413"},
            ),
        )
    },
    "/memory/diary": {
        "post": _op(
            "Write a diary entry for the agent, a section of today's daily note",
            _ok("diary_write"),
            _errors(
                **{"400": BAD_BODY + "unknown_field, invalid_content, invalid_agent_id", **WRITE_ERRORS},
                **{k: v for k, v in BODY_ERRORS.items() if k != "413"},
            ),
        ),
        "get": _op(
            "The agent's newest diary entries, newest first",
            _ok("diary_read"),
            _errors(**{"400": "unknown_field, invalid_agent_id, invalid_limit"}),
        ),
    },
    "/memory/ingest": {
        "post": _op(
            "Ingest conversation turns: noise dropped, the rest classified (decision, preference, fact, event, "
            "task, problem, other), deduplicated and kept as typed journal memories or daily-note lines; the "
            "report says what was kept where and what was dropped and why",
            _ok("ingest"),
            _errors(
                **{"400": BAD_BODY + "unknown_field, invalid_turns, invalid_dry_run", **WRITE_ERRORS},
                **{k: v for k, v in BODY_ERRORS.items() if k != "413"},
            ),
        )
    },
    "/memory/agent-settings": {
        "get": _op(
            "The per-agent settings file (memory.toml or settings.md front matter in the agent tier): its valid "
            "values, every problem found in it, and the settings it governs as in effect",
            _ok("agent_settings"),
            _errors(),
        )
    },
}
ANSWERS.update(PALACE_PATHS)

# The memory browser (sidecar.ui): HTML pages, read-only; errors are the agent API's JSON errors.
UI_ERRORS = {
    "400": "unknown_field, or the parameter named by the code (invalid_path, invalid_workspace_id, ...)",
    "403": "memory_disabled (memory: false), origin_refused (a page of another site opened it), unsafe_path",
    "404": "no_such_file, or an entity the graph does not know",
    "409": "no_crew_tier: the crew scope on a sidecar without a crew tier",
    "503": "crew_unavailable, or the journal or graph store is unavailable",
}


def _ui(summary: str) -> dict[str, Any]:
    page = {"description": "the page (HTML, read-only)", "content": {"text/html": {"schema": STR}}}
    return {"get": {"summary": summary, "responses": {"200": page, **_errors(**UI_ERRORS)}}}


UI_PATHS: dict[str, Any] = {
    "/ui": _ui("The memory browser: the tiers' files as a tree"),
    "/ui/file": _ui("One memory file rendered, with the sections the injection scanner flagged marked"),
    "/ui/search": _ui("Search with the answer's highlights and why each hit matched (explain)"),
    "/ui/memories": _ui("The live typed memories, filtered by type, namespace and tag"),
    "/ui/memory": _ui("Every memory that held a topic key, newest first, with its feedback"),
    "/ui/journal": _ui("The journal as a timeline: the newest entries, or those matching q"),
    "/ui/graph": _ui("The knowledge graph: its counts, an entity's timeline and its neighbours"),
    "/ui/health": _ui("Memory health: the five metrics and the score over time, as charts"),
    "/ui/block": _ui("The memory block as the agent receives it, for a query, a budget and a role"),
}
ANSWERS.update(UI_PATHS)


def _param(param: Param) -> dict[str, Any]:
    found = {"name": param.name, "in": "query", "required": param.required, "schema": param.schema}
    return {**found, "description": param.description} if param.description else found


def request_of(op: Operation) -> dict[str, Any]:
    """What the document says ``op`` reads from its client, from the registry: its JSON body (by
    name when the document's components hold it) and its query parameters."""
    out: dict[str, Any] = {}
    if op.request is not None:
        out["requestBody"] = _body(_ref(op.request.name) if op.request.name else op.request.schema)
    if op.params:
        out["parameters"] = [_param(p) for p in op.params]
    return out


def paths_of(answers: dict[str, Any]) -> dict[str, Any]:
    """The document's paths: one per operation of the registry, in its order, each with its
    request from the registry and its answers from ``answers`` (keyed by path and method; a header
    parameter written there stays first). An operation without answers, or answers of no
    operation, stop the module loading with the route named."""
    paths: dict[str, Any] = {}
    for op in OPERATIONS:
        method = op.method.lower()
        if method not in answers.get(op.path, {}):
            raise LookupError(f"the OpenAPI document has no answers for {op.method} {op.path} ({op.name})")
        spec = copy.deepcopy(answers[op.path][method])
        request = request_of(op)
        if "parameters" in request:
            request["parameters"] = [*spec.get("parameters", []), *request["parameters"]]
        paths.setdefault(op.path, {})[method] = {**spec, **request}
    extra = [f"{m.upper()} {p}" for p, ops in answers.items() for m in ops if m not in paths.get(p, {})]
    if extra:
        raise LookupError(f"the OpenAPI document answers for routes the registry does not have: {extra}")
    return paths


DOCUMENT: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {
        "title": "memory-sidecar",
        "version": __version__,
        "description": (
            "The agent API of a per-container memory daemon, on 127.0.0.1:9119. Every error response is "
            '{"error": {"code", "message", ...}} with a stable code (the /mcp route answers in JSON-RPC). '
            "A lead also serves its crew listener (--crew-listen, bearer token) with POST /crew/search, "
            "GET /crew/status and GET /healthz for its members."
        ),
    },
    "paths": _finish(paths_of(ANSWERS)),
    "components": {"schemas": SCHEMAS},
}
