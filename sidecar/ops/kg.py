"""The knowledge graph's operations (``add``, ``query``, ``invalidate``, ``timeline``, ``traverse``,
``tunnels``, ``stats``) on a typed ``KgRequest``: what ``/kg/*``, the ``kg_*`` MCP tools, the memory browser
and the lead's crew listener answer. The file changes the index has applied, and the journal's
newest entries, are read into the graph first.
On a member, a crew-scope request is checked here and answered by the lead (the crew's graph is
the lead's); on a lead with a server crew store, a crew write reaches the store before the answer."""

from __future__ import annotations

from typing import Any, cast

from sidecar.kg.lifecycle import facts_for_query, run_op
from sidecar.kg.ops import GRAPH_READS
from sidecar.kg.requests import KgRequest
from sidecar.ops.answers import KgAnswer
from sidecar.ops.sidecar import Sidecar

__all__ = ["HOOKS_WAIT_S", "block_facts", "kg", "run"]

#: The longest a graph question waits for the graph to read the files the index has changed.
HOOKS_WAIT_S = 10.0


async def kg(sc: Sidecar, operation: str, body: dict[str, Any]) -> dict[str, Any]:
    """One graph operation on a JSON body (the memory browser's pages build theirs)."""
    return dict(await run(sc, KgRequest.from_json(operation, body)))


async def run(sc: Sidecar, req: KgRequest) -> KgAnswer:
    """One graph operation: its answer is the operation's type (``sidecar.ops.answers.KG_ANSWERS``)."""
    settings = sc.settings
    remote = sc.crew.remote
    operation = req.operation
    if remote is not None and req.scope == "crew":  # checked here: a bad request never reaches the lead
        sent = {k: v for k, v in req.to_json().items() if k != "scope"}
        sent["workspace_id"] = sent.get("workspace_id") or settings.workspace_id
        return cast(KgAnswer, await remote.kg(operation, sent))
    # Every file change the index has when the question comes is read into the graph first (bounded).
    await sc.queue.wait_hooked(sc.queue.indexed_seq, HOOKS_WAIT_S)
    await sc.kg.ingest.follow()
    answered = cast(KgAnswer, await run_op(sc.kg.graph, settings, req))
    mirror = sc.crew.kg_mirror
    if mirror is not None and operation not in GRAPH_READS and req.scope == "crew":
        # In the crew store before the answer (a member reads its write there); a store that is
        # down leaves it to the mirror's rounds.
        written = cast(dict[str, Any], answered)  # add and invalidate: a fact, or the facts ended
        facts = written["facts"] if "facts" in written else [written["fact"]]
        await mirror.push([int(f["id"]) for f in facts])
    return answered


async def block_facts(sc: Sidecar, query: str | None, workspace_id: str | None) -> list[str]:
    """The current facts of ``workspace_id`` (default: the sidecar's) about the entities ``query``
    names, one line each, for the memory block."""
    return await facts_for_query(sc.kg, query, workspace_id or sc.settings.workspace_id)
