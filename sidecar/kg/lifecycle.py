"""The graph in the app: its store, the reindex queue's hook that reads changed files, a task that
reads every file once at start and then follows the journal, the search lift, and the one function
the HTTP routes and MCP tools answer with (:func:`kg_op`).

With a server crew store, a lead's crew writes are pushed into the store before they are answered
(``KG_MIRROR``, :mod:`sidecar.kg.pg_mirror`), and a member answers the crew graph's reads from the
store (``kg.ops.crew_read``, called by its ``StoreCrewProxy``); its writes still go to the lead."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import web

from sidecar.errors import BadRequest, CrewUnavailable
from sidecar.keys import CREW_PROXY, EMBEDDER, QUEUE, SEARCH, SETTINGS, TIERS
from sidecar.kg.boost import KgBoost
from sidecar.kg.dedup import NameDedup
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.ingest import Ingest
from sidecar.kg.llm import Chat, LlmExtractor
from sidecar.kg.model import Scope
from sidecar.kg.ops import GRAPH_READS, answer
from sidecar.kg.requests import parse
from sidecar.kg.sqlite_kg import KG_FILE, JournalFeed, SqliteKgStore
from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.kg.pg_mirror import CrewKgMirror
    from sidecar.store.postgres import PostgresCrewStore

__all__ = [
    "BACKFILL_RETRY_MAX_S",
    "FOLLOW_S",
    "KG",
    "KG_MIRROR",
    "KgService",
    "crew_kg_mirror",
    "facts_for_query",
    "kg_context",
    "kg_op",
    "scope_for",
]

log = structlog.get_logger("sidecar.kg")
#: Seconds between looks at the journal for new entries (a graph question looks first anyway).
FOLLOW_S = 2.0
BACKFILL_RETRY_MAX_S = 60.0  # the longest pause before a failed reading of the files is tried again


@dataclass
class KgService:
    graph: KnowledgeGraph
    ingest: Ingest


KG: web.AppKey[KgService] = web.AppKey("kg")
#: On a lead with a server crew store: the mirror of the crew's graph into it (set by the server).
KG_MIRROR: web.AppKey[CrewKgMirror] = web.AppKey("kg_mirror")


def scope_for(settings: Settings, workspace_id: str | None, scope: str) -> Scope:
    """Whose graph a request means: the workspace (default --workspace-id), the agent's own or the
    crew's (on a lead; a solo sidecar has no crew; a member's crew requests go to its lead before
    this is asked)."""
    workspace = workspace_id or settings.workspace_id
    if scope == "agent":
        return Scope(workspace)
    if settings.role == "solo":
        raise BadRequest("this agent has no crew (role solo): use scope agent", code="invalid_scope", field="scope")
    if settings.role == "member":
        raise CrewUnavailable("the crew's graph is held by the lead: ask it there", code="crew_unavailable")
    return Scope(workspace, settings.crew_id)


def kg_context(journal_file: str, chat: Chat | None = None) -> Callable[[web.Application], AsyncIterator[None]]:
    """The graph's cleanup_ctx; ``journal_file`` is the journal's database in the agent dir, ``chat``
    the chat model that reads facts beside the rules (``--kg-extractor llm``), None for the rules alone."""

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        settings = app[SETTINGS]
        store = await SqliteKgStore.open(settings.memory_dir / KG_FILE)
        embedder = app.get(EMBEDDER)
        graph = KnowledgeGraph(store, NameDedup(store, embedder) if embedder is not None else None)
        roots = {name: tier.root for name, tier in app[TIERS].items()}
        scopes = {name: Scope(settings.workspace_id, settings.crew_id if name == "crew" else "") for name in roots}
        llm = LlmExtractor(chat) if chat is not None else None
        ingest = Ingest(graph, roots, scopes, JournalFeed(settings.memory_dir / journal_file), llm)
        app[KG] = KgService(graph, ingest)
        app[QUEUE].hooks.append(ingest.changed)
        app[SEARCH].boost = KgBoost(graph, scopes)
        task = asyncio.create_task(_feed(ingest), name="kg-feed")
        try:
            yield
        finally:
            app[QUEUE].hooks.remove(ingest.changed)  # files changed from now on are read at the next start
            app[SEARCH].boost = None
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
            await ingest.aclose()
            await store.aclose()

    return ctx


def crew_kg_mirror(app: web.Application, store: PostgresCrewStore) -> CrewKgMirror:
    """On a lead with a server crew store: the copy of the crew's graph into it, started; crew
    writes answered here push through it (``kg_op``)."""
    from sidecar.kg.pg_mirror import CrewKgMirror  # and the PostgreSQL store: a lead with one only

    settings = app[SETTINGS]
    mirror = CrewKgMirror(store, settings.memory_dir / KG_FILE, interval=settings.crew_reindex_interval)
    app[KG_MIRROR] = mirror
    mirror.start()
    return mirror


async def _feed(ingest: Ingest) -> None:
    """Every file once (those read before and unchanged are skipped), then the journal as it
    grows and the changed files whose reading failed. A first reading that failed (a full disk) is
    tried again, after a pause that doubles up to ``BACKFILL_RETRY_MAX_S``: no file is left unread
    until the next start."""
    delay = FOLLOW_S
    while True:
        try:
            facts = await ingest.backfill()
        except Exception:
            log.exception("kg.backfill_failed", retry_in=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKFILL_RETRY_MAX_S)
            continue
        log.info("kg.backfilled", facts=facts)
        break
    while True:
        try:
            await ingest.reread()
            await ingest.follow()
        except Exception:
            log.exception("kg.follow_failed")
        await asyncio.sleep(FOLLOW_S)


async def kg_op(app: web.Application, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """One graph operation on a JSON body: what the route and the tool both answer. The journal's
    newest entries are read into the graph first. On a member, a crew-scope request is checked here
    and answered by the lead's crew listener (the crew's graph is the lead's)."""
    settings = app[SETTINGS]
    if settings.role == "member" and body.get("scope") == "crew":
        parse(operation, body)  # a bad request is refused here, without a trip to the lead
        proxy = app[CREW_PROXY]
        if proxy is None:
            raise CrewUnavailable("crew tier unavailable: no lead configured", code="crew_unavailable")
        sent = {k: v for k, v in body.items() if k != "scope"}
        sent["workspace_id"] = body.get("workspace_id") or settings.workspace_id
        return await proxy.kg(operation, sent)
    service = app[KG]
    await service.ingest.follow()
    answered = await run_op(service.graph, app[SETTINGS], operation, body)
    mirror = app.get(KG_MIRROR)
    if mirror is not None and operation not in GRAPH_READS and body.get("scope") == "crew":
        # In the crew store before the answer (a member reads its write there); a store that is
        # down leaves it to the mirror's rounds.
        facts = answered["facts"] if "facts" in answered else [answered["fact"]]
        await mirror.push([int(f["id"]) for f in facts])
    return answered


async def run_op(graph: KnowledgeGraph, settings: Settings, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """One graph operation (``add``, ``query``, ``invalidate``, ``timeline``, ``traverse``,
    ``tunnels``, ``stats``) on a JSON body, checked against its schema (the CLI calls this too)."""
    args = parse(operation, body)
    scope = scope_for(settings, args.pop("workspace_id"), args.pop("scope"))
    return await answer(graph, scope, operation, args)


async def facts_for_query(
    app: web.Application, query: str | None, workspace_id: str | None = None, limit: int = 12
) -> list[str]:
    """The current facts of ``workspace_id`` (default: the sidecar's) about the entities ``query``
    names, one line each (for the memory block); [] without a query, a graph or a named entity,
    or when the graph fails."""
    service = app.get(KG)
    if service is None or not query:
        return []
    scope = Scope(workspace_id or app[SETTINGS].workspace_id)
    try:
        named = await service.graph.named_in(scope, query)
        facts = await service.graph.store.facts(scope, [e.id for e in named], current_only=True, limit=limit)
    except Exception:
        log.exception("kg.block_facts_failed")
        return []
    from sidecar.scanner.scan import scan  # the scanner compiles its rules on first use

    lines = [f"{f.subject} {f.predicate} {f.object} (since {f.valid_from[:10]})" for f in facts]
    return [line for line in lines if scan(line) is None]
