"""The search operation: what ``POST /memory/search``, the ``memory_search`` MCP tool and the memory
browser answer. Its hits come from ``SearchService.search`` (which the crew listener answers with
too); the read-your-writes barrier (``after_seq``) and the index state are the agent API's own, so
they are added here."""

from __future__ import annotations

from typing import Any, cast

from sidecar.contract import SearchAnswer, SearchRequest
from sidecar.errors import BadRequest
from sidecar.ops.sidecar import Sidecar
from sidecar.retrieval.priority import held, urgent

__all__ = ["search", "search_json"]


async def search(sc: Sidecar, req: SearchRequest) -> SearchAnswer:
    """Run a checked search; with ``after_seq``, first wait (bounded) until that write is indexed,
    and run it as urgent work (``priority``: an agent waits on it to see its own write): its steps
    off the event loop start before ordinary searches', and ordinary searches start no new stage
    until it has answered. Every answer carries the index state (indexed_seq, pending, lag_ms)."""
    if req.after_seq is None:
        return await _search(sc, req)
    with urgent(), held():
        return await _search(sc, req)


async def _search(sc: Sidecar, req: SearchRequest) -> SearchAnswer:
    settings, queue = sc.settings, sc.queue
    met: bool | None = None
    barrier = sc.crew.barrier
    if req.after_seq is not None and req.scope == "crew" and barrier is not None:
        met = await barrier(req.after_seq, settings.after_seq_timeout)
    elif req.after_seq is not None:
        if req.after_seq > queue.latest_seq:
            raise BadRequest(
                f"after_seq {req.after_seq} was never issued (the latest write is {queue.latest_seq})",
                code="invalid_after_seq",
            )
        if queue.indexed_seq < req.after_seq:
            sc.search.prepare(req)  # the query's vector is computed while the write is indexed
        met = await queue.wait_for(req.after_seq, settings.after_seq_timeout)
    fallback = sc.crew.remote is not None and settings.crew_fallback  # a member's
    out: dict[str, Any] = await sc.search.search(req, fallback=fallback)
    if sc.search.on_search is not None:
        sc.search.on_search(req.scope, out["took_ms"] / 1000)
    out["index"] = queue.state()
    if met is not None:
        out["index"]["after_seq_met"] = met
    return cast(SearchAnswer, out)


async def search_json(sc: Sidecar, body: dict[str, Any]) -> SearchAnswer:
    """``search`` on a JSON body, checked first (every problem a 400 naming its field)."""
    return await search(sc, SearchRequest.from_json(body))
