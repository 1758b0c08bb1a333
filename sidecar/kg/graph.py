"""Questions to the graph, and adding to it: what the HTTP routes, MCP tools and CLI call.

Facts about an entity as of a time, its timeline, what a subject had before a value ("what did we
use before CockroachDB"), one- and two-hop traversal, tunnels (entities that bridge rooms), stats.
Names are resolved by key and alias (``names``); an unknown entity is a 404 ``unknown_entity``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sidecar.errors import BadRequest, NotFound
from sidecar.kg.dedup import NameDedup
from sidecar.kg.facts import FUNCTIONAL, Extracted
from sidecar.kg.model import Entity, Fact, NewFact, Scope, now_iso, parse_when
from sidecar.kg.names import entity_key
from sidecar.kg.store import KgStore

__all__ = ["MAX_HOPS", "KnowledgeGraph", "new_facts"]

MAX_HOPS = 2
_MAX_NODES = 200


def new_facts(
    found: Sequence[Extracted], source: str, default_when: str, room: str | None = None
) -> tuple[list[NewFact], list[Extracted]]:
    """Extracted facts as facts to add (a file's ``source`` + ``#line``), and the aliases they name apart."""
    facts, aliases = [], []
    for f in found:
        if f.predicate == "alias":
            aliases.append(f)
            continue
        when = parse_when(f.valid_from) if f.valid_from else default_when
        facts.append(
            NewFact(
                f.subject, f.predicate, f.object, when, f"{source}#{f.line}" if source.startswith("file:") else source,
                text=f.text, functional=f.functional, replaces=f.replaces, room=room,
            )
        )  # fmt: skip
    return facts, aliases


class KnowledgeGraph:
    """The graph's operations over a :class:`~sidecar.kg.store.KgStore`."""

    def __init__(self, store: KgStore, dedup: NameDedup | None = None) -> None:
        self.store = store
        self.dedup = dedup  # entity names matched by meaning too (an embedder is configured)

    # -- adding --------------------------------------------------------------------------------
    async def add(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        aliases: Sequence[Extracted] = (),
        *,
        file: tuple[str, str, str] | None = None,
        grown: bool = False,
    ) -> list[Fact]:
        """Add facts and learn the aliases named apart; ``file`` and ``grown`` as for the store's ``add``."""
        pending = None
        if self.dedup is not None and facts:
            pending = await self.dedup.learn(scope, [n for f in facts for n in (f.subject, f.object)])
        stored = await self.store.add(scope, facts, file=file, grown=grown) if facts or file else []
        if self.dedup is not None and pending is not None:
            await self.dedup.remember(pending)
        for alias in aliases:
            await self._learn_alias(scope, alias.subject, alias.object)
        return stored

    async def add_one(
        self,
        scope: Scope,
        subject: str,
        predicate: str,
        obj: str,
        *,
        valid_from: str | None = None,
        confidence: float = 1.0,
        source: str = "api",
        text: str = "",
    ) -> Fact:
        """Add one fact (entities created as needed); a functional predicate ends the current value."""
        pred = _predicate(predicate)
        for field, name in (("subject", subject), ("object", obj)):
            if not re.search(r"\w", entity_key(name)):  # "!!!": nothing a question could name it by
                raise BadRequest(f"{field} must name something: letters or digits", code=f"invalid_{field}")
        when = parse_when(valid_from) if valid_from else now_iso()
        new = NewFact(subject, pred, obj, when, source, text=text or f"{subject} {pred} {obj}",
                      confidence=confidence, functional=pred in FUNCTIONAL)  # fmt: skip
        return (await self.add(scope, [new]))[0]

    async def _learn_alias(self, scope: Scope, a: str, b: str) -> None:
        """Make ``b`` another name of ``a`` (or the reverse) when exactly one of them is known."""
        known = await self.store.entities(scope, [entity_key(a), entity_key(b)])
        ea, eb = known.get(entity_key(a)), known.get(entity_key(b))
        if ea is not None and eb is None:
            await self.store.add_alias(scope, ea.id, b)
        elif eb is not None and ea is None:
            await self.store.add_alias(scope, eb.id, a)

    async def invalidate(
        self,
        scope: Scope,
        *,
        fact_id: int | None = None,
        triple: tuple[str, str, str] | None = None,
        valid_to: str | None = None,
    ) -> list[Fact]:
        """End a fact (by id, or the current fact of a subject, predicate and object) at ``valid_to``
        (default now). The fact stays, with its window closed."""
        end = parse_when(valid_to, "valid_to") if valid_to else now_iso()
        if fact_id is not None:
            return [await self.store.invalidate(scope, fact_id, end)]
        assert triple is not None
        s, p, o = triple
        subject, obj = await self.entity(scope, s), await self.entity(scope, o)
        found = [f for f in await self.store.find_fact(scope, subject.id, _predicate(p), obj.id) if f.valid_to is None]
        if not found:
            raise NotFound(f"no current fact {s!r} {p!r} {o!r}", code="not_found")
        return [await self.store.invalidate(scope, f.id, end) for f in found]

    # -- questions -----------------------------------------------------------------------------
    async def entity(self, scope: Scope, name: str) -> Entity:
        key = entity_key(name)
        found = (await self.store.entities(scope, [key])).get(key)
        if found is None:
            raise NotFound(f"no entity named {name!r} in workspace {scope.workspace_id}", code="unknown_entity")
        return found

    async def query(
        self,
        scope: Scope,
        name: str,
        *,
        as_of: str | None = None,
        direction: str = "both",
        predicate: str | None = None,
        before: str | None = None,
        include_invalid: bool = False,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Facts about an entity: current ones, those holding ``as_of``, every one
        (``include_invalid``), or with ``before`` the values the entity had before that one."""
        entity = await self.entity(scope, name)
        pred = _predicate(predicate) if predicate else None
        if before is not None:
            facts = await self._before(scope, entity, pred, before)
        else:
            when = parse_when(as_of, "as_of") if as_of else None
            facts = await self.store.facts(
                scope, [entity.id], direction=direction, predicate=pred, as_of=when,
                current_only=not include_invalid and when is None, limit=limit,
            )  # fmt: skip
        return {"entity": entity.to_json(), "as_of": as_of, "facts": [f.to_json() for f in facts[-limit:]]}

    async def _before(self, scope: Scope, entity: Entity, predicate: str | None, before: str) -> list[Fact]:
        """The entity's facts that ended when one whose object is ``before`` began, latest first."""
        later = await self.entity(scope, before)
        facts = await self.store.facts(scope, [entity.id], direction="out", predicate=predicate, limit=10_000)
        starts = [f for f in facts if f.object_id == later.id]
        out: list[Fact] = []
        for start in starts:
            ended = [
                f for f in facts
                if f.predicate == start.predicate and f.object_id != later.id and f.valid_to is not None
                and f.valid_to <= start.valid_from
            ]  # fmt: skip
            out += sorted(ended, key=lambda f: f.valid_to or "", reverse=True)
        return list({f.id: f for f in out}.values())

    async def timeline(self, scope: Scope, name: str, limit: int = 200) -> dict[str, Any]:
        """Every fact about the entity, as subject or object, in the order they began."""
        entity = await self.entity(scope, name)
        facts = await self.store.facts(scope, [entity.id], limit=100_000)
        return {"entity": entity.to_json(), "facts": [f.to_json() for f in facts[-limit:]]}

    async def traverse(self, scope: Scope, name: str, *, hops: int = 1, as_of: str | None = None) -> dict[str, Any]:
        """Entities one or two hops away along facts holding now (or ``as_of``), with the facts walked."""
        if not 1 <= hops <= MAX_HOPS:
            raise BadRequest(f"hops must be 1..{MAX_HOPS}", code="invalid_hops")
        start = await self.entity(scope, name)
        when = parse_when(as_of, "as_of") if as_of else None
        seen: dict[int, tuple[str, int]] = {start.id: (start.name, 0)}
        edges: dict[int, Fact] = {}
        frontier = [start.id]
        for hop in range(1, hops + 1):
            facts = await self.store.facts(scope, frontier, as_of=when, current_only=when is None, limit=2000)
            nxt = []
            for f in facts:
                edges[f.id] = f
                for eid, ename in ((f.subject_id, f.subject), (f.object_id, f.object)):
                    if eid not in seen and len(seen) < _MAX_NODES:
                        seen[eid] = (ename, hop)
                        nxt.append(eid)
            frontier = nxt
            if not frontier:
                break
        nodes = [{"id": eid, "name": n, "hops": h} for eid, (n, h) in seen.items()]
        return {"entity": start.to_json(), "nodes": nodes, "facts": [f.to_json() for f in edges.values()]}

    async def tunnels(
        self, scope: Scope, room_a: str | None = None, room_b: str | None = None, limit: int = 50
    ) -> dict[str, Any]:
        """Entities that bridge rooms: their facts stand in two rooms or more (both given ones)."""
        found = await self.store.tunnels(scope, _room(room_a), _room(room_b), limit)
        return {"room_a": room_a, "room_b": room_b, "tunnels": found}

    async def stats(self, scope: Scope) -> dict[str, Any]:
        out = await self.store.stats(scope)
        out["tunnels"] = len(await self.store.tunnels(scope, None, None, 100_000))
        return {"workspace_id": scope.workspace_id, "scope": "crew" if scope.crew_id else "agent", **out}

    async def named_in(self, scope: Scope, text: str, longest: int = 3) -> list[Entity]:
        """Entities the text names (runs of up to ``longest`` words, by key or alias), longest first."""
        known = await self.store.known_keys(scope)
        if known is not None and not known:
            return []  # a graph with no entity yet: no key to make
        words = [w for w in _words(text)]
        grams = [" ".join(words[i : i + n]) for n in range(longest, 0, -1) for i in range(len(words) - n + 1)]
        keys = [k for k in dict.fromkeys(entity_key(g) for g in grams) if k and len(k) > 1]
        if known is not None:
            keys = [k for k in keys if k in known]  # most queries name no entity: no trip to the store
        if not keys:
            return []
        found = await self.store.entities(scope, keys)
        return list({e.id: e for e in (found[k] for k in keys if k in found)}.values())


def _words(text: str) -> list[str]:
    return [w.strip(".,;:!?\"'()[]") for w in text.split() if w.strip(".,;:!?\"'()[]")]


def _predicate(raw: str) -> str:
    pred = " ".join(raw.casefold().split())
    if not pred or len(pred) > 64:
        raise BadRequest("predicate must be 1-64 characters", code="invalid_predicate")
    return pred


def _room(raw: str | None) -> str | None:
    return None if raw is None else raw.strip().strip("/").removesuffix(".md")
