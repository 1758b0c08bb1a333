"""The ``Sidecar``: every part one agent's sidecar holds, in one typed value.

``sidecar.server.compose.open_sidecar`` builds it whole, each part through its constructor, and
closes the parts in reverse; the operations (``sidecar.ops.*``) take it, and the ways in (the HTTP
routes, the MCP tools, the crew listener, the memory browser) hand it to them. Nothing here knows
of aiohttp."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sidecar.ops.crew import CrewBackend
from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.episodic.indexer import Indexer
    from sidecar.episodic.nudges import Nudger
    from sidecar.episodic.store import JournalStore
    from sidecar.index.queue import ReindexQueue
    from sidecar.index.tier import Tier
    from sidecar.index.watcher import TierWatcher
    from sidecar.kg.lifecycle import KgService
    from sidecar.palace.agent_settings import AgentSettings
    from sidecar.retrieval.batcher import EmbedBatcher
    from sidecar.retrieval.embed.base import Embedder
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.retrieval.search import SearchService
    from sidecar.write.service import WriteService
    from sidecar.write.sink import HealthCache, SinkHealth

__all__ = ["Sidecar"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sidecar:
    """One agent's sidecar, open: its settings and every part the operations use."""

    settings: Settings
    #: What the agent's own settings file said (its values already applied to ``settings``).
    agent_settings: AgentSettings
    #: The tiers this process indexes: ``agent`` always, ``crew`` on a lead.
    tiers: Mapping[str, Tier]
    #: The embedding model; None when none is configured or installed.
    embedder: Embedder | None
    queue: ReindexQueue
    writes: WriteService
    search: SearchService
    hybrid: HybridSearcher
    #: The background embedder of chunks; None without an embedder.
    batcher: EmbedBatcher | None
    journal: JournalStore
    indexer: Indexer
    nudger: Nudger
    kg: KgService
    #: Whether the memory sink is usable now (it gates the MCP memory tools).
    health: HealthCache
    #: The file watchers feeding the queue (none with memory off).
    watchers: tuple[TierWatcher, ...] = ()
    #: How this sidecar reaches its crew, chosen once at start (``sidecar.ops.crew``).
    crew: CrewBackend
    #: What hands back page caches while the sidecar is idle (the journal's, the graph's).
    releases: tuple[Callable[[], Awaitable[None]], ...] = ()

    async def sink_health(self) -> SinkHealth:
        """The memory sink's health, at most the cache's ttl old."""
        return await self.health.get(self.settings, self.tiers["agent"], self.writes)
