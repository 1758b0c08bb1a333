"""The storage interface the graph is written against. SQLite (:mod:`sidecar.kg.sqlite_kg`) serves
one sidecar; a server store can implement the same Protocol. Every method takes the scope and
applies it in the query itself."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from sidecar.kg.model import Entity, Fact, NewFact, Scope

R = TypeVar("R")

__all__ = ["KgStore"]


class KgStore(Protocol):
    async def add(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        *,
        file: tuple[str, str, str] | None = None,
        grown: bool = False,
    ) -> list[Fact]:
        """Add facts; with ``file`` (tier, path, digest), record them as what that file states
        (``grown``: besides what it was recorded to state, read from the lines appended to it)."""
        ...

    async def invalidate(self, scope: Scope, fact_id: int, valid_to: str) -> Fact: ...
    async def end_sourced(
        self,
        scope: Scope,
        source: str,
        valid_to: str,
        *,
        prefix: bool = False,
        unless_in: str | None = None,
        moved: Callable[[int, str, str], str | None] | None = None,
    ) -> list[int]:
        """End the current facts read from a source (a deleted file, a forgotten memory), except
        those still stated (``unless_in``) or stated elsewhere now (``moved``: their new source)."""
        ...

    async def reopen(self, scope: Scope, ids: Sequence[int], valid_to: str, moved: tuple[str, str]) -> int:
        """Facts a file's removal ended, current again: the file came back (moved, its bytes the same)."""
        ...

    async def add_alias(self, scope: Scope, entity_id: int, alias: str) -> None: ...
    async def entities(self, scope: Scope, keys: Iterable[str]) -> dict[str, Entity]: ...
    async def known_keys(self, scope: Scope) -> set[str] | None:
        """Every key an entity of the scope is found by (a superset will do), when the store can
        hold them in memory; None when it cannot say (every lookup then asks the store)."""
        ...

    async def entity_names(self, scope: Scope, limit: int) -> list[tuple[int, str]]: ...
    async def facts(
        self,
        scope: Scope,
        entity_ids: Sequence[int],
        *,
        direction: str = "both",
        predicate: str | None = None,
        as_of: str | None = None,
        current_only: bool = False,
        limit: int = 500,
    ) -> list[Fact]: ...
    async def fact(self, scope: Scope, fact_id: int) -> Fact | None: ...
    async def find_fact(self, scope: Scope, subject_id: int, predicate: str, object_id: int) -> list[Fact]: ...
    async def facts_at(self, scope: Scope, sources: Sequence[str], limit: int = 2000) -> list[Fact]: ...
    async def tunnels(
        self, scope: Scope, room_a: str | None, room_b: str | None, limit: int
    ) -> list[dict[str, Any]]: ...
    async def stats(self, scope: Scope) -> dict[str, Any]: ...
    async def file_digest(self, tier: str, path: str) -> str | None: ...
    async def digest_with(self, tier: str, path: str, read: Callable[[], R]) -> tuple[R, str | None]:
        """``read()`` (off the event loop) and ``file_digest``: one trip to a thread where the store
        reads on one."""
        ...

    async def files(self, tier: str) -> dict[str, str]:
        """The tier's files read into the graph, with their digests."""
        ...

    async def cursor(self, name: str) -> int: ...
    async def set_cursor(self, name: str, position: int) -> None: ...
    async def aclose(self) -> None: ...
