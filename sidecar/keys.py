"""Typed application state keys: every resource the app holds lives under one of these."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.crew.proxy import CrewProxy
    from sidecar.index.queue import ReindexQueue
    from sidecar.index.tier import Tier
    from sidecar.index.watcher import TierWatcher
    from sidecar.retrieval.embed.base import Embedder
    from sidecar.retrieval.search import SearchService
    from sidecar.write.service import WriteService

__all__ = ["CREW_PROXY", "EMBEDDER", "QUEUE", "SEARCH", "SETTINGS", "TIERS", "WATCHERS", "WRITES"]

SETTINGS = web.AppKey("settings", Settings)
# Tiers this process indexes itself: "agent" always, "crew" on a lead.
TIERS: web.AppKey[dict[str, Tier]] = web.AppKey("tiers")
SEARCH: web.AppKey[SearchService] = web.AppKey("search")
# Set by the embedder's cleanup_ctx; None when no embedding model is configured or installed.
EMBEDDER: web.AppKey[Embedder | None] = web.AppKey("embedder")
QUEUE: web.AppKey[ReindexQueue] = web.AppKey("queue")
WRITES: web.AppKey[WriteService] = web.AppKey("writes")
WATCHERS: web.AppKey[list[TierWatcher]] = web.AppKey("watchers")
# On a member, the client for the lead's crew listener; None on solo and lead.
CREW_PROXY: web.AppKey[CrewProxy | None] = web.AppKey("crew_proxy")
