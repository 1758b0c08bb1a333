"""``create_app(settings)``: the one way to build the sidecar's HTTP application.

Each resource is owned by one ``cleanup_ctx``, started in order and stopped in reverse (and only
stopped if it started): the tiers and their indexes; the search service (with the proxy to the
lead on a member); the reindex queue and the write service; the watchers; the crew listener on a
lead. On shutdown the watchers stop first, then the queue drains, then the indexes close.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import structlog
from aiohttp import web

from sidecar.crew.listener import crew_listener_ctx
from sidecar.episodic.lifecycle import (
    CREW_JOURNAL,
    JOURNAL,
    JOURNAL_FILE,
    JOURNAL_MIRROR,
    record_memory_updated,
    setup_episodic,
)
from sidecar.episodic.sqlite_store import SqliteJournalStore
from sidecar.http import block as block_api
from sidecar.http import consolidate, journal, memories, metrics, openapi_route, palace, search
from sidecar.http import files as write_api
from sidecar.http import kg as kg_api
from sidecar.http import status as api
from sidecar.http.consolidate import consolidate_schedule_ctx
from sidecar.http.errors import error_middleware
from sidecar.http.guards import body_deadline, host_origin_guard
from sidecar.http.metrics import METRICS, observe_reindex, setup_metrics
from sidecar.http.palace import AGENT_SETTINGS
from sidecar.http.policy import policy_middleware
from sidecar.index.queue import ReindexQueue
from sidecar.index.watcher import TierWatcher
from sidecar.keys import CREW_PROXY, EMBEDDER, QUEUE, SEARCH, SETTINGS, TIERS, WATCHERS, WRITES
from sidecar.kg.lifecycle import KG, crew_kg_mirror, kg_context
from sidecar.kg.llm import Chat
from sidecar.kg.sqlite_kg import SqliteKgStore
from sidecar.mcp import server as mcp_server
from sidecar.palace.agent_settings import apply as apply_agent_settings
from sidecar.palace.agent_settings import load_agent_settings
from sidecar.retrieval.batcher import HYBRID, embed_ctx
from sidecar.retrieval.embed.factory import make_embedder
from sidecar.retrieval.search import SearchService
from sidecar.server.lifecycle import IdleRelease, OpeningTiers
from sidecar.settings import Settings
from sidecar.ui import routes as ui
from sidecar.write.service import WriteService

if TYPE_CHECKING:
    from sidecar.crew.proxy import CrewProxy
    from sidecar.episodic.crew_store import CrewJournalMirror
    from sidecar.store.postgres import PostgresCrewStore

__all__ = ["create_app"]

log = structlog.get_logger("sidecar.server.app")
# Tiers whose opening started before the app was built (``memory-sidecar serve`` does that).
_OPENING: web.AppKey[OpeningTiers] = web.AppKey("opening_tiers")
#: The longest one call of the knowledge graph's chat model may take (a file's facts then come from the rules).
KG_CHAT_TIMEOUT_S = 30.0
IDLE_RELEASE: web.AppKey[IdleRelease] = web.AppKey("idle_release")


def create_app(settings: Settings, tiers: OpeningTiers | None = None) -> web.Application:
    """Build the agent-facing application for ``settings`` (nothing starts until it runs).

    ``tiers``: the tiers, already opening (see sidecar.server.serve); by default they open when it starts.
    """
    # Refuse DNS-rebinding requests (Host, Origin) and bodies that trickle in, before anything else.
    # Then the registry's rules (memory off, unknown fields), the same for every route.
    middlewares = [host_origin_guard(settings), body_deadline(), error_middleware, policy_middleware]
    # The agent's own settings file in its tier dir (memory.toml or settings.md) goes over the
    # environment and flags; a bad file is reported, never fatal.
    found = load_agent_settings(settings.memory_dir)
    for problem in found.errors:
        log.warning("agent_settings.invalid", problem=problem)
    settings = apply_agent_settings(settings, found)
    app = web.Application(middlewares=middlewares, client_max_size=settings.max_body_bytes)
    app[SETTINGS] = settings
    app[AGENT_SETTINGS] = found
    if tiers is not None:
        app[_OPENING] = tiers
    # Order matters: each context may use the ones before it, and closes after the ones after it
    # (the journal outlives the queue's drain, which records memory.updated entries in it).
    app.cleanup_ctx.extend([_tiers_ctx, _idle_release_ctx, _embedder_ctx])
    app.on_response_prepare.append(_touch_idle_release)
    setup_episodic(app)
    app.cleanup_ctx.extend(
        [
            _journal_release_ctx,
            _proxy_ctx,
            _queue_ctx,
            kg_context(JOURNAL_FILE, _kg_chat(app, settings)),  # the knowledge graph: reads what the queue applies
            _kg_release_ctx,
            embed_ctx,
            _hybrid_ctx,
            _crew_store_ctx,
            _flags_ctx,
            _watchers_ctx,
            crew_listener_ctx,
            consolidate_schedule_ctx,
        ]
    )
    app.on_shutdown.append(_stop_long_work)
    routed = (api, search, write_api, mcp_server, block_api, journal, memories, consolidate, metrics, openapi_route)
    for module in routed:
        app.router.add_routes(module.routes)
    app.router.add_routes(palace.routes)
    app.router.add_routes(kg_api.routes)
    if settings.ui:  # the read-only memory browser at /ui
        app.router.add_routes(ui.routes)
    mcp_server.setup(app)  # MCP sessions and the sink-health cache that gates the tools
    setup_metrics(app)  # its middleware goes outermost, so it sees the final status of every request
    return app


def _kg_chat(app: web.Application, settings: Settings) -> Chat | None:
    """With ``--kg-extractor llm``, the summariser's chat model reads facts beside the graph's rules
    (closed with the app); None otherwise."""
    if settings.kg_extractor != "llm":
        return None
    from sidecar.consolidate.summarise import LlmSummariser

    name, timeout = settings.summariser_model, KG_CHAT_TIMEOUT_S
    if settings.summariser == "openai":
        model = LlmSummariser("openai", settings.openai_base_url, name, settings.openai_api_key, timeout)
    else:
        model = LlmSummariser("ollama", settings.ollama_host, name, "", timeout)

    async def close(app: web.Application) -> None:
        await model.aclose()

    app.on_cleanup.append(close)
    return model.chat


async def _tiers_ctx(app: web.Application) -> AsyncIterator[None]:
    opening = app.get(_OPENING) or OpeningTiers(app[SETTINGS])
    tiers = await opening.wait()
    app[TIERS] = tiers
    try:
        yield
    finally:
        for tier in tiers.values():
            await tier.close()
        opening.release()  # the journal, in a later context, closed before this one


async def _idle_release_ctx(app: web.Application) -> AsyncIterator[None]:
    release = IdleRelease(app[TIERS])
    app[IDLE_RELEASE] = release
    try:
        yield
    finally:
        await release.aclose()


async def _touch_idle_release(request: web.Request, response: web.StreamResponse) -> None:
    release = request.app.get(IDLE_RELEASE)
    if release is not None:
        release.touch()


async def _journal_release_ctx(app: web.Application) -> AsyncIterator[None]:
    """The journal's page caches are handed back with the tiers' when the sidecar goes idle."""
    release = app[IDLE_RELEASE]
    journal = app.get(JOURNAL)
    if isinstance(journal, SqliteJournalStore):
        release.others.append(journal.release_memory)
    yield


async def _kg_release_ctx(app: web.Application) -> AsyncIterator[None]:
    """The knowledge graph's page caches are handed back with the tiers' when the sidecar goes idle."""
    store = app[KG].graph.store
    if isinstance(store, SqliteKgStore):
        app[IDLE_RELEASE].others.append(store.release_memory)
    yield


async def _embedder_ctx(app: web.Application) -> AsyncIterator[None]:
    """The embedding model (None when not configured or not installed), loaded off the loop."""
    embedder = await asyncio.to_thread(make_embedder, app[SETTINGS])
    app[EMBEDDER] = embedder
    log.info("embedder.ready", model=embedder.model_id if embedder else None)
    try:
        yield
    finally:
        if embedder is not None:
            await embedder.aclose()


async def _proxy_ctx(app: web.Application) -> AsyncIterator[None]:
    """The search service; on a member, with the proxy to the lead's crew listener."""
    settings = app[SETTINGS]
    tiers = app[TIERS]
    proxy: CrewProxy | None = None
    if settings.role == "member" and settings.crew_store != "sqlite":
        from sidecar.crew.proxy import StoreCrewProxy  # the crew in a server store: searched directly
        from sidecar.store.postgres import PostgresCrewStore

        store = PostgresCrewStore(settings.crew_store, settings.crew_id, timeout=settings.crew_store_timeout)
        proxy = StoreCrewProxy(settings, store)
    elif settings.role == "member":
        from sidecar.crew.proxy import CrewProxy as LeadProxy  # httpx and the proxy: members only

        proxy = LeadProxy(settings)
    app[CREW_PROXY] = proxy
    app[SEARCH] = search = SearchService(tiers["agent"], crew_tier=tiers.get("crew"), crew_remote=proxy)
    if settings.role == "member" and settings.crew_store != "sqlite":
        search.crew_copy = settings.crew_dir  # the member's copy of the crew's files (sidecar.store.copy)
    metrics = app.get(METRICS)
    if metrics is not None:
        search.on_search = metrics.observe_search
    try:
        yield
    finally:
        if proxy is not None:
            await proxy.aclose()


async def _queue_ctx(app: web.Application) -> AsyncIterator[None]:
    queue = ReindexQueue(app[TIERS])

    async def journal(tier: str, path: str, seq: int, kind: str) -> None:
        await record_memory_updated(app, path, tier, seq)

    queue.hooks.append(journal)
    queue.hooks.append(app[SEARCH].flags.forget)  # a changed file's scanner verdicts are stale
    queue.on_applied = lambda tier, kind, seconds: observe_reindex(app, tier, kind, seconds)
    app[QUEUE] = queue
    app[WRITES] = writes = WriteService(app[SETTINGS], queue)
    writes.warm()
    queue.start()
    try:
        yield
    finally:
        await asyncio.to_thread(writes.close)  # writes under way finish (their handlers wait for them)
        await queue.drain_and_stop()


async def _hybrid_ctx(app: web.Application) -> AsyncIterator[None]:
    """Local tiers search through the hybrid searcher (plain BM25 when no embedder is configured)."""
    app[SEARCH].hybrid = app[HYBRID]
    proxy = app[CREW_PROXY]
    if proxy is not None and hasattr(proxy, "hybrid"):
        proxy.hybrid = app[HYBRID]  # a member searching a crew store embeds its queries itself
    yield


async def _crew_store_ctx(app: web.Application) -> AsyncIterator[None]:
    """With a server crew store: on a lead, the mirror that keeps the store level with the crew
    index; on a member, its copy of the crew's files (its memory block reads them)."""
    settings = app[SETTINGS]
    proxy = app[CREW_PROXY]
    if settings.role == "member" and proxy is not None and hasattr(proxy, "store"):
        from sidecar.store.copy import CrewFileCopy

        copy = CrewFileCopy(proxy.store, settings.crew_dir)
        if JOURNAL in app:
            from sidecar.episodic.crew_store import PostgresCrewJournal

            app[CREW_JOURNAL] = PostgresCrewJournal(proxy.store)  # the crew's memories, copied there by the lead
        copy.start()
        try:
            yield
        finally:
            await copy.stop()
        return
    if settings.role != "lead" or settings.crew_store == "sqlite":
        yield
        return
    from sidecar.store.mirror import CrewMirror
    from sidecar.store.postgres import PostgresCrewStore
    from sidecar.store.sqlite import SqliteCrewSource

    hybrid = app[HYBRID]
    queue = app[QUEUE]
    store = PostgresCrewStore(settings.crew_store, settings.crew_id, timeout=settings.crew_store_timeout)
    mirror = CrewMirror(
        store,
        SqliteCrewSource(app[TIERS]["crew"].root),
        indexed_seq=lambda: queue.indexed_seq,
        model=lambda: hybrid.embedder.model_id if hybrid.embedder is not None else None,
        interval=settings.crew_reindex_interval,
    )
    queue.hooks.insert(0, mirror.on_update)  # it only wakes the mirror: first, so the copy starts at once
    mirror.start()
    journal_mirror = _journal_mirror(app, store)
    kg_mirror = crew_kg_mirror(app, store)  # the crew's knowledge graph
    try:
        yield
    finally:
        await kg_mirror.stop()
        if journal_mirror is not None:
            await journal_mirror.stop()
        await mirror.stop()
        await store.close()


def _journal_mirror(app: web.Application, store: PostgresCrewStore) -> CrewJournalMirror | None:
    """On a lead with a server crew store: the copy of the crew's journal entries into it, started."""
    journal = app.get(JOURNAL)
    if journal is None:
        return None
    from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal

    settings = app[SETTINGS]
    mirror = CrewJournalMirror(
        PostgresCrewJournal(store), journal, settings.crew_id, interval=settings.crew_reindex_interval
    )
    app[JOURNAL_MIRROR] = mirror
    mirror.start()
    return mirror


async def _flags_ctx(app: web.Application) -> AsyncIterator[None]:
    """Scan the tiers' files for the injection scanner's verdicts in the background, so the first
    search that shows a file does not pay for it."""
    search = app[SEARCH]
    roots = {name: tier.root for name, tier in app[TIERS].items()} if app[SETTINGS].memory_enabled else {}
    task = asyncio.create_task(search.flags.warm(roots), name="flag-warm")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _watchers_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    watchers = []
    # Memory off: nobody watches the files (they are not indexed).
    for name, tier in app[TIERS].items() if settings.memory_enabled else ():
        interval = settings.crew_reindex_interval if name == "crew" else settings.reconcile_interval
        watcher = TierWatcher(
            name,
            tier.root,
            app[QUEUE],
            step_ms=settings.watch_step_ms,
            debounce_ms=settings.watch_debounce_ms,
            reconcile_s=interval,
        )
        watcher.start(watch=settings.watch)
        watchers.append(watcher)
    app[WATCHERS] = watchers
    yield
    for watcher in watchers:
        await watcher.stop()


async def _stop_long_work(app: web.Application) -> None:
    """On SIGTERM, a running full reindex stops and rolls back; the previous index stays.
    Queued reindex work is not dropped: the queue drains when its context closes."""
    log.info("sidecar.shutdown", queue_pending=app[QUEUE].pending)
    for tier in app[TIERS].values():
        tier.stopping.set()
