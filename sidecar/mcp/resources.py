"""The tier's markdown files as MCP resources: ``memory://agent/AGENT.md``, ``memory://crew/CREW.md``.

The list is the palace's file list (``GET /memory/list``) and a read is ``GET /memory/read``, under
the same path rules: what search and read leave out is not a resource either. With memory off
there are none.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from sidecar.contract import ListRequest, ReadRequest
from sidecar.errors import BadRequest
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.ops import files, palace
from sidecar.ops.registry import OPERATIONS, Operation, admit

__all__ = ["SCHEME", "listed", "read", "uri_of"]

SCHEME = "memory://"
MARKDOWN = "text/markdown"
#: A resource read is ``GET /memory/read``: memory off refuses it by the registry's rule.
_READ: Operation = next(op for op in OPERATIONS if op.name == "read")


def uri_of(tier: str, path: str) -> str:
    return f"{SCHEME}{tier}/{path}"


async def listed(app: web.Application) -> list[dict[str, Any]]:
    """Every memory file, by tier then path."""
    if not app[SETTINGS].memory_enabled:
        return []
    files = (await palace.listed(app[SIDECAR], ListRequest()))["files"]
    return [
        {
            "uri": uri_of(f["wing"], f["path"]),
            "name": f"{f['wing']}/{f['path']}",
            "title": f"{f['path']} ({f['wing']} memory, {f['room']})",
            "description": f"{f['wing']} memory file, room {f['room']}, changed {f['modified']}",
            "mimeType": MARKDOWN,
            "size": f["bytes"],
        }
        for f in files
    ]


async def read(app: web.Application, uri: str) -> dict[str, Any]:
    """One file's text, as ``GET /memory/read`` gives it."""
    admit(_READ, memory_enabled=app[SETTINGS].memory_enabled)
    tier, _, path = uri.removeprefix(SCHEME).partition("/")
    if not uri.startswith(SCHEME) or not path:
        raise BadRequest(f"not a memory resource: {uri!r} (expected {SCHEME}<tier>/<path>)", code="invalid_uri")
    body = await files.read(app[SIDECAR], ReadRequest.from_json({"tier": tier, "path": path}))
    return {"contents": [{"uri": uri_of(body["tier"], body["path"]), "mimeType": MARKDOWN, "text": body["content"]}]}
