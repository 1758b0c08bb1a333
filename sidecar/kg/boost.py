"""The graph's lift for search: entities a query names raise the hits that hold their facts or
mention them.

For a query naming entities the graph knows (by name or alias), a hit's score is multiplied by
``1 + KG_WEIGHT * (facts + MENTION_SHARE * mentions)``: ``facts`` is the share of the query's
words that a fact stated in the hit's lines covers (the fact is about a named entity; any time, so
a question about change finds the old value's note too), ``mentions`` is 1 when the hit names one
of the entities or the other end of one of their current facts. The search asks for
``KG_CANDIDATES`` hits before the lift and shows ``limit`` after it; ``explain`` shows the lift.
``KG_WEIGHT`` was chosen on LoCoMo conversations 0-2 alone (temporal questions, R@10 of the
evidence turns; 3-4 are held out, ``python -m tests.bench kg``): with ``MENTION_SHARE`` 0.5 (set
before tuning), 0.1 is the largest weight that leaves R@10 on 0-2 unchanged (0.944); from 0.2 up the
lift of every turn naming a speaker costs a question or two there. Conversations carry few of the
facts the extractor reads (110 in five), so on them the lift is mostly the mention term.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sidecar.index.query import STOPWORDS
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import Fact, Scope
from sidecar.retrieval.lift import Candidate, Lifted

__all__ = ["KG_CANDIDATES", "KG_WEIGHT", "MENTION_SHARE", "BoostPlan", "KgBoost"]

KG_WEIGHT = 0.1
MENTION_SHARE = 0.5
KG_CANDIDATES = 30
_WORD = re.compile(r"\w+")


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 2 and w not in STOPWORDS}


@dataclass
class BoostPlan:
    """What one query lifts: fact lines by file, the names whose mention counts, the weight."""

    entities: list[str]
    lines: dict[str, list[tuple[int, float, int]]] = field(default_factory=dict)  # path -> (line, share, fact id)
    names: list[str] = field(default_factory=list)
    weight: float = KG_WEIGHT
    mention: float = MENTION_SHARE
    candidates: int = KG_CANDIDATES

    def lift(self, hit: Candidate) -> tuple[float, dict[str, Any]]:
        """The hit's multiplier, and what it is made of."""
        held = [
            (share, fid) for line, share, fid in self.lines.get(hit.path, []) if hit.line_start <= line <= hit.line_end
        ]
        share = max((s for s, _ in held), default=0.0)
        seen = f" {hit.heading} {hit.text} ".casefold()
        # ``in`` first: most names are in no hit, and it saves a call per name and hit.
        mentioned = [n for n in self.names if n in seen and _named(n, seen)]
        factor = 1.0 + self.weight * (share + (self.mention if mentioned else 0.0))
        why = {
            "entities": self.entities,
            "facts": sorted({fid for _, fid in held}),
            "fact_share": round(share, 6),
            "mentions": mentioned[:5],
            "factor": round(factor, 6),
        }
        return factor, why

    def order(self, hits: Sequence[Candidate], limit: int) -> list[Lifted]:
        """The ``limit`` best hits by their lifted score (ties keep their order), best first."""
        out = []
        for at, hit in enumerate(hits):
            factor, why = self.lift(hit)
            out.append(Lifted(at, round(hit.score * factor, 6), why))
        out.sort(key=lambda lifted: -lifted.score)
        return out[:limit]


class KgBoost:
    """Builds a query's :class:`BoostPlan` from the graph of the scope a tier feeds."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        scopes: dict[str, Scope],
        weight: float = KG_WEIGHT,
    ) -> None:
        self.graph = graph
        self.scopes = scopes
        self.weight = weight

    async def plan(self, source: str, query: str) -> BoostPlan | None:
        """None when the tier feeds no graph here or the query names no entity it knows."""
        scope = self.scopes.get(source)
        if scope is None:
            return None
        named = await self.graph.named_in(scope, query)
        if not named:
            return None
        facts = await self.graph.store.facts(scope, [e.id for e in named], limit=2000)
        plan = BoostPlan([e.name for e in named], weight=self.weight)
        asked = _words(query)
        ids = {e.id for e in named}
        names = {a for e in named for a in (e.name.casefold(), *e.aliases) if len(a) > 1}
        for fact in facts:
            if fact.valid_to is None:
                names.add((fact.object if fact.subject_id in ids else fact.subject).casefold())
            path, line = _file_line(fact, source)
            if path is not None:
                share = len(asked & _words(f"{fact.subject} {fact.predicate} {fact.object}")) / max(len(asked), 1)
                plan.lines.setdefault(path, []).append((line, share, fact.id))
        plan.names = sorted(n for n in names if n and n != "we")
        return plan


def _named(name: str, text: str) -> bool:
    """Whether ``name`` stands in ``text`` as words of its own: no letter, digit or "_" just before
    or after it (what ``(?<!\\w)name(?!\\w)`` matches, found with ``str.find``: a pattern that
    starts with a look-behind tries every position of the text, and a search lifts 30 hits against
    every name it knows)."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return True
        at = text.find(name, at + 1)
    return False


def _file_line(fact: Fact, tier: str) -> tuple[str | None, int]:
    """The file (in ``tier``) and line a fact was read from; None for other sources."""
    prefix = f"file:{tier}:"
    if not fact.source.startswith(prefix) or "#" not in fact.source:
        return None, 0
    path, _, line = fact.source[len(prefix) :].rpartition("#")
    return path, int(line) if line.isdigit() else 0
