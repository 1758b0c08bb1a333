"""The graph in a running sidecar (``open_kg``, which the composition root enters): its store, the
reindex queue's hook that reads changed files, a task that reads every file once at start and then
follows the journal, and the search lift; the graph's operations on a typed request (``run_op``, which
``sidecar.ops.kg`` and the CLI call) and its current facts for the memory block.

With a server crew store, a lead's crew writes are pushed into the store before they are answered
(``crew_kg_mirror``, :mod:`sidecar.kg.pg_mirror`), and a member answers the crew graph's reads from
the store (``kg.ops.crew_read``, called by its ``StoreCrewProxy``); its writes still go to the lead."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog

from sidecar.errors import BadRequest, CrewUnavailable
from sidecar.index.tier import Tier
from sidecar.kg.boost import KgBoost
from sidecar.kg.dedup import NameDedup
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.ingest import Ingest
from sidecar.kg.llm import Chat, LlmExtractor
from sidecar.kg.model import Scope
from sidecar.kg.ops import answer
from sidecar.kg.requests import KgRequest
from sidecar.kg.sqlite_kg import KG_FILE, JournalFeed, SqliteKgStore
from sidecar.retrieval.embed.base import Embedder
from sidecar.settings import Settings
from sidecar.tasks import stop_task

if TYPE_CHECKING:
    from sidecar.kg.pg_mirror import CrewKgMirror
    from sidecar.store.postgres import PostgresCrewStore

__all__ = [
    "BACKFILL_RETRY_MAX_S",
    "FOLLOW_S",
    "LINGER_S",
    "KgService",
    "crew_kg_mirror",
    "facts_for_query",
    "open_kg",
    "run_op",
    "scope_for",
]

log = structlog.get_logger("sidecar.kg")
#: Seconds between looks at the journal for new entries (a graph question looks first anyway).
FOLLOW_S = 2.0
BACKFILL_RETRY_MAX_S = 60.0  # the longest pause before a failed reading of the files is tried again
#: Seconds a changed file waits before the graph reads it: appends to one file in that time are read
#: once (a reading costs an append about as much CPU as the index's apply). A graph question reads
#: the waiting files first; the lift a search gets from the graph may lag the files by this much.
LINGER_S = 1.0


@dataclass(frozen=True, slots=True)
class KgService:
    """The graph and what feeds it (the files through the queue, the journal)."""

    graph: KnowledgeGraph
    ingest: Ingest
    boost: KgBoost  # the search lift of hits for the entities a query names


def scope_for(settings: Settings, workspace_id: str | None, scope: str) -> Scope:
    """Whose graph a request means: the workspace (default --workspace-id), the agent's own or the
    crew's (on a lead; a solo sidecar has no crew; a member's crew requests go to its lead before
    this is asked)."""
    workspace = workspace_id or settings.workspace_id
    if scope == "agent":
        return Scope(workspace)
    if not settings.has_crew:
        raise BadRequest("this agent has no crew (role solo): use scope agent", code="invalid_scope", field="scope")
    if "crew" not in settings.held_tiers:
        raise CrewUnavailable("the crew's graph is held by the lead: ask it there", code="crew_unavailable")
    return Scope(workspace, settings.crew_id)


@asynccontextmanager
async def open_kg(
    settings: Settings,
    tiers: Mapping[str, Tier],
    *,
    embedder: Embedder | None,
    journal_file: str,
    chat: Chat | None = None,
) -> AsyncIterator[KgService]:
    """The graph in the agent dir, fed by changed files (``ingest.changed``, the reindex queue's
    after-hook) and the journal in ``journal_file`` (the journal's database in the agent dir),
    with the lift of search hits (``boost``); ``chat`` is the chat model that reads facts beside
    the rules (``--kg-extractor llm``), None for the rules alone. On exit the feed stops and the
    store closes."""
    store = await SqliteKgStore.open(settings.memory_dir / KG_FILE)
    graph = KnowledgeGraph(store, NameDedup(store, embedder) if embedder is not None else None)
    roots = {name: tier.root for name, tier in tiers.items()}
    scopes = {name: Scope(settings.workspace_id, settings.crew_id if name == "crew" else "") for name in roots}
    llm = LlmExtractor(chat) if chat is not None else None
    ingest = Ingest(graph, roots, scopes, JournalFeed(settings.memory_dir / journal_file), llm, linger_s=LINGER_S)
    task = asyncio.create_task(_feed(ingest), name="kg-feed")
    try:
        yield KgService(graph, ingest, KgBoost(graph, scopes))
    finally:
        with contextlib.suppress(Exception):
            await stop_task(task)
        await ingest.aclose()
        await store.aclose()


def crew_kg_mirror(settings: Settings, store: PostgresCrewStore) -> CrewKgMirror:
    """On a lead with a server crew store: the copy of the crew's graph into it, started; crew
    writes answered here push through it (``sidecar.ops.kg``)."""
    from sidecar.kg.pg_mirror import CrewKgMirror  # and the PostgreSQL store: a lead with one only

    mirror = CrewKgMirror(store, settings.memory_dir / KG_FILE, interval=settings.crew_reindex_interval)
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


async def run_op(graph: KnowledgeGraph, settings: Settings, req: KgRequest) -> dict[str, Any]:
    """One graph operation (``add``, ``query``, ``invalidate``, ``timeline``, ``traverse``,
    ``tunnels``, ``stats``) on its request, already checked against its schema by the way in
    (``KgRequest.from_json``; the CLI calls this too)."""
    args = dict(req.args)
    scope = scope_for(settings, args.pop("workspace_id"), args.pop("scope"))
    return await answer(graph, scope, req.operation, args)


async def facts_for_query(service: KgService, query: str | None, workspace_id: str, limit: int = 12) -> list[str]:
    """The current facts of ``workspace_id`` about the entities ``query`` names, one line each (for
    the memory block); [] without a query or a named entity, or when the graph fails."""
    if not query:
        return []
    scope = Scope(workspace_id)
    try:
        named = await service.graph.named_in(scope, query)
        facts = await service.graph.store.facts(scope, [e.id for e in named], current_only=True, limit=limit)
    except Exception:
        log.exception("kg.block_facts_failed")
        return []
    from sidecar.scanner.scan import scan  # the scanner compiles its rules on first use

    lines = [f"{f.subject} {f.predicate} {f.object} (since {f.valid_from[:10]})" for f in facts]
    return [line for line in lines if scan(line) is None]
