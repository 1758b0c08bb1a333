"""``memory-sidecar kg ...``: the graph without a server, on the agent dir's ``kg.sqlite``.

``kg read`` reads the memory files and the journal into the graph (what a running sidecar does as
they change); ``kg add|query|invalidate|timeline|traverse|tunnels|stats`` take one flag per field
of the HTTP request (``--as-of``, ``--include-invalid`` ...), checked by the same schema, and print
the same JSON answer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any, TextIO

from sidecar.errors import SidecarError
from sidecar.kg.requests import REQUESTS
from sidecar.settings import Settings, load_settings

__all__ = ["add_kg_commands", "kg_main"]

#: The journal's database in the agent dir (sidecar.episodic.lifecycle.JOURNAL_FILE, a layer up).
JOURNAL_FILE = "journal.sqlite"


def add_kg_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kg = sub.add_parser("kg", help="the knowledge graph: read memory into it, ask it, add to it")
    steps = kg.add_subparsers(dest="step", required=True)
    read = steps.add_parser("read", help="read the memory files (and the crew's with --role lead) and the journal")
    read.add_argument("--memory-dir", default=None)
    read.add_argument("--crew-dir", default=None)
    read.add_argument("--role", default=None)
    for operation, schema in REQUESTS.items():
        cmd = steps.add_parser(operation, help=schema["description"])
        cmd.add_argument("--memory-dir", default=None, help="agent tier dir holding kg.sqlite")
        for name, spec in schema["properties"].items():
            kind = (spec["anyOf"][0] if "anyOf" in spec else spec).get("type")
            flag = "--" + name.replace("_", "-")
            if kind == "boolean":
                cmd.add_argument(flag, dest=name, action="store_true", default=None)
            else:
                cmd.add_argument(flag, dest=name, type=int if kind == "integer" else float if kind == "number" else str)


def kg_main(args: argparse.Namespace, out: TextIO) -> int:
    """Run one ``kg`` step; its answer (or the error body) as JSON on ``out``; 2 on an error."""
    given = {k: v for k, v in vars(args).items() if v is not None and k not in ("command", "step", "memory_dir")}
    try:
        settings = load_settings({"memory_dir": args.memory_dir, **({} if args.step != "read" else given)})
        answer = asyncio.run(_run(settings, args.step, given))
    except SidecarError as exc:
        out.write(json.dumps(exc.body()) + "\n")
        return 2
    out.write(json.dumps(answer, indent=2) + "\n")
    return 0


async def _run(settings: Settings, step: str, body: dict[str, Any]) -> dict[str, Any]:
    # Here, not at the top: every command's parser adds these commands, ``serve`` included, and the
    # server imports its HTTP stack only once its tiers are opening (sidecar.server.serve).
    from sidecar.kg.graph import KnowledgeGraph
    from sidecar.kg.ingest import Ingest
    from sidecar.kg.lifecycle import run_op
    from sidecar.kg.model import Scope
    from sidecar.kg.requests import KgRequest
    from sidecar.kg.sqlite_kg import KG_FILE, JournalFeed, SqliteKgStore

    store = await SqliteKgStore.open(settings.memory_dir / KG_FILE)
    try:
        graph = KnowledgeGraph(store)
        if step != "read":
            return await run_op(graph, settings, KgRequest.from_json(step, body))
        roots = settings.held_tiers
        scopes = {name: Scope(settings.workspace_id, settings.crew_id if name == "crew" else "") for name in roots}
        ingest = Ingest(graph, roots, scopes, JournalFeed(settings.memory_dir / JOURNAL_FILE))
        try:
            files, journal = await ingest.backfill(), await ingest.follow()
        finally:
            await ingest.aclose()
        return {"facts_from_files": files, "facts_from_journal": journal, **await graph.stats(scopes["agent"])}
    finally:
        await store.aclose()
