"""The crew backend, chosen once at start (``sidecar.ops.crew``): what it is made of for each kind,
and its parts' lifecycle inside ``open_sidecar``.

Each part is built whole through its constructor. A member's remote is made once the hybrid
searcher exists (a member searching a crew store embeds its queries with it) and before the search
service, which needs it. A lead's mirror into a server crew store is made before the reindex queue,
which takes its wake-up as its first hook. The rest start once the queue and the journal exist: a
``member_store``'s copy of the crew's files (its memory block reads them) and its view of the
crew's journal entries; a lead's mirrors that keep the server crew store level with its crew
index, journal and graph."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sidecar.episodic.store import JournalStore
from sidecar.index.tier import Tier
from sidecar.kg.lifecycle import crew_kg_mirror
from sidecar.ops.crew import CrewBarrier, CrewKind, CrewRemote
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal
    from sidecar.kg.pg_mirror import CrewKgMirror
    from sidecar.store.mirror import CrewMirror

__all__ = ["Crew", "crew_mirror", "crew_remote", "open_crew"]


@dataclass(frozen=True, slots=True)
class Crew:
    """A ``CrewBackend``: the kind and the parts it has."""

    kind: CrewKind
    remote: CrewRemote | None = None
    barrier: CrewBarrier | None = None
    crew_journal: PostgresCrewJournal | None = None
    journal_mirror: CrewJournalMirror | None = None
    kg_mirror: CrewKgMirror | None = None


def crew_remote(kind: CrewKind, settings: Settings, hybrid: HybridSearcher) -> CrewRemote | None:
    """A member's way to the crew: the lead's crew listener, or the server crew store searched
    directly with ``hybrid`` embedding the queries (the lead behind it for what only the lead
    answers); None on solo and lead."""
    if kind == "member_store":
        from sidecar.crew.proxy import StoreCrewProxy  # httpx, the proxy and asyncpg: members only
        from sidecar.store.postgres import PostgresCrewStore

        store = PostgresCrewStore(settings.crew_store, settings.crew_id, timeout=settings.crew_store_timeout)
        return StoreCrewProxy(settings, store, hybrid)
    if kind == "member":
        from sidecar.crew.proxy import CrewProxy

        return CrewProxy(settings)
    return None


def crew_mirror(
    kind: CrewKind,
    settings: Settings,
    *,
    tiers: Mapping[str, Tier],
    hybrid: HybridSearcher,
    indexed_seq: Callable[[], int],
    wait_indexed: Callable[[int, float], Awaitable[bool]],
) -> CrewMirror | None:
    """A lead with a server crew store: the mirror that keeps the store level with its crew index,
    not started (its ``on_update`` is the reindex queue's first hook, so a copy starts at once;
    ``indexed_seq`` reads the queue's, ``wait_indexed`` is its ``wait_for``: the mirror publishes
    every seq the queue reaches); None otherwise. Its store is the caller's to close."""
    if kind != "lead" or settings.crew_store == "sqlite":
        return None
    from sidecar.store.mirror import CrewMirror
    from sidecar.store.postgres import PostgresCrewStore
    from sidecar.store.sqlite import SqliteCrewSource

    store = PostgresCrewStore(settings.crew_store, settings.crew_id, timeout=settings.crew_store_timeout)
    return CrewMirror(
        store,
        SqliteCrewSource(tiers["crew"].root),
        indexed_seq=indexed_seq,
        wait_indexed=wait_indexed,
        model=lambda: hybrid.embedder.model_id if hybrid.embedder is not None else None,
        interval=settings.crew_reindex_interval,
    )


@asynccontextmanager
async def open_crew(
    kind: CrewKind,
    settings: Settings,
    remote: CrewRemote | None,
    mirror: CrewMirror | None,
    *,
    journal: JournalStore,
) -> AsyncIterator[Crew]:
    """The crew backend of ``kind`` with its parts started; they stop on exit (the remote and the
    mirror's store are the caller's to close)."""
    if kind == "member_store":
        from sidecar.crew.proxy import StoreCrewProxy
        from sidecar.episodic.crew_store import PostgresCrewJournal
        from sidecar.store.copy import CrewFileCopy

        assert isinstance(remote, StoreCrewProxy)  # what crew_remote made for this kind
        copy = CrewFileCopy(remote.store, settings.crew_dir)
        copy.start()
        try:
            yield Crew(kind, remote, barrier=remote.wait_for_seq, crew_journal=PostgresCrewJournal(remote.store))
        finally:
            await copy.stop()
    elif mirror is not None:
        async with _mirrors(settings, mirror, journal=journal) as crew:
            yield crew
    else:
        yield Crew(kind, remote)


@asynccontextmanager
async def _mirrors(settings: Settings, mirror: CrewMirror, *, journal: JournalStore) -> AsyncIterator[Crew]:
    """A lead with a server crew store: the mirrors that keep the store level with its crew index,
    journal and graph, started."""
    from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal

    store = mirror.store
    mirror.start()
    journal_mirror = CrewJournalMirror(
        PostgresCrewJournal(store), journal, settings.crew_id, interval=settings.crew_reindex_interval
    )
    journal_mirror.start()
    kg_mirror = crew_kg_mirror(settings, store)  # the crew's knowledge graph
    try:
        yield Crew("lead", journal_mirror=journal_mirror, kg_mirror=kg_mirror)
    finally:
        await kg_mirror.stop()
        await journal_mirror.stop()
        await mirror.stop()
