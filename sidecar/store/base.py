"""The store interface for what a crew shares, and the rows that cross it.

A crew store holds the crew tier's chunks (exactly as the lead's chunker cut them) with their
vectors, a sequence number saying which of the lead's writes it holds, and answers crew searches
in the shape of the embedded index's answers. ``SqliteCrewSource`` is the embedded side (the
lead's own index, today's behaviour and the source of every copy); ``PostgresCrewStore`` the
server side. The crew's other shared state sits in the same database, on the same pool
(``PostgresCrewStore.connection``): its journal entries (``episodic.crew_store``) and its
knowledge graph (``kg.pg_kg``), each copied there by the lead from its own SQLite file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy for annotations only: a BM25 search imports this module without it
    import numpy as np
    import numpy.typing as npt

    from sidecar.retrieval.lift import BoostPlan

    Floats = npt.NDArray[np.float32]

__all__ = [
    "OPERATORS_DIR",
    "ChunkRow",
    "CrewStore",
    "FileRow",
    "RowRefused",
    "StoreUnavailable",
    "VectorRow",
    "block_only",
    "unstorable",
]


def __getattr__(name: str) -> object:
    """``Floats`` for a module importing it (numpy loaded then, not by this module's import)."""
    if name == "Floats":
        import numpy as np
        import numpy.typing as npt

        return npt.NDArray[np.float32]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: The crew tier's operator models (``operators/<slug>.md``): each is private to its operator, read
#: only by the memory block that injects it (for the user who opened the session). Crew search
#: (the lead's, its crew listener's, a crew store's) and reading crew files leave them out.
OPERATORS_DIR = "operators/"


def block_only(path: str) -> bool:
    """Whether the crew file at ``path`` is one only the memory block reads (an operator model).
    Compared case-folded: on a case-insensitive filesystem ``Operators/`` is the same dir."""
    return path.casefold().startswith(OPERATORS_DIR)


class StoreUnavailable(Exception):
    """The store could not be reached, or did not answer in time."""


class RowRefused(StoreUnavailable):
    """The store refused a value it was sent (a PostgreSQL data exception, or text it cannot
    encode): that row's fault, not the store's. A copy skips the row and goes on; anything that
    does not know better still treats it as the store being unavailable."""


def unstorable(*texts: str) -> str | None:
    """Why PostgreSQL's text cannot hold one of ``texts`` (a NUL, or a lone surrogate, which is not
    Unicode), or None. Such text is the sender's fault, never the store's being down."""
    for text in texts:
        if "\x00" in text:
            return "text must not contain NUL (U+0000)"
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return "text is not valid Unicode (a lone surrogate)"
    return None


@dataclass(frozen=True, slots=True)
class FileRow:
    path: str
    hash: str
    size: int


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One chunk of a crew file, as the lead's index holds it."""

    path: str
    ord: int
    heading: str
    body: str
    line_start: int
    line_end: int
    hash: str
    plain: bool


@dataclass(frozen=True, slots=True)
class VectorRow:
    """A chunk hash's vector under one model, with its sentence vectors (float16 rows) if any."""

    hash: str
    vector: Floats
    sentences: bytes | None


class CrewStore(Protocol):
    """Where a crew's shared memory lives. The write side is used by the lead (or any sidecar with
    the write role) and by ``memory-sidecar store migrate``; the read side by every member."""

    async def files(self) -> dict[str, str]:
        """Every file the store holds, path -> content hash."""
        ...

    async def replace_files(
        self,
        files: list[tuple[FileRow, list[ChunkRow]]],
        model: str | None,
        vectors: dict[str, VectorRow],
        flags: dict[str, list[dict[str, Any]]] | None = None,
        contents: dict[str, bytes] | None = None,
    ) -> None:
        """Put each file with exactly its chunks (their old ones go), the injection scanner's
        flagged sections and its bytes, in one transaction."""
        ...

    async def remove_files(self, paths: list[str]) -> None: ...

    async def missing_vectors(self, model: str, limit: int) -> list[str]:
        """Chunk hashes with no vector of ``model`` yet."""
        ...

    async def put_vectors(self, model: str, vectors: dict[str, VectorRow]) -> int: ...

    async def seq(self) -> int:
        """The lead's write sequence the store is known to hold (every crew write up to it)."""
        ...

    async def set_seq(self, seq: int) -> None: ...

    async def search(
        self,
        query: str,
        limit: int,
        *,
        qvec: Floats | None,
        model: str | None,
        fusion: str,
        explain: bool,
        plan: BoostPlan | None = None,
    ) -> list[dict[str, Any]]:
        """Ranked crew hits, in the embedded index's answer shape (``source`` is ``crew``);
        ``plan``: the graph's lift for the query, which picks the hits shown."""
        ...

    async def status(self) -> dict[str, Any]: ...

    async def close(self) -> None: ...
