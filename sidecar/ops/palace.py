"""The memory palace's operations: the taxonomy of memory (list, taxonomy), deletes, the identity,
the diary, the ingest of conversation turns and the per-agent settings file; the HTTP routes
(``sidecar.http.palace``), the MCP tools and the CLI call them. Writes go through the write service
(durable, capped, scanned, reindexed)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import structlog

from sidecar.contract import (
    DeleteRequest,
    DiaryReadRequest,
    DiaryWriteRequest,
    IdentityRequest,
    IngestRequest,
    ListRequest,
    TaxonomyRequest,
    WriteRequest,
)
from sidecar.episodic.entry import JournalEntry
from sidecar.episodic.lifecycle import DEFAULT_WORKSPACE
from sidecar.episodic.memories import Identity, RememberRequest
from sidecar.errors import Conflict, Forbidden, SidecarError
from sidecar.index.files import read_tier_file
from sidecar.ops.answers import (
    AgentSettingsAnswer,
    DeleteAnswer,
    DiaryReadAnswer,
    DiaryWriteAnswer,
    IdentityAnswer,
    IngestAnswer,
    ListAnswer,
    TaxonomyAnswer,
)
from sidecar.ops.memories import remember_entry
from sidecar.ops.sidecar import Sidecar
from sidecar.palace.agent_settings import KEYS
from sidecar.palace.diary import diary_entry, read_diary
from sidecar.palace.ingest import JOURNAL_TYPES, Kept, Plan, Turn, daily_lines, entry_id, plan_ingest
from sidecar.palace.layers import IDENTITY_FILE
from sidecar.palace.near import adds_words
from sidecar.palace.taxonomy import list_files, taxonomy
from sidecar.store.base import block_only
from sidecar.write.dedup import Duplicate, tokens

__all__ = [
    "agent_settings",
    "delete",
    "diary_read",
    "diary_write",
    "ingest",
    "listed",
    "set_identity",
    "taxonomy_of",
]

log = structlog.get_logger("sidecar.palace")
#: Live typed memories an ingested turn is compared with (newest first).
DEDUP_MEMORIES = 2000


def _roots(sc: Sidecar) -> dict[str, Any]:
    settings = sc.settings
    roots = {"agent": settings.memory_dir}
    if settings.has_crew:
        roots["crew"] = settings.crew_dir
    return roots


# -- taxonomy --------------------------------------------------------------------------------------
async def listed(sc: Sidecar, req: ListRequest) -> ListAnswer:
    """Every memory file with its wing, room, size, chunks and last change."""
    files = await asyncio.to_thread(list_files, _roots(sc), wing=req.wing, room=req.room)
    # Operator models are read only by the block that injects them: not listed either.
    return cast(ListAnswer, {"files": [f.to_json() for f in files if not (f.wing == "crew" and block_only(f.path))]})


async def taxonomy_of(sc: Sidecar, req: TaxonomyRequest) -> TaxonomyAnswer:
    """Wings and rooms with their counts; the journal's live memories by type."""
    files = await asyncio.to_thread(list_files, _roots(sc))
    counts: dict[str, int] = {}
    for entry in await sc.journal.memories(sc.settings.workspace_id, None, 10_000):
        counts[entry.memory_type or "other"] = counts.get(entry.memory_type or "other", 0) + 1
    return cast(TaxonomyAnswer, taxonomy(files, counts))


async def delete(sc: Sidecar, req: DeleteRequest) -> DeleteAnswer:
    """Delete a file or one heading section of it, durably, with a ``memory.deleted`` journal entry."""
    tier, path, heading = req.tier, req.path, req.heading
    answer = await sc.writes.delete(tier, path, heading)
    # What the file (or the section) said is no longer memory's word.
    answer["facts_ended"] = await sc.kg.ingest.ended_file(tier, path, section=heading is not None)
    what = f"section {heading!r} of " if heading else ""
    entry = JournalEntry(
        workspace_id=DEFAULT_WORKSPACE,
        entry_type="memory.deleted",
        summary=f"memory deleted: {what}{tier} {path}",
        payload={k: answer[k] for k in ("tier", "path", "deleted", "seq") if k in answer} | {"heading": heading},
    )
    answer["journal_id"] = (await sc.journal.append(entry, as_latest=True)).id
    return cast(DeleteAnswer, answer)


# -- identity and diary ----------------------------------------------------------------------------
async def set_identity(sc: Sidecar, req: IdentityRequest) -> IdentityAnswer:
    """Replace the agent's identity (L0: ``identity.md``, whole in every block)."""
    write = WriteRequest.from_json({"path": IDENTITY_FILE, "content": req.identity, "mode": "replace"})
    body = await sc.writes.write(write)
    return {"path": IDENTITY_FILE, "chars": len(req.identity), "seq": body["seq"]}


async def diary_write(sc: Sidecar, req: DiaryWriteRequest) -> DiaryWriteAnswer:
    """Append an entry to the agent's diary in today's daily note."""
    agent = req.agent_id or sc.settings.agent_id
    path, text, at = diary_entry(agent, req.content, datetime.now(UTC))
    body = await sc.writes.write(WriteRequest.from_json({"path": path, "content": text, "force": True}))
    return {"agent_id": agent, "path": path, "at": at, "seq": body["seq"]}


async def diary_read(sc: Sidecar, req: DiaryReadRequest) -> DiaryReadAnswer:
    """The agent's newest diary entries, newest first."""
    agent = req.agent_id or sc.settings.agent_id
    entries = await asyncio.to_thread(read_diary, sc.settings.memory_dir, agent, req.limit)
    return cast(DiaryReadAnswer, {"agent_id": agent, "entries": entries})


# -- ingest ----------------------------------------------------------------------------------------
async def ingest(sc: Sidecar, req: IngestRequest) -> IngestAnswer:
    """Keep what a conversation says worth keeping: typed memories in the journal, the rest in the
    daily note of the turn's day. The plan (filter, chunks, types, dedup) is made off the event
    loop; each kept item is then stored on its own, so the report says what was kept where, what
    was dropped and why, and what failed, turn by turn: never half an ingest without a word."""
    if not sc.settings.memory_enabled:
        raise Forbidden("memory is off for this agent (memory: false); nothing was kept", code="memory_disabled")
    turns, dry_run = list(req.turns), req.dry_run
    store, workspace = sc.journal, sc.settings.workspace_id
    held = [(m.id, m.summary) for m in await store.memories(workspace, None, DEDUP_MEMORIES)]
    stored = frozenset(await store.fetch(workspace, _retry_ids(turns)))
    plan = await asyncio.to_thread(plan_ingest, turns, held, stored)
    run = _IngestRun(sc, plan, dry_run)
    await run.store_all()
    dropped = sorted(plan.dropped, key=lambda d: (d["index"], d.get("chunk", 0)))
    counts = _counts(run.rows, dropped) | {"failed": len(run.failed)}
    return {"dry_run": dry_run, "kept": run.rows, "dropped": dropped, "failed": run.failed, "counts": counts}


def _retry_ids(turns: list[Turn]) -> list[str]:
    """Every journal id a turn with an id may have been stored under (one per possible chunk)."""
    out = []
    for turn in turns:
        if turn.id is not None:
            out += [entry_id(turn.id, None)] + [entry_id(turn.id, n) for n in range(1, 2 + len(turn.content) // 600)]
    return out


class _IngestRun:
    """Storing one ingest's plan: each kept item on its own, its failure reported with its turn."""

    def __init__(self, sc: Sidecar, plan: Plan, dry_run: bool) -> None:
        self.sc, self.plan, self.dry_run = sc, plan, dry_run
        self.rows: list[dict[str, Any]] = []
        self.failed: list[dict[str, Any]] = []
        self._ids: dict[int, str] = {}  # place in plan.kept -> the memory id it got
        self._daily: dict[str, list[tuple[Kept, dict[str, Any]]]] = {}

    async def store_all(self) -> None:
        for n, item in enumerate(self.plan.kept):
            row: dict[str, Any] = {"index": item.index, "type": item.type, "confidence": item.confidence}
            row["priority"] = item.priority
            if item.chunk is not None:
                row["chunk"] = item.chunk
            try:
                await self._store(n, item, row)
            except SidecarError as exc:
                self._fail(item, exc)
        for path, items in sorted(self._daily.items()):
            await self._write_daily(path, items)

    def _fail(self, item: Kept, exc: SidecarError) -> None:
        row = {"index": item.index, "code": exc.code, "message": exc.message}
        if item.chunk is not None:
            row["chunk"] = item.chunk
        self.failed.append(row)

    async def _store(self, n: int, item: Kept, row: dict[str, Any]) -> None:
        if item.replayed:  # an earlier call with this turn id stored it
            self.rows.append({**row, "where": "journal", "id": item.entry_id, "replayed": True})
            return
        if await self._in_files(item):
            return
        if item.where == "journal":
            row["where"] = "journal"
            if not self.dry_run:
                row.update(await self._remember(n, item))
            self.rows.append(row)
            return
        row["where"] = "daily"
        day = (item.ts or datetime.now(UTC)).astimezone(UTC)
        self._daily.setdefault(f"daily/{day:%Y-%m-%d}.md", []).append((item, row))

    async def _in_files(self, item: Kept) -> bool:
        """Whether a memory file already says what ``item`` says (dropped as a duplicate then)."""
        writes = self.sc.writes
        found = await writes.check_duplicate("agent", None, item.text)
        if found is None:
            return False
        said = await asyncio.to_thread(_lines, self.sc.settings.memory_dir, found.path, found)
        if adds_words(tokens(item.text), tokens(said)):
            return False  # the file's line holds another value: this one is an update
        self.plan.drop(item.index, "duplicate", item.chunk, duplicate_of=found.to_json())
        return True

    async def _remember(self, n: int, item: Kept) -> dict[str, Any]:
        memory_type, tag = JOURNAL_TYPES[item.type]
        tags = ["ingest"] + ([tag] if tag else [])
        body = {"content": item.text, "memory_type": memory_type, "tags": tags, "priority": item.priority}
        req = RememberRequest.from_json(body, Identity.from_settings(self.sc.settings))
        entry = replace(req.entry, ts=item.ts, id=item.entry_id)
        try:
            answer = await remember_entry(self.sc, entry)
        except Conflict:  # the same turn id stored meanwhile by a concurrent retry
            return {"id": item.entry_id, "replayed": True}
        self._ids[n] = answer["id"]
        out: dict[str, Any] = {"id": answer["id"]}
        old = item.supersedes or (self._ids.get(item.updates) if item.updates is not None else None)
        if old is not None:
            merged = await self.sc.journal.merge_into(entry.workspace_id, answer["id"], [old])
            if merged:
                out["supersedes"] = old
        return out

    async def _write_daily(self, path: str, items: list[tuple[Kept, dict[str, Any]]]) -> None:
        stamp = min((k.ts for k, _ in items if k.ts is not None), default=datetime.now(UTC)).astimezone(UTC)
        if not self.dry_run:
            section = daily_lines([k for k, _ in items], f"Conversation notes {stamp:%H:%M:%S}Z")
            try:
                await self.sc.writes.write(WriteRequest.from_json({"path": path, "content": section, "force": True}))
            except SidecarError as exc:
                for item, _ in items:
                    self._fail(item, exc)
                return
        self.rows += [{**row, "path": path} for _, row in items]


def _lines(root: Path, path: str, found: Duplicate) -> str:
    """The lines of a memory file a duplicate check matched."""
    data = read_tier_file(root, path)
    lines = (data or b"").decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines[found.line_start - 1 : found.line_end])


def _counts(kept: list[dict[str, Any]], dropped: list[dict[str, Any]]) -> dict[str, Any]:
    by_type: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    kept.sort(key=lambda r: (r["index"], r.get("chunk", 0)))
    for row in kept:
        by_type[row["type"]] = by_type.get(row["type"], 0) + 1
    for row in dropped:
        by_reason[row["reason"]] = by_reason.get(row["reason"], 0) + 1
    return {"kept": len(kept), "dropped": len(dropped), "by_type": by_type, "by_reason": by_reason}


# -- the per-agent settings file -------------------------------------------------------------------
def agent_settings(sc: Sidecar) -> AgentSettingsAnswer:
    """What the per-agent settings file said (its valid values and every problem in it), and the
    settings it governs as they are in effect."""
    effective = {key: getattr(sc.settings, field) for key, (_, field, _) in KEYS.items()}
    return cast(AgentSettingsAnswer, {**sc.agent_settings.to_json(), "effective": effective})
