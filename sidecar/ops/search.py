"""The search operation: what ``POST /memory/search``, the ``memory_search`` MCP tool and the memory
browser answer. Its hits come from ``SearchService.search`` (which the crew listener answers with
too); the read-your-writes barrier (``after_seq``) and the index state are the agent API's own, so
they are added here, with the admission of hybrid searches (``sidecar.retrieval.admission``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from sidecar.contract import SearchAnswer, SearchRequest
from sidecar.errors import BadRequest, ClientClosed
from sidecar.ops.sidecar import Sidecar
from sidecar.retrieval.admission import Admission

__all__ = ["search", "search_json"]


async def search(sc: Sidecar, req: SearchRequest, *, gone: Callable[[], bool] | None = None) -> SearchAnswer:
    """Run a checked search; with ``after_seq``, first wait (bounded) until that write is indexed.
    A hybrid search then waits for a slot at the gate, a search with ``after_seq`` in a lane of its
    own; ``gone()`` true once it has one: the client left, and it ends without searching (499).
    Every answer carries the index state (indexed_seq, pending, lag_ms)."""
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
    gate = _gate(sc, req)
    if gate is None:
        out: dict[str, Any] = await sc.search.search(req, fallback=fallback)
    else:
        async with gate.admit(priority=req.after_seq is not None, gone=gone) as wanted:
            if not wanted:
                raise ClientClosed("search not run: the client closed the connection while it waited")
            out = await sc.search.search(req, fallback=fallback)
    if sc.search.on_search is not None:
        sc.search.on_search(req.scope, out["took_ms"] / 1000)
    out["index"] = queue.state()
    if met is not None:
        out["index"]["after_seq_met"] = met
    return cast(SearchAnswer, out)


def _gate(sc: Sidecar, req: SearchRequest) -> Admission | None:
    """The gate ``req`` passes: a search ranked here with the embedder's vectors (BM25 alone, raw
    FTS5 and the lead's crew hits on a member cost a fraction of one and never wait)."""
    if sc.batcher is None or req.raw_fts or (req.scope == "crew" and sc.search.crew_tier is None):
        return None
    return sc.batcher.admission


async def search_json(sc: Sidecar, body: dict[str, Any]) -> SearchAnswer:
    """``search`` on a JSON body, checked first (every problem a 400 naming its field)."""
    return await search(sc, SearchRequest.from_json(body))
