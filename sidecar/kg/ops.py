"""The graph's operations on checked requests, written once: the lead's and a solo sidecar's
routes, tools and CLI answer with :func:`answer` over their own graph (``kg.lifecycle.run_op``), and
a member with a server crew store answers the crew graph's reads with :func:`crew_read` over the
store's copy of the lead's graph (``kg.pg_kg``)."""

from __future__ import annotations

from typing import Any

from sidecar.errors import BadRequest
from sidecar.kg.graph import KnowledgeGraph
from sidecar.kg.model import Scope
from sidecar.kg.requests import parse

__all__ = ["GRAPH_READS", "answer", "crew_read"]

#: The operations that only read the graph: a member with a crew store answers them from the store.
GRAPH_READS = ("query", "timeline", "traverse", "tunnels", "stats")


async def crew_read(graph: KnowledgeGraph, crew_id: str, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """A crew-scope read (one of ``GRAPH_READS``) answered from ``graph``, the crew's graph in the
    crew store, as the lead answers it; ``body`` names the workspace (the member's by default)."""
    args = parse(operation, body)
    args.pop("scope")
    return await answer(graph, Scope(args.pop("workspace_id"), crew_id), operation, args)


async def answer(graph: KnowledgeGraph, scope: Scope, operation: str, args: dict[str, Any]) -> dict[str, Any]:
    """One graph operation on its checked arguments (``parse``, without workspace and scope)."""
    if operation == "add":
        fact = await graph.add_one(
            scope, args["subject"], args["predicate"], args["object"], valid_from=args["valid_from"],
            confidence=float(args["confidence"]), source=args["source"] or "api",
        )  # fmt: skip
        return {"fact": fact.to_json()}
    if operation == "invalidate":
        triple = (args["subject"], args["predicate"], args["object"])
        if args["fact_id"] is None and None in triple:
            raise BadRequest("name the fact: fact_id, or subject, predicate and object", code="missing_fact_id")
        facts = await graph.invalidate(
            scope, fact_id=args["fact_id"], triple=None if None in triple else triple, valid_to=args["valid_to"]
        )
        return {"facts": [f.to_json() for f in facts]}
    if operation == "query":
        entity = args.pop("entity")
        return await graph.query(scope, entity, **args)
    if operation == "timeline":
        return await graph.timeline(scope, args["entity"], args["limit"])
    if operation == "traverse":
        return await graph.traverse(scope, args["entity"], hops=args["hops"], as_of=args["as_of"])
    if operation == "tunnels":
        return await graph.tunnels(scope, args["room_a"], args["room_b"], args["limit"])
    return await graph.stats(scope)
