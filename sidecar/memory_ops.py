"""The memory operations behind both faces of the sidecar, HTTP routes and MCP tools, so the two
can never drift: search with the read-your-writes barrier, and reading one memory file."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from sidecar.appkeys import QUEUE, SEARCH, SETTINGS, WRITES
from sidecar.durable import read_file
from sidecar.errors import BadRequest, NotFound
from sidecar.metrics import observe_search
from sidecar.paths import check_rel_path
from sidecar.search import SearchRequest
from sidecar.writes import TIERS

__all__ = ["read_memory", "search_memory"]


async def search_memory(app: web.Application, body: dict[str, Any]) -> dict[str, Any]:
    """Validate and run a search; with ``after_seq``, first wait (bounded) until that write is indexed.
    Every answer carries the index state (indexed_seq, pending, lag_ms)."""
    req = SearchRequest.from_json(body)
    queue = app[QUEUE]
    met: bool | None = None
    if req.after_seq is not None:
        if req.after_seq > queue.latest_seq:
            raise BadRequest(
                f"after_seq {req.after_seq} was never issued (the latest write is {queue.latest_seq})",
                code="invalid_after_seq",
            )
        met = await queue.wait_for(req.after_seq, app[SETTINGS].after_seq_timeout)
    return _finish(app, req, await app[SEARCH].search(req), met)


def _finish(app: web.Application, req: SearchRequest, out: dict[str, Any], met: bool | None) -> dict[str, Any]:
    observe_search(app, req.scope, out["took_ms"] / 1000)
    out["index"] = app[QUEUE].state()
    if met is not None:
        out["index"]["after_seq_met"] = met
    return out


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
