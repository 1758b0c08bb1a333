"""Entity dedup by meaning: a name the graph does not know by key or alias becomes an alias of the
entity whose name embeds closest, when the cosine is at least ``SAME_NAME``.

With the in-process model (all-MiniLM-L6-v2) "authentication module" / "auth module" score 0.88,
"CockroachDB" / "Cockroach DB" 0.93, while "GitHub Actions" / "GitHub" score 0.74 and
"service-1" / "service-2" 0.87; names that differ in a number are never merged, whatever their
cosine. Without an embedder, or when it fails, names are matched by key and alias alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from sidecar.kg.model import Scope
from sidecar.kg.names import entity_key
from sidecar.kg.store import KgStore
from sidecar.retrieval.embed.base import Embedder, EmbedderError

if TYPE_CHECKING:
    # numpy is imported when a name is first embedded: a graph without an embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = ["SAME_NAME", "NameDedup", "Pending"]

log = structlog.get_logger("sidecar.kg")
SAME_NAME = 0.88
_DIGITS = re.compile(r"\d+")
_MAX_ENTITIES = 20_000  # names embedded per scope at most (past it, new names match by key and alias only)


@dataclass(frozen=True)
class Pending:
    """Names new to a scope and their vectors, until the facts naming them are stored."""

    scope: Scope
    names: dict[str, str]
    vectors: npt.NDArray[np.float32]


class NameDedup:
    """The names of each scope's entities as vectors (embedded once, kept in memory), and the
    aliases a new name earns from them."""

    def __init__(self, store: KgStore, embedder: Embedder, threshold: float = SAME_NAME) -> None:
        self.store = store
        self.embedder = embedder
        self.threshold = threshold
        self._known: dict[Scope, tuple[list[int], list[str], npt.NDArray[np.float32]]] = {}

    async def learn(self, scope: Scope, names: Iterable[str]) -> Pending | None:
        """Alias each name the scope does not know to its closest entity, if close enough. Returns
        the new names with their vectors, for :meth:`remember` once the facts naming them are stored."""
        wanted = {entity_key(n): n.strip() for n in names if entity_key(n)}
        if not wanted:
            return None
        known = await self.store.entities(scope, wanted)
        new = {k: n for k, n in wanted.items() if k not in known}
        if not new:
            return None
        import numpy as np

        try:
            ids, labels, matrix = await self._vectors(scope)
            vectors = np.asarray(await self.embedder.embed(list(new.values())), dtype=np.float32)
        except EmbedderError as exc:
            log.info("kg.dedup_skipped", reason=str(exc))
            return None
        for name, vector in zip(new.values(), vectors, strict=True):
            if len(ids):
                scores = matrix @ vector
                for best in np.argsort(-scores)[:5]:
                    if scores[best] < self.threshold:
                        break
                    if _DIGITS.findall(labels[best]) == _DIGITS.findall(name):
                        await self.store.add_alias(scope, ids[best], name)
                        log.info(
                            "kg.alias_learnt", name=name, entity=labels[best], cosine=round(float(scores[best]), 3)
                        )
                        break
        return Pending(scope, new, vectors)

    async def _vectors(self, scope: Scope) -> tuple[list[int], list[str], npt.NDArray[np.float32]]:
        import numpy as np

        if scope not in self._known:
            entities = await self.store.entity_names(scope, _MAX_ENTITIES)
            names = [name for _, name in entities]
            matrix = (
                np.asarray(await self.embedder.embed(names), dtype=np.float32)
                if names
                else np.zeros((0, self.embedder.dim), dtype=np.float32)
            )
            self._known[scope] = ([eid for eid, _ in entities], names, matrix)
        return self._known[scope]

    async def remember(self, pending: Pending) -> None:
        """After the facts are stored: their new entities join the scope's vectors (those aliased to
        another entity do not: they are that entity)."""
        scope, new, vectors = pending.scope, pending.names, pending.vectors
        ids, labels, matrix = self._known[scope]
        if len(ids) >= _MAX_ENTITIES:
            return
        found = await self.store.entities(scope, new)
        rows = [(found[k].id, new[k], v) for k, v in zip(new, vectors, strict=True) if k in found]
        rows = [r for r in rows if r[0] not in ids]
        if rows:
            import numpy as np

            self._known[scope] = (
                ids + [r[0] for r in rows],
                labels + [r[1] for r in rows],
                np.vstack([matrix, np.stack([r[2] for r in rows])]),
            )
