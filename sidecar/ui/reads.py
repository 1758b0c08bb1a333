"""What the memory browser shows, read through the same functions the agent API's routes call:
files and search as ``/memory/list``, ``/memory/read`` and ``/memory/search`` answer them, typed
memories and the journal from the journal store as ``/memory/memories`` and ``GET /journal`` read
it, the graph through ``sidecar.ops.kg``, health as ``GET /memory/health`` and the block from the
operation ``POST /memory/block`` runs. Nothing here writes, and nothing opens SQLite."""

from __future__ import annotations

from typing import Any

from sidecar.contract import ListRequest, ReadAnswer, ReadRequest, SearchAnswer
from sidecar.episodic.entry import check_namespace, check_topic_key, require_id
from sidecar.episodic.health import health_history
from sidecar.episodic.memories import Identity
from sidecar.episodic.store import HealthSnapshot
from sidecar.ops import files as file_ops
from sidecar.ops import palace
from sidecar.ops.kg import kg
from sidecar.ops.search import search_json
from sidecar.ops.sidecar import Sidecar

__all__ = [
    "MEMORIES_SHOWN",
    "files",
    "graph_stats",
    "health",
    "journal",
    "memories",
    "memory_block",
    "neighbours",
    "read",
    "search",
    "timeline",
    "topic_history",
    "workspace",
]

#: The most typed memories one page lists (the route's own ceiling).
MEMORIES_SHOWN = 200


def workspace(sc: Sidecar, given: str | None) -> str:
    """The workspace a view reads: the one asked for, else the sidecar's own."""
    value = require_id("workspace_id", given or sc.settings.workspace_id)
    assert value is not None
    return value


async def files(sc: Sidecar) -> list[dict[str, Any]]:
    """Every memory file of the tiers, as ``GET /memory/list`` lists them."""
    return [dict(f) for f in (await palace.listed(sc, ListRequest()))["files"]]


async def read(sc: Sidecar, tier: str, path: str) -> ReadAnswer:
    """One file as ``GET /memory/read`` answers it, with the sections the scanner flagged."""
    return await file_ops.read(sc, ReadRequest.from_json({"tier": tier, "path": path}))


async def search(sc: Sidecar, query: str, scope: str | None, limit: int | None) -> SearchAnswer:
    """``POST /memory/search``'s answer, with ``explain`` (why each hit matched)."""
    body: dict[str, Any] = {"query": query, "explain": True}
    if scope:
        body["scope"] = scope
    if limit is not None:
        body["limit"] = limit
    return await search_json(sc, body)


def _identity(sc: Sidecar, given: dict[str, str]) -> Identity:
    who = Identity.from_settings(sc.settings).merged({k: v for k, v in given.items() if v})
    check_namespace(who.namespace)
    return who


async def memories(
    sc: Sidecar, given: dict[str, str], memory_type: str | None, tag: str | None
) -> list[dict[str, Any]]:
    """The live typed memories ``GET /memory/memories`` lists for ``given`` (workspace, agent,
    namespace), narrowed to one type and one tag when asked."""
    who = _identity(sc, given)
    found = await sc.journal.memories(
        who.workspace_id, who.namespace, MEMORIES_SHOWN, agent_id=who.agent_id, crew_id=who.crew_id
    )
    out = [e.to_json() for e in found]
    if memory_type:
        out = [m for m in out if m["memory_type"] == memory_type]
    if tag:
        out = [m for m in out if tag in m["tags"]]
    return out


async def topic_history(sc: Sidecar, given: dict[str, str], topic_key: str) -> list[dict[str, Any]]:
    """Every memory that held ``topic_key``, newest first, as ``GET /memory/memories?topic_key=``."""
    who = _identity(sc, given)
    key = check_topic_key(topic_key)
    found = await sc.journal.history(who.workspace_id, who.namespace, key, MEMORIES_SHOWN, agent_id=who.agent_id)
    return [e.to_json() for e in found]


async def journal(sc: Sidecar, workspace_id: str, q: str, limit: int) -> list[dict[str, Any]]:
    """``GET /journal``'s entries: the newest, or those matching ``q``."""
    store = sc.journal
    found = await store.search(q, workspace_id, limit) if q.strip() else await store.recent(workspace_id, limit)
    return [e.to_json() for e in found]


def _graph_body(entity: str | None, workspace_id: str | None, scope: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"entity": entity} if entity is not None else {}
    if workspace_id:
        body["workspace_id"] = workspace_id
    if scope:
        body["scope"] = scope
    return body


async def timeline(sc: Sidecar, entity: str, workspace_id: str | None, scope: str | None) -> dict[str, Any]:
    """``POST /kg/timeline``: the entity and its facts, oldest first, ended ones kept."""
    return await kg(sc, "timeline", _graph_body(entity, workspace_id, scope))


async def neighbours(sc: Sidecar, entity: str, workspace_id: str | None, scope: str | None) -> dict[str, Any]:
    """``POST /kg/traverse`` one hop out: the entities the current facts link to it."""
    return await kg(sc, "traverse", {**_graph_body(entity, workspace_id, scope), "hops": 1})


async def graph_stats(sc: Sidecar, workspace_id: str | None, scope: str | None) -> dict[str, Any]:
    """``GET /kg/stats``: the graph's counts."""
    return await kg(sc, "stats", _graph_body(None, workspace_id, scope))


async def health(sc: Sidecar, workspace_id: str, crew_id: str | None) -> list[HealthSnapshot]:
    """The stored health snapshots, oldest first, the newest being what ``GET /memory/health``
    reads (never recomputed)."""
    return await health_history(sc.journal, workspace_id, crew_id)


async def memory_block(sc: Sidecar, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /memory/block``'s answer for ``body``: the same function the route runs (no
    ``Origin`` reached this page: the guards refuse a foreign one before it)."""
    from sidecar.contract import BlockRequest
    from sidecar.ops.block import block

    return dict(await block(sc, BlockRequest.from_json(body, sc.settings)))
