"""The palace routes: the taxonomy of memory (``/memory/list``, ``/memory/taxonomy``), deletes
(``/memory/delete``), the identity (``/memory/identity``), the diary (``/memory/diary``), the
ingest of conversation turns (``/memory/ingest``) and the per-agent settings file
(``/memory/agent-settings``).

Each route calls an ``*_op`` function that the MCP tools call too, so the two answers cannot
drift apart. Writes go through the write service (durable, capped, scanned, reindexed).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import structlog
from aiohttp import web

from sidecar.contract import TIERS, WriteRequest
from sidecar.episodic.entry import JournalEntry
from sidecar.episodic.lifecycle import DEFAULT_WORKSPACE, JOURNAL
from sidecar.errors import BadRequest, Forbidden
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.memories import remember_op
from sidecar.keys import SETTINGS, WRITES
from sidecar.palace.agent_settings import KEYS, AgentSettings
from sidecar.palace.diary import diary_entry, read_diary
from sidecar.palace.ingest import DUP_THRESHOLD, JOURNAL_TYPES, Kept, daily_lines, parse_turns, plan_ingest
from sidecar.palace.layers import IDENTITY_FILE, check_identity
from sidecar.palace.taxonomy import list_files, taxonomy
from sidecar.settings import ID_RE
from sidecar.write.dedup import jaccard, tokens

__all__ = [
    "AGENT_SETTINGS",
    "delete_op",
    "diary_read_op",
    "diary_write_op",
    "ingest_op",
    "list_op",
    "routes",
    "set_identity_op",
    "taxonomy_op",
]

log = structlog.get_logger("sidecar.palace")
routes = web.RouteTableDef()
#: What the per-agent settings file said at start (set by ``create_app``).
AGENT_SETTINGS = web.AppKey("agent_settings", AgentSettings)
MAX_DIARY_LIMIT = 100
MAX_DIARY_CHARS = 10_000
#: Live typed memories an ingested turn is compared with (newest first).
DEDUP_MEMORIES = 2000


def _roots(app: web.Application) -> dict[str, Any]:
    settings = app[SETTINGS]
    roots = {"agent": settings.memory_dir}
    if settings.has_crew:
        roots["crew"] = settings.crew_dir
    return roots


def _str_arg(args: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    """A non-empty string field; None only when it is absent (a null is a 400 like any other value)."""
    if name not in args and not required:
        return None
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{name} must be a non-empty string", code=f"invalid_{name}")
    return value


def _closed(args: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(args) - allowed)
    if unknown:
        raise BadRequest(f"unknown field: {unknown[0]}", code="unknown_field")


# -- taxonomy --------------------------------------------------------------------------------------
async def list_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Every memory file with its wing, room, size, chunks and last change."""
    _closed(args, {"wing", "room"})
    wing, room = _str_arg(args, "wing"), _str_arg(args, "room")
    files = await asyncio.to_thread(list_files, _roots(app), wing=wing, room=room)
    return {"files": [f.to_json() for f in files]}


async def taxonomy_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Wings and rooms with their counts; the journal's live memories by type."""
    _closed(args, set())
    files = await asyncio.to_thread(list_files, _roots(app))
    counts: dict[str, int] = {}
    store = app.get(JOURNAL)
    if store is not None:
        for entry in await store.memories(app[SETTINGS].workspace_id, None, 10_000):
            counts[entry.memory_type or "other"] = counts.get(entry.memory_type or "other", 0) + 1
    return taxonomy(files, counts)


async def delete_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Delete a file or one heading section of it, durably, with a ``memory.deleted`` journal entry."""
    _closed(args, {"tier", "path", "heading"})
    tier = args.get("tier", "agent")  # a null is refused below
    if tier not in TIERS:
        raise BadRequest(f"tier must be one of {', '.join(TIERS)}", code="invalid_tier")
    path = WriteRequest.from_json({"tier": tier, "path": args.get("path"), "content": ""}).path
    heading = _str_arg(args, "heading")
    answer = await app[WRITES].delete(tier, path, heading)
    store = app.get(JOURNAL)
    if store is not None:
        what = f"section {heading!r} of " if heading else ""
        entry = JournalEntry(
            workspace_id=DEFAULT_WORKSPACE,
            entry_type="memory.deleted",
            summary=f"memory deleted: {what}{tier} {path}",
            payload={k: answer[k] for k in ("tier", "path", "deleted", "seq") if k in answer} | {"heading": heading},
        )
        answer["journal_id"] = (await store.append(entry, as_latest=True)).id
    return answer


# -- identity and diary ----------------------------------------------------------------------------
async def set_identity_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Replace the agent's identity (L0: ``identity.md``, whole in every block)."""
    _closed(args, {"identity"})
    text = check_identity(args.get("identity"))
    req = WriteRequest.from_json({"path": IDENTITY_FILE, "content": text, "mode": "replace"})
    body = await app[WRITES].write(req)
    return {"path": IDENTITY_FILE, "chars": len(text), "seq": body["seq"]}


async def diary_write_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Append an entry to the agent's diary in today's daily note."""
    _closed(args, {"content", "agent_id"})
    content = _str_arg(args, "content", required=True)
    assert content is not None
    if len(content) > MAX_DIARY_CHARS:
        raise BadRequest(f"content is over {MAX_DIARY_CHARS} characters", code="invalid_content")
    agent = _agent(app, args)
    path, text, at = diary_entry(agent, content, datetime.now(UTC))
    body = await app[WRITES].write(WriteRequest.from_json({"path": path, "content": text, "force": True}))
    return {"agent_id": agent, "path": path, "at": at, "seq": body["seq"]}


async def diary_read_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """The agent's newest diary entries, newest first."""
    _closed(args, {"agent_id", "limit"})
    agent = _agent(app, args)
    limit = args.get("limit", 10)
    if isinstance(limit, str) and limit.isdigit():
        limit = int(limit)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_DIARY_LIMIT:
        raise BadRequest(f"limit must be an integer from 1 to {MAX_DIARY_LIMIT}", code="invalid_limit")
    entries = await asyncio.to_thread(read_diary, app[SETTINGS].memory_dir, agent, limit)
    return {"agent_id": agent, "entries": entries}


def _agent(app: web.Application, args: dict[str, Any]) -> str:
    agent = args.get("agent_id", app[SETTINGS].agent_id)
    if not isinstance(agent, str) or not ID_RE.match(agent):
        raise BadRequest("agent_id must be 1-128 letters, digits or _.:@/-", code="invalid_agent_id")
    return agent


# -- ingest ----------------------------------------------------------------------------------------
async def ingest_op(app: web.Application, args: dict[str, Any]) -> dict[str, Any]:
    """Keep what a conversation says worth keeping: typed memories in the journal, the rest in
    today's daily note; the report says what was kept where and what was dropped and why."""
    _closed(args, {"turns", "dry_run"})
    dry_run = args.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise BadRequest("dry_run must be true or false", code="invalid_dry_run")
    if not app[SETTINGS].memory_enabled:
        raise Forbidden("memory is off for this agent (memory: false); nothing was kept", code="memory_disabled")
    plan = plan_ingest(parse_turns(args))
    store = app.get(JOURNAL)
    journal = store is not None
    known = [] if store is None else await store.memories(app[SETTINGS].workspace_id, None, DEDUP_MEMORIES)
    held = [(m.id, tokens(m.summary)) for m in known]
    kept: list[dict[str, Any]] = []
    daily: list[Kept] = []
    for item in plan.kept:
        words = tokens(item.text)
        twin = next((mid for mid, w in held if jaccard(words, w) >= DUP_THRESHOLD), None)
        if twin is not None:  # a typed memory the journal already holds
            plan.drop(item.index, "duplicate", duplicate_of={"memory_id": twin})
            continue
        found = await app[WRITES].check_duplicate("agent", None, item.text)
        if found is not None:  # a line a memory file already holds
            plan.drop(item.index, "duplicate", duplicate_of=found.to_json())
            continue
        row: dict[str, Any] = {"index": item.index, "type": item.type, "confidence": item.confidence}
        if journal and item.type in JOURNAL_TYPES:
            row["where"] = "journal"
            if not dry_run:
                body = {"content": item.text, "memory_type": JOURNAL_TYPES[item.type], "tags": ["ingest"]}
                row["id"] = (await remember_op(app, body))["id"]
        else:
            row["where"] = "daily"
            daily.append(item)
        kept.append(row)
    now = datetime.now(UTC)
    path = f"daily/{now:%Y-%m-%d}.md"
    if daily and not dry_run:
        section = daily_lines(daily, f"Conversation notes {now:%H:%M:%S}Z")
        await app[WRITES].write(WriteRequest.from_json({"path": path, "content": section, "force": True}))
    for row in kept:
        if row["where"] == "daily":
            row["path"] = path
    dropped = sorted(plan.dropped, key=lambda d: d["index"])
    return {"dry_run": dry_run, "kept": kept, "dropped": dropped, "counts": _counts(kept, dropped)}


def _counts(kept: list[dict[str, Any]], dropped: list[dict[str, Any]]) -> dict[str, Any]:
    by_type: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    for row in kept:
        by_type[row["type"]] = by_type.get(row["type"], 0) + 1
    for row in dropped:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + 1
    return {"kept": len(kept), "dropped": len(dropped), "by_type": by_type, "by_reason": by_reason}


# -- routes ----------------------------------------------------------------------------------------
@routes.get("/memory/list")
async def _list(request: web.Request) -> web.Response:
    return json_answer(await list_op(request.app, dict(request.query)))


@routes.get("/memory/taxonomy")
async def _taxonomy(request: web.Request) -> web.Response:
    return json_answer(await taxonomy_op(request.app, dict(request.query)))


@routes.post("/memory/delete")
async def _delete(request: web.Request) -> web.Response:
    return json_answer(await delete_op(request.app, await read_json_object(request)))


@routes.post("/memory/identity")
async def _identity(request: web.Request) -> web.Response:
    return json_answer(await set_identity_op(request.app, await read_json_object(request)))


@routes.post("/memory/diary")
async def _diary_write(request: web.Request) -> web.Response:
    return json_answer(await diary_write_op(request.app, await read_json_object(request)), status=201)


@routes.get("/memory/diary")
async def _diary_read(request: web.Request) -> web.Response:
    return json_answer(await diary_read_op(request.app, dict(request.query)))


@routes.post("/memory/ingest")
async def _ingest(request: web.Request) -> web.Response:
    return json_answer(await ingest_op(request.app, await read_json_object(request)))


@routes.get("/memory/agent-settings")
async def _agent_settings(request: web.Request) -> web.Response:
    """What the per-agent settings file said (its valid values and every problem in it), and the
    settings it governs as they are in effect."""
    found = request.app.get(AGENT_SETTINGS) or AgentSettings()
    settings = request.app[SETTINGS]
    effective = {key: getattr(settings, field) for key, (_, field, _) in KEYS.items()}
    return json_answer({**found.to_json(), "effective": effective})
