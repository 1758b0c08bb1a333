"""Each tool's ``outputSchema``: the answer schema of the HTTP route whose operation it runs.

A tool's structured content is that route's JSON answer, so its schema is taken from the HTTP
contract (the OpenAPI document, whose answer shapes come from ``sidecar.contract``'s TypedDicts
and the routes' schema modules) instead of being written twice. The document's
``#/components/schemas/X`` references become ``#/$defs/X`` inside each tool's own schema, which
an MCP client resolves without the document. The document is imported on the first ``tools/list``:
a sidecar no client asks for tools never loads it.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

__all__ = ["output_schema"]

Schema = dict[str, Any]
REF = "#/components/schemas/"

#: tool -> (method, path, status) of the HTTP route answering the same operation
ROUTES: dict[str, tuple[str, str, str]] = {
    "memory_write": ("post", "/memory/write", "201"),
    "memory_read": ("get", "/memory/read", "200"),
    "memory_search": ("post", "/memory/search", "200"),
    "memory_remember": ("post", "/memory/remember", "201"),
    "memory_recall": ("post", "/memory/recall", "200"),
    "memory_feedback": ("post", "/memory/feedback", "200"),
    "memory_forget": ("post", "/memory/forget", "200"),
    "memory_restore": ("post", "/memory/restore", "200"),
    "memory_session": ("post", "/memory/session", "201"),
    "kg_add": ("post", "/kg/add", "201"),
    **{f"kg_{op}": ("post", f"/kg/{op}", "200") for op in ("query", "invalidate", "timeline", "traverse", "tunnels")},
    "kg_stats": ("get", "/kg/stats", "200"),
    "memory_list": ("get", "/memory/list", "200"),
    "memory_taxonomy": ("get", "/memory/taxonomy", "200"),
    "memory_diary_read": ("get", "/memory/diary", "200"),
    "memory_delete": ("post", "/memory/delete", "200"),
    "memory_set_identity": ("post", "/memory/identity", "200"),
    "memory_diary_write": ("post", "/memory/diary", "201"),
    "memory_ingest": ("post", "/memory/ingest", "200"),
}


def output_schema(tool: str) -> Schema:
    """The tool's output schema, whole (its references under ``$defs``); a fresh copy each call."""
    schema: Schema = copy.deepcopy(_schemas()[tool])
    return schema


@functools.cache
def _schemas() -> dict[str, Schema]:
    from sidecar.contract import json_schema
    from sidecar.http.openapi import DOCUMENT, NAMED
    from sidecar.ops.answers import DuplicateCheckAnswer

    components: dict[str, Schema] = DOCUMENT["components"]["schemas"]
    answers = {tool: _answer(DOCUMENT["paths"], *route) for tool, route in ROUTES.items()}
    # The duplicate check has no route of its own: its answer is its type's, on the contract's shapes.
    answers["memory_check_duplicate"] = json_schema(DuplicateCheckAnswer, inline=True, named=NAMED)
    return {tool: _standalone(schema, components) for tool, schema in answers.items()}


def _answer(paths: dict[str, Any], method: str, path: str, status: str) -> Schema:
    schema: Schema = paths[path][method]["responses"][status]["content"]["application/json"]["schema"]
    return schema


def _standalone(schema: Schema, components: dict[str, Schema]) -> Schema:
    """``schema`` with its top-level reference inlined and every nested one moved under ``$defs``."""
    top = components[schema["$ref"].removeprefix(REF)] if "$ref" in schema else schema
    defs: dict[str, Schema] = {}
    out: Schema = _relinked(top, components, defs)
    if defs:
        out["$defs"] = defs
    return out


def _relinked(node: Any, components: dict[str, Schema], defs: dict[str, Schema]) -> Any:
    if isinstance(node, list):
        return [_relinked(item, components, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF):
        name = ref.removeprefix(REF)
        if name not in defs:
            defs[name] = {}  # claimed before the walk, so a schema that refers to itself ends
            defs[name] = _relinked(components[name], components, defs)
        return {**node, "$ref": f"#/$defs/{name}"}
    return {key: _relinked(value, components, defs) for key, value in node.items()}
