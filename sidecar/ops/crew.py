"""How a sidecar reaches its crew: the ``CrewBackend`` the composition root chooses once at start
from the settings (``sidecar.server.crew``), so the operations ask it instead of the role.

- ``solo``: no crew.
- ``lead``: the crew tier is indexed here, its memories are in this journal and its graph in this
  graph (with a server crew store, the lead's mirrors copy them into it).
- ``member``: crew reads and writes go through the lead's crew listener.
- ``member_store``: crew search, status, graph reads and recall come from a server crew store
  (PostgreSQL) directly; what only the lead answers (crew writes) goes through it when one is
  configured, else 503 ``crew_unavailable``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from sidecar.contract import SearchRequest
from sidecar.settings import Settings

if TYPE_CHECKING:
    from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal
    from sidecar.kg.pg_mirror import CrewKgMirror

__all__ = ["CrewBackend", "CrewBarrier", "CrewKind", "CrewRemote", "crew_kind", "written_tiers"]

CrewKind = Literal["solo", "lead", "member", "member_store"]
#: A member's crew in a server store: waits (bounded) until the store holds the lead's write ``seq``.
CrewBarrier = Callable[[int, float], Awaitable[bool]]


class CrewRemote(Protocol):
    """A member's way to the crew it does not hold: the lead's crew listener, or a server crew
    store (searched directly) with the lead behind it for what only the lead answers."""

    async def search(self, req: SearchRequest) -> tuple[list[dict[str, Any]], list[str]]: ...

    async def memory(self, op: str, body: dict[str, Any]) -> dict[str, Any]: ...

    async def kg(self, op: str, body: dict[str, Any]) -> dict[str, Any]: ...

    async def status(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class CrewBackend(Protocol):
    """The crew as this sidecar reaches it (see the module's text)."""

    @property
    def kind(self) -> CrewKind: ...

    @property
    def remote(self) -> CrewRemote | None:
        """Where crew requests this sidecar does not answer itself go: a member's; None on solo and lead."""

    @property
    def barrier(self) -> CrewBarrier | None:
        """Read-your-writes on the crew store: a ``member_store``'s; None otherwise."""

    @property
    def crew_journal(self) -> PostgresCrewJournal | None:
        """The crew's journal entries in the store, which a ``member_store`` recalls."""

    @property
    def journal_mirror(self) -> CrewJournalMirror | None:
        """A lead's copy of its crew entries into a server crew store."""

    @property
    def kg_mirror(self) -> CrewKgMirror | None:
        """A lead's copy of its crew graph into a server crew store."""


def crew_kind(settings: Settings) -> CrewKind:
    """The crew backend ``settings`` ask for: the one place the role is read."""
    if settings.role == "lead":
        return "lead"
    if settings.role == "member":
        return "member" if settings.crew_store == "sqlite" else "member_store"
    return "solo"


def written_tiers(settings: Settings) -> list[str]:
    """The tiers this sidecar writes, and whose graph it holds: the crew tier on the lead alone (a
    member never writes it)."""
    return list(settings.held_tiers)
