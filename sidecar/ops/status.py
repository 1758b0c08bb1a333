"""The index's state and its rebuild: ``GET /healthz``, ``GET /memory/status`` and
``POST /memory/reindex`` (and the ``memory_status`` views of MCP and the memory browser)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal, cast

import structlog

from sidecar.contract import HealthAnswer, Role
from sidecar.errors import BadRequest, ClientClosed, EngineUnavailable, Forbidden, NoCrewTier
from sidecar.index.tier import Tier
from sidecar.index.tier_index import Cancelled
from sidecar.ops.answers import Status
from sidecar.ops.sidecar import Sidecar
from sidecar.retrieval.batcher import embed_status

__all__ = ["StatusRequest", "healthz", "reindex", "status", "tier_for"]

log = structlog.get_logger("sidecar.ops.status")


@dataclass(frozen=True, slots=True)
class StatusRequest:
    """``GET /memory/status`` and ``POST /memory/reindex``: which tier's index (``agent`` or ``crew``)."""

    scope: Literal["agent", "crew"] = "agent"

    FIELDS = ("scope",)

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> StatusRequest:
        """From a query string; 400 ``invalid_scope`` for anything but agent or crew."""
        scope = query.get("scope", "agent")
        if scope not in ("agent", "crew"):
            raise BadRequest("scope must be agent or crew", code="invalid_scope")
        return cls(cast(Literal["agent", "crew"], scope))


def tier_for(sc: Sidecar, scope: str) -> Tier:
    """The tier this process indexes for ``scope``, or the error saying why there is none."""
    if scope in sc.tiers:
        return sc.tiers[scope]
    if sc.crew.kind == "solo":
        raise NoCrewTier("this agent has no crew tier (role solo)")
    raise Forbidden("only the crew lead indexes the crew tier; ask the lead's sidecar", code="not_lead")


def healthz(sc: Sidecar) -> HealthAnswer:
    return {"status": "ok", "role": cast(Role, sc.settings.role), "tiers": sorted(sc.tiers.keys())}


async def status(sc: Sidecar, req: StatusRequest) -> Status:
    """A tier's index, embedder, queue and watcher; a member's crew status comes from its crew."""
    if req.scope == "crew" and sc.crew.remote is not None:
        return cast(Status, await sc.crew.remote.status())
    return await _status(sc, tier_for(sc, req.scope))


async def reindex(sc: Sidecar, req: StatusRequest, client_gone: Callable[[], bool]) -> Status:
    """Rebuild a tier's index from its files, then its status. It stops (and the previous index
    stays) when ``client_gone`` says the client left (499 ``client_closed``) or the sidecar shuts
    down (503 ``reindex_cancelled``)."""
    tier = tier_for(sc, req.scope)
    try:
        result = await tier.rebuild(client_gone)
    except Cancelled:
        gone = client_gone()
        log.info("index.reindex_cancelled", tier=tier.name, reason="client gone" if gone else "shutting down")
        if gone:  # nobody reads this answer; it is the client's doing, not a server error
            raise ClientClosed("reindex stopped: the client closed the connection; the previous index stays") from None
        raise EngineUnavailable(
            "reindex stopped: the sidecar is shutting down; the previous index stays in service",
            code="reindex_cancelled",
        ) from None
    if sc.queue.on_applied is not None:
        sc.queue.on_applied(tier.name, "rebuild", result.duration_ms / 1000)
    log.info("index.rebuilt", tier=tier.name, files=len(result.added), duration_ms=round(result.duration_ms, 1))
    return await _status(sc, tier)


async def _status(sc: Sidecar, tier: Tier) -> Status:
    body = await tier.status()
    body.update(embed_status(sc.hybrid, sc.batcher, tier.name))
    body["queue"] = {**sc.queue.state(), "depth": sc.queue.pending, "errors": sc.queue.errors}
    watcher = next((w for w in sc.watchers if w.tier == tier.name), None)
    body["watcher"] = watcher.status() if watcher is not None else None
    if tier.name == "crew" and sc.crew.journal_mirror is not None:  # a lead copying its crew into a server store
        body["copy_skipped"] = sc.crew.journal_mirror.copy_skipped()
    return cast(Status, body)
