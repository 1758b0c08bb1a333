"""The composition root: ``open_sidecar(settings)`` opens one agent's sidecar as a typed
``Sidecar`` (``sidecar.ops.sidecar``) and closes it again.

Each part is constructed whole through its constructor, in an order where each may use the ones
before it, and the parts close in reverse (an ``AsyncExitStack``): the tiers and their indexes;
the embedding model; the journal (store, indexer, nudger); the hybrid searcher and the background
embedder; on a member, its way to the crew (the ``CrewBackend``, chosen once from the settings:
``sidecar.server.crew``); the knowledge graph; the search service (given the hybrid searcher and
the graph's lift); on a lead with a server crew store, its mirror into it; the reindex queue
(given its hooks: the mirror woken, the scanner verdicts forgotten, the embedder woken, the
journal's entry, the graph's reading) and the write service; with a server crew store the lead's
mirrors started or a member's copy of the crew's files; and the file watchers. On exit the
watchers stop first, then the queue drains (its ``memory.updated`` entries reach the journal and
its changed files the graph, which close after it), then the indexes close.

The web application (``sidecar.server.app``) enters it in one ``cleanup_ctx`` and holds the value
under one key; ``memory-sidecar`` commands that need the whole sidecar enter the application.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import structlog

from sidecar.episodic.lifecycle import JOURNAL_FILE, open_journal, record_memory_updated
from sidecar.episodic.sqlite_store import SqliteJournalStore
from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from sidecar.index.watcher import TierWatcher
from sidecar.kg.lifecycle import open_kg
from sidecar.kg.llm import Chat
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.ops.crew import crew_kind
from sidecar.ops.sidecar import Sidecar
from sidecar.palace.agent_settings import AgentSettings
from sidecar.retrieval.batcher import open_embedding
from sidecar.retrieval.embed.factory import make_embedder
from sidecar.retrieval.search import SearchService
from sidecar.server.crew import crew_mirror, crew_remote, open_crew
from sidecar.server.lifecycle import OpeningTiers
from sidecar.settings import Settings
from sidecar.write.service import WriteService
from sidecar.write.sink import HealthCache

__all__ = ["KG_CHAT_TIMEOUT_S", "Observers", "open_sidecar"]

log = structlog.get_logger("sidecar.server.compose")
#: The longest one call of the knowledge graph's chat model may take (a file's facts then come from the rules).
KG_CHAT_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class Observers:
    """What the sidecar reports as it works (the metrics): a search's scope and seconds, an index
    update's tier, kind and seconds."""

    search: Callable[[str, float], None] | None = None
    applied: Callable[[str, str, float], None] | None = None


@asynccontextmanager
async def open_sidecar(
    settings: Settings,
    *,
    agent_settings: AgentSettings | None = None,
    opening: OpeningTiers | None = None,
    observers: Observers | None = None,
) -> AsyncIterator[Sidecar]:
    """The sidecar ``settings`` describe, open until the block exits.

    ``agent_settings``: what the agent's settings file said (already applied to ``settings``);
    ``opening``: its tiers, already opening (``memory-sidecar serve`` starts that before it
    imports the HTTP stack), else they open here; ``observers``: the metrics' hooks."""
    observe = observers or Observers()
    async with AsyncExitStack() as stack:
        opening = opening or OpeningTiers(settings)
        tiers = await opening.wait()
        stack.callback(opening.release)  # the locks go last, once the tiers are closed
        stack.push_async_callback(_close, tiers)
        embedder = await asyncio.to_thread(make_embedder, settings)
        log.info("embedder.ready", model=embedder.model_id if embedder else None)
        if embedder is not None:
            stack.push_async_callback(embedder.aclose)
        journal = await stack.enter_async_context(open_journal(settings, embedder))
        hybrid, batcher = await stack.enter_async_context(open_embedding(settings, tiers, embedder))
        kind = crew_kind(settings)  # the crew backend, chosen once
        remote = crew_remote(kind, settings, hybrid)
        if remote is not None:
            stack.push_async_callback(remote.aclose)
        chat = _kg_chat(settings)
        if chat is not None:
            stack.push_async_callback(chat[1])
        kg = await stack.enter_async_context(
            open_kg(settings, tiers, embedder=embedder, journal_file=JOURNAL_FILE, chat=chat[0] if chat else None)
        )
        search = SearchService(
            tiers["agent"],
            crew_tier=tiers.get("crew"),
            crew_remote=remote,
            hybrid=hybrid,
            boost=kg.boost,
            on_search=observe.search,
            # A member's copy of the crew's files (sidecar.store.copy).
            crew_copy=settings.crew_dir if kind == "member_store" else None,
        )

        async def journaled(tier: str, path: str, seq: int, kind: str) -> None:
            await record_memory_updated(journal.store, path, tier, seq)

        # A lead's mirror into a server crew store; it reads the queue's seq once started.
        mirror = crew_mirror(
            kind,
            settings,
            tiers=tiers,
            hybrid=hybrid,
            indexed_seq=lambda: queue.indexed_seq,
            wait_indexed=lambda seq, limit_s: queue.wait_for(seq, limit_s),  # noqa: PLW0108 -- the queue comes next
        )
        if mirror is not None:
            stack.push_async_callback(mirror.store.close)
        queue = ReindexQueue(
            tiers,
            # Before a search sees the change: the crew mirror (it only wakes, first so its copy
            # starts at once), a changed file's scanner verdicts are stale, and its new chunks are
            # to be embedded.
            hooks=[
                *([mirror.on_update] if mirror is not None else []),
                search.flags.forget,
                *([batcher.on_update] if batcher is not None else []),
            ],
            # After the index has it, each on its own: the journal's entry, the graph's reading.
            after_hooks=[journaled, kg.ingest.changed],
            # The graph lets a changed file linger before it reads it (appends to it meanwhile are
            # read once); whoever waits for the after-hooks has it read now.
            catch_up=[kg.ingest.read_pending],
            on_applied=observe.applied,
        )
        # Each commit of a tier's index tells the flag cache which bytes the files it changed hold,
        # on the writer thread, before a search can meet them: a hit is never marked with the
        # verdicts on a file's former bytes, whichever path committed it.
        for tier in tiers.values():
            tier.tell_held(search.flags.held)
        # The in-process model, when loaded: the scanner's semantic layer judges writes with it.
        writes = WriteService(settings, queue, embedder=embedder, flags=search.flags)
        queue.on_outside.append(writes.changed_outside)  # a shell edit: the caps' usage counted again
        writes.warm()
        queue.start()
        stack.push_async_callback(queue.drain_and_stop)
        stack.push_async_callback(asyncio.to_thread, writes.close)  # writes under way finish first
        crew = await stack.enter_async_context(open_crew(kind, settings, remote, mirror, journal=journal.store))
        watchers = await stack.enter_async_context(_watching(settings, tiers, queue))
        releases: list[Callable[[], Awaitable[None]]] = []
        if isinstance(journal.store, SqliteJournalStore):
            releases.append(journal.store.release_memory)
        if isinstance(kg.graph.store, SqliteKgStore):
            releases.append(kg.graph.store.release_memory)
        yield Sidecar(
            settings=settings,
            agent_settings=agent_settings or AgentSettings(),
            tiers=tiers,
            embedder=embedder,
            queue=queue,
            writes=writes,
            search=search,
            hybrid=hybrid,
            batcher=batcher,
            journal=journal.store,
            indexer=journal.indexer,
            nudger=journal.nudger,
            kg=kg,
            health=HealthCache(),
            watchers=watchers,
            crew=crew,
            releases=tuple(releases),
        )


async def _close(tiers: dict[str, Tier]) -> None:
    for tier in tiers.values():
        await tier.close()


def _kg_chat(settings: Settings) -> tuple[Chat, Callable[[], Awaitable[None]]] | None:
    """With ``--kg-extractor llm``, the summariser's chat model that reads facts beside the graph's
    rules, and how to close it; None otherwise."""
    if settings.kg_extractor != "llm":
        return None
    from sidecar.consolidate.summarise import LlmSummariser

    name, timeout = settings.summariser_model, KG_CHAT_TIMEOUT_S
    if settings.summariser == "openai":
        model = LlmSummariser("openai", settings.openai_base_url, name, settings.openai_api_key, timeout)
    else:
        model = LlmSummariser("ollama", settings.ollama_host, name, "", timeout)
    return model.chat, model.aclose


@asynccontextmanager
async def _watching(
    settings: Settings, tiers: dict[str, Tier], queue: ReindexQueue
) -> AsyncIterator[tuple[TierWatcher, ...]]:
    """A watcher per tier feeding ``queue``, started; none with memory off (the files are not indexed)."""
    watchers = []
    for name, tier in tiers.items() if settings.memory_enabled else ():
        interval = settings.crew_reindex_interval if name == "crew" else settings.reconcile_interval
        watcher = TierWatcher(
            name,
            tier.root,
            queue,
            step_ms=settings.watch_step_ms,
            debounce_ms=settings.watch_debounce_ms,
            reconcile_s=interval,
        )
        watcher.start(watch=settings.watch)
        watchers.append(watcher)
    try:
        yield tuple(watchers)
    finally:
        for watcher in watchers:
            await watcher.stop()
