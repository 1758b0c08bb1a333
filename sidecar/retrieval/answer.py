"""The agent's search answer: what ``POST /memory/search`` and the ``memory.search`` MCP tool
return, built in one place so the two can never drift. Its hits come from ``SearchService.search``,
which the crew listener answers with too; the read-your-writes barrier (``after_seq``) and the
index state are the agent API's own, so they are added here."""

from __future__ import annotations

from typing import Any, cast

from aiohttp import web

from sidecar.contract import SearchAnswer, SearchRequest
from sidecar.errors import BadRequest
from sidecar.keys import CREW_PROXY, QUEUE, SEARCH, SETTINGS

__all__ = ["search_memory"]


async def search_memory(app: web.Application, body: dict[str, Any]) -> SearchAnswer:
    """Validate and run a search; with ``after_seq``, first wait (bounded) until that write is indexed.
    Every answer carries the index state (indexed_seq, pending, lag_ms)."""
    req = SearchRequest.from_json(body)
    queue = app[QUEUE]
    met: bool | None = None
    crew_barrier = getattr(app[CREW_PROXY], "wait_for_seq", None) if req.scope == "crew" else None
    if req.after_seq is not None and crew_barrier is not None:
        # A member's crew in a server store: after_seq is the lead's write, held once the store has it.
        met = await crew_barrier(req.after_seq, app[SETTINGS].after_seq_timeout)
    elif req.after_seq is not None:
        if req.after_seq > queue.latest_seq:
            raise BadRequest(
                f"after_seq {req.after_seq} was never issued (the latest write is {queue.latest_seq})",
                code="invalid_after_seq",
            )
        if queue.indexed_seq < req.after_seq:
            app[SEARCH].prepare(req)  # the query's vector is computed while the write is indexed
        met = await queue.wait_for(req.after_seq, app[SETTINGS].after_seq_timeout)
    settings = app[SETTINGS]
    fallback = settings.role == "member" and settings.crew_fallback
    return _finish(app, req, await app[SEARCH].search(req, fallback=fallback), met)


def _finish(app: web.Application, req: SearchRequest, out: dict[str, Any], met: bool | None) -> SearchAnswer:
    observe = app[SEARCH].on_search
    if observe is not None:
        observe(req.scope, out["took_ms"] / 1000)
    out["index"] = app[QUEUE].state()
    if met is not None:
        out["index"]["after_seq_met"] = met
    return cast(SearchAnswer, out)
