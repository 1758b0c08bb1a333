"""Reading one memory file (``GET /memory/read``, ``memory.read``), under the write path's rules:
the same tier roots and the same path checks, so nothing can be read that could not be written."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from sidecar.errors import BadRequest, NotFound
from sidecar.keys import WRITES
from sidecar.write.durable import read_file
from sidecar.write.paths import check_rel_path
from sidecar.write.service import TIERS

__all__ = ["read_memory"]


async def read_memory(app: web.Application, tier: object, path: object) -> dict[str, Any]:
    """One memory file's text, by tier and tier-relative path (the write path's safety rules)."""
    if tier not in TIERS:
        raise BadRequest("tier must be agent or crew", code="invalid_tier")
    if path is None:
        raise BadRequest("missing field: path", code="invalid_path")
    rel = check_rel_path(path)
    data = await asyncio.to_thread(read_file, app[WRITES].read_root(str(tier)), rel)
    if data is None:
        raise NotFound(f"no memory file {rel!r} in the {tier} tier", code="no_such_file")
    return {"tier": tier, "path": rel, "bytes": len(data), "content": data.decode("utf-8", errors="replace")}
