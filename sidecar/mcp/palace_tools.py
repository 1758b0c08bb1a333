"""The palace's MCP tools: ``memory_list``, ``memory_taxonomy``, ``memory_delete``,
``memory_set_identity``, ``memory_diary_write``, ``memory_diary_read`` and ``memory_ingest``.

Each calls the same operation as its HTTP route (``http/palace.py``), takes what that operation
reads (its request in the registry, ``sidecar.ops.requests``) as its input schema, and says what
it did in a few lines of text for the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiohttp import web

from sidecar.contract import (
    DeleteRequest,
    DiaryReadRequest,
    DiaryWriteRequest,
    IdentityRequest,
    IngestRequest,
    ListRequest,
    TaxonomyRequest,
)
from sidecar.http.state import SIDECAR
from sidecar.mcp.outputs import output_schema
from sidecar.ops import palace as ops
from sidecar.ops.crew import written_tiers
from sidecar.ops.registry import by_name
from sidecar.settings import Settings

__all__ = ["palace_tool", "palace_tools"]

ToolResult = tuple[Mapping[str, Any], str]
Tool = Callable[[web.Application, dict[str, Any]], Awaitable[ToolResult]]

# name -> (the registry's operation, title, description, read only, destructive)
_DEFS: dict[str, tuple[str, str, str, bool, bool]] = {
    "memory_list": (
        "list",
        "List memory files",
        "Every memory file with its wing (agent or crew tier), room (its folder; evergreen for the root "
        "files), size, chunks and last change. wing and room narrow the list.",
        True,
        False,
    ),
    "memory_taxonomy": (
        "taxonomy",
        "Memory taxonomy",
        "The wings (tiers, and the journal) and their rooms (folders; memory types for the journal) with "
        "counts: where memory is and how much of it.",
        True,
        False,
    ),
    "memory_delete": (
        "delete",
        "Delete memory",
        "Delete a memory file, or with heading only that heading section (and its subsections). Durable "
        "and journaled; the file or section is gone for good, so delete only what is wrong or obsolete.",
        False,
        True,
    ),
    "memory_set_identity": (
        "identity",
        "Set identity",
        "Set who you are (role, owner, purpose, standing rules) in a few sentences: it replaces the identity "
        "and goes whole at the top of every memory block.",
        False,
        True,
    ),
    "memory_diary_write": (
        "diary_write",
        "Write diary",
        "Write an entry in your diary (today's daily note): what you did, learned or decided, in your words.",
        False,
        False,
    ),
    "memory_diary_read": (
        "diary_read",
        "Read diary",
        "Your newest diary entries, newest first (or another agent's, by agent_id).",
        True,
        False,
    ),
    "memory_ingest": (
        "ingest",
        "Ingest a conversation",
        "Give the turns of a conversation: greetings, acknowledgements and tool chatter are dropped, the rest "
        "classified (decision, preference, fact, event, task, problem) and kept as typed memories or daily "
        "note lines, without duplicates. The report says what was kept where and what was dropped and why.",
        False,
        False,
    ),
}


def palace_tools(settings: Settings) -> dict[str, dict[str, Any]]:
    """Name -> MCP tool definition of every palace tool; the tier enum of delete follows the role."""
    out = {}
    for name, (request, title, description, read_only, destructive) in _DEFS.items():
        schema = by_name(request).arguments()
        if name == "memory_delete":
            schema["properties"]["tier"]["enum"] = written_tiers(settings)
        hints = {
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": read_only,
            "openWorldHint": False,
        }
        out[name] = {
            "name": name,
            "title": title,
            "description": description,
            "inputSchema": schema,
            "outputSchema": output_schema(name),
            "annotations": {"title": title, **hints},
        }
    return out


def palace_tool(name: str) -> Tool:
    """The tool's implementation: its operation, then a short text of what it did. ``name`` may be
    the tool's dotted name of earlier releases (``memory.list``), as the CLI gives it."""
    return _TOOLS[name.replace(".", "_")]


async def _list(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.listed(app[SIDECAR], ListRequest.from_json(args))
    lines = [
        f"{f['wing']}/{f['path']} ({f['room']}): {f['bytes']} bytes, {f['chunks']} chunks, changed {f['modified']}"
        for f in body["files"]
    ]
    return body, "\n".join(lines) if lines else "No memory files."


async def _taxonomy(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.taxonomy_of(app[SIDECAR], TaxonomyRequest.from_json(args))
    lines = []
    for wing in body["wings"]:
        rooms = ", ".join(
            f"{r['room']} ({r['files']} files)" if "files" in r else f"{r['room']} ({r['memories']})"
            for r in wing["rooms"]
        )
        lines.append(f"{wing['wing']}: {rooms}")
    return body, "\n".join(lines) if lines else "Memory is empty."


async def _delete(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.delete(app[SIDECAR], DeleteRequest.from_json(args))
    if body["deleted"] == "file":
        return body, f"Deleted {body['tier']}/{body['path']} ({body['bytes_removed']} bytes)."
    return body, (
        f"Deleted the section {body['heading']!r} (lines {body['line_start']}-{body['line_end']}) of "
        f"{body['tier']}/{body['path']}."
    )


async def _set_identity(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.set_identity(app[SIDECAR], IdentityRequest.from_json(args))
    return body, f"Identity saved ({body['chars']} characters); it opens every memory block."


async def _diary_write(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.diary_write(app[SIDECAR], DiaryWriteRequest.from_json(args))
    return body, f"Diary entry saved in {body['path']} at {body['at']}."


async def _diary_read(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.diary_read(app[SIDECAR], DiaryReadRequest.from_json(args))
    lines = [f"{e['at']} ({e['path']}):\n{e['content']}" for e in body["entries"]]
    return body, "\n\n".join(lines) if lines else f"No diary entries for {body['agent_id']}."


async def _ingest(app: web.Application, args: dict[str, Any]) -> ToolResult:
    body = await ops.ingest(app[SIDECAR], IngestRequest.from_json(args))
    counts = body["counts"]
    kinds = ", ".join(f"{n} {t}" for t, n in sorted(counts["by_type"].items())) or "nothing"
    why = ", ".join(f"{n} {r}" for r, n in sorted(counts["by_reason"].items())) or "nothing"
    verb = "Would keep" if body["dry_run"] else "Kept"
    return body, f"{verb} {counts['kept']} turns ({kinds}); dropped {counts['dropped']} ({why})."


_TOOLS: dict[str, Tool] = {
    "memory_list": _list,
    "memory_taxonomy": _taxonomy,
    "memory_delete": _delete,
    "memory_set_identity": _set_identity,
    "memory_diary_write": _diary_write,
    "memory_diary_read": _diary_read,
    "memory_ingest": _ingest,
}
