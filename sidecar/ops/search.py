"""The search operation: what ``POST /memory/search``, the ``memory_search`` MCP tool and the memory
browser answer, on typed parts rather than the web application. Its hits come from
``SearchService.search`` (which the crew listener answers with too); the read-your-writes barrier
(``after_seq``) and the index state are the agent API's own, so they are added here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from sidecar.contract import SearchAnswer, SearchRequest
from sidecar.errors import BadRequest
from sidecar.index.queue import ReindexQueue
from sidecar.retrieval.search import SearchService
from sidecar.settings import Settings

__all__ = ["SearchParts", "search"]

#: A member's crew in a server store: waits (bounded) until the store holds the lead's write ``seq``.
CrewBarrier = Callable[[int, float], Awaitable[bool]]


@dataclass(frozen=True, slots=True)
class SearchParts:
    """What a search needs of the sidecar."""

    settings: Settings
    queue: ReindexQueue
    service: SearchService
    crew_barrier: CrewBarrier | None = None


async def search(parts: SearchParts, req: SearchRequest) -> SearchAnswer:
    """Run a checked search; with ``after_seq``, first wait (bounded) until that write is indexed.
    Every answer carries the index state (indexed_seq, pending, lag_ms)."""
    settings, queue = parts.settings, parts.queue
    met: bool | None = None
    if req.after_seq is not None and req.scope == "crew" and parts.crew_barrier is not None:
        met = await parts.crew_barrier(req.after_seq, settings.after_seq_timeout)
    elif req.after_seq is not None:
        if req.after_seq > queue.latest_seq:
            raise BadRequest(
                f"after_seq {req.after_seq} was never issued (the latest write is {queue.latest_seq})",
                code="invalid_after_seq",
            )
        if queue.indexed_seq < req.after_seq:
            parts.service.prepare(req)  # the query's vector is computed while the write is indexed
        met = await queue.wait_for(req.after_seq, settings.after_seq_timeout)
    fallback = settings.role == "member" and settings.crew_fallback
    out: dict[str, Any] = await parts.service.search(req, fallback=fallback)
    if parts.service.on_search is not None:
        parts.service.on_search(req.scope, out["took_ms"] / 1000)
    out["index"] = queue.state()
    if met is not None:
        out["index"]["after_seq_met"] = met
    return cast(SearchAnswer, out)
