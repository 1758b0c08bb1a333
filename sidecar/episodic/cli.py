"""The journal's commands of ``memory-sidecar`` (the CLI wires them), each on ``journal.sqlite``
directly, no server needed:

- ``health [--recompute]``: the journal's health snapshot as JSON.
- ``remember``, ``recall``, ``forget``: the agent's own typed memories, through the same requests
  and operations as ``POST /memory/remember``, ``/memory/recall`` and ``/memory/forget``.
- ``decay``: how far each live typed memory has faded, weakest first.

Every command prints an error in the same ``{"error": {...}}`` shape as the HTTP API and exits 2;
a ``forget`` that matches nothing exits 1.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any, TextIO, TypeVar

from sidecar.clock import parse_iso, to_iso, utcnow
from sidecar.episodic.entry import StoredEntry, check_namespace, invalid, require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.indexer import index_new
from sidecar.episodic.memories import (
    ForgetRequest,
    Identity,
    MemoryHit,
    RecallRequest,
    RememberRequest,
    forget,
    recall_memories,
    remember,
)
from sidecar.episodic.scoring import frequency, retention
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import HealthSnapshot
from sidecar.errors import NotFound, SidecarError, TierMissing
from sidecar.retrieval.embed.base import Embedder
from sidecar.settings import Settings

__all__ = [
    "DECAY_LIMIT",
    "decay_main",
    "forget_main",
    "health_main",
    "recall_main",
    "remember_main",
]

T = TypeVar("T")
#: Memories ``decay`` lists unless told otherwise, and the most it lists.
DECAY_LIMIT = 20
MAX_DECAY_LIMIT = 1000
#: Live memories ``decay`` reads to find the weakest (retention is not stored, so it sorts them itself).
_DECAY_SCAN = 1_000_000
CONTENT_CHARS = 80


def health_main(
    settings: Settings,
    recompute: bool,
    workspace_id: str,
    *,
    crew_id: str | None = None,
    stream: TextIO | None = None,
) -> int:
    """Print the latest snapshot (or a fresh one with ``recompute``) as JSON to ``stream``.

    Exit status: 0 printed a snapshot, 1 none stored yet, 2 bad arguments. Errors are printed in
    the same ``{"error": {...}}`` shape as the HTTP API.
    """
    out = stream or sys.stdout
    try:
        require_id("workspace_id", workspace_id)
        require_id("crew_id", crew_id, optional=True)
        snapshot = asyncio.run(_snapshot(settings, recompute, workspace_id, crew_id))
    except SidecarError as exc:
        out.write(json.dumps(exc.body()) + "\n")
        return 2
    if snapshot is None:
        message = f"no health snapshot for workspace {workspace_id}; run with --recompute"
        out.write(json.dumps({"error": {"code": "not_found", "message": message}}) + "\n")
        return 1
    out.write(json.dumps(snapshot.to_json(), indent=2) + "\n")
    return 0


async def _snapshot(
    settings: Settings, recompute: bool, workspace_id: str, crew_id: str | None
) -> HealthSnapshot | None:
    store = await SqliteJournalStore.open(settings.memory_dir / JOURNAL_FILE)
    try:
        if recompute:
            return await compute_health(store, workspace_id, crew_id)
        return await latest_health(store, workspace_id, crew_id)
    finally:
        await store.aclose()


# -- typed memories ----------------------------------------------------------------------------------
def remember_main(
    settings: Settings, body: Mapping[str, Any], *, stream: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Store one of the agent's own memories from ``body`` (the JSON ``POST /memory/remember`` takes)
    and print the answer. With an embedder it is embedded at once, as a sidecar's indexer would
    shortly after (with the journal's other unembedded entries, if any), so recall's dense leg finds
    it; without one, a sidecar embeds it when it next runs."""
    out, err = stream or sys.stdout, err or sys.stderr
    try:
        req = RememberRequest.from_json({**body, "scope": "own"}, Identity.from_settings(settings))
    except SidecarError as exc:
        return _error(exc, out)

    async def run(store: SqliteJournalStore) -> dict[str, Any]:
        answer = await remember(store, req.entry)
        embedder = await _embedder(settings, err, "stored without its vector (a sidecar embeds it when it runs)")
        if embedder is not None:
            try:
                await index_new(store, embedder)  # an embedder that fails logs why; the memory stays
            finally:
                await embedder.aclose()
        return answer

    return _answer(settings, run, out)


def forget_main(settings: Settings, body: Mapping[str, Any], *, stream: TextIO | None = None) -> int:
    """Forget one of the agent's own memories by ``id`` or ``topic_key`` (its history too); exit 1
    when nothing matched."""
    out = stream or sys.stdout
    try:
        req = ForgetRequest.from_json({**body, "scope": "own"}, Identity.from_settings(settings))
    except SidecarError as exc:
        return _error(exc, out)

    async def run(store: SqliteJournalStore) -> dict[str, Any]:
        return await forget(store, req)

    return _answer(settings, run, out)


def recall_main(
    settings: Settings,
    body: Mapping[str, Any],
    *,
    fmt: str | None = None,
    stream: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Recall the agent's own memories for ``body`` (the JSON ``POST /memory/recall`` takes), with the
    configured embedder when there is one and BM25 alone otherwise. ``fmt`` ``text`` prints a
    numbered list, ``json`` the answer; None: text on a terminal, JSON otherwise."""
    out, err = stream or sys.stdout, err or sys.stderr
    text = fmt == "text" or (fmt is None and out.isatty())
    try:
        req = RecallRequest.from_json(
            {**body, "scope": "own"},
            Identity.from_settings(settings),
            default_scope="own",
            default_scoring=settings.recall_scoring,
        )
    except SidecarError as exc:
        return _error(exc, out)

    async def run(store: SqliteJournalStore) -> dict[str, Any]:
        embedder = await _embedder(settings, err, "recall by BM25 only")
        try:
            now = utcnow()
            hits, dense = await recall_memories(store, embedder, req, crew_id=None, now=now)
        finally:
            if embedder is not None:
                await embedder.aclose()
        answer: dict[str, Any] = {"scope": req.scope.value, "scoring": req.scoring, "dense": dense}
        answer["hits"] = [h.to_json(explain=req.explain, now=now) for h in hits]
        if text:
            _print_hits(hits, answer, now, out)
        return answer

    return _answer(settings, run, out, show=not text)


def decay_main(
    settings: Settings,
    *,
    limit: object = None,
    namespace: str | None = None,
    fmt: str | None = None,
    stream: TextIO | None = None,
) -> int:
    """List the agent's own live typed memories of the namespace by how far they have faded: Ebbinghaus
    retention (what activation scoring calls recency), weakest first, at most ``limit`` of them.
    ``fmt`` as for :func:`recall_main`: a table on a terminal, JSON otherwise."""
    out = stream or sys.stdout
    text = fmt == "text" or (fmt is None and out.isatty())
    if limit is None:
        limit = DECAY_LIMIT
    try:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_DECAY_LIMIT:
            raise invalid("limit", f"limit must be an integer in 1..{MAX_DECAY_LIMIT}")
        ns = check_namespace(settings.namespace if namespace is None else namespace)
    except SidecarError as exc:
        return _error(exc, out)
    count = limit

    async def run(store: SqliteJournalStore) -> dict[str, Any]:
        now = utcnow()
        live = await store.memories(settings.workspace_id, ns, _DECAY_SCAN)
        rows = [_decay_row(e, now) for e in live if e.crew_id is None and e.agent_id == settings.agent_id]
        rows.sort(key=lambda r: (r["retention"], r["importance"], r["seq"]))
        for row in rows:
            del row["seq"]
        answer = {"workspace_id": settings.workspace_id, "namespace": ns, "total": len(rows), "memories": rows[:count]}
        if text:
            _print_decay(answer, out)
        return answer

    return _answer(settings, run, out, show=not text)


def _decay_row(entry: StoredEntry, now: datetime) -> dict[str, Any]:
    touched = entry.accessed_at or entry.ts
    return {
        "id": entry.id,
        "memory_type": entry.memory_type,
        "content": _cut(entry.summary, CONTENT_CHARS),
        "importance": round(entry.base_importance, 6),
        "retention": round(retention(touched, entry.access_count, now), 6),
        "frequency": round(frequency(entry.access_count), 6),
        "access_count": entry.access_count,
        "age_seconds": round(max(0.0, (now - entry.ts).total_seconds()), 3),
        "last_touched": to_iso(touched),
        "expires_at": None if entry.expires_at is None else to_iso(entry.expires_at),
        "topic_key": entry.topic_key,
        "seq": entry.seq,
    }


# -- running and printing ----------------------------------------------------------------------------
def _answer(
    settings: Settings,
    fn: Callable[[SqliteJournalStore], Awaitable[dict[str, Any]]],
    out: TextIO,
    *,
    show: bool = True,
) -> int:
    """Run ``fn`` on the agent's journal and print its answer as JSON (unless ``show`` is false: it
    printed its own); an error is printed in the API's shape."""
    from sidecar.logs import configure_logging

    configure_logging(settings.log_format, "warning")  # on stderr: stdout is the answer's
    root = settings.memory_dir
    try:
        if not root.is_dir():  # never created here: it may be a volume that is not mounted yet
            raise TierMissing(f"no such memory dir: {root}")
        answer = asyncio.run(_on_journal(settings, fn))
    except NotFound as exc:
        out.write(json.dumps(exc.body()) + "\n")
        return 1
    except SidecarError as exc:
        return _error(exc, out)
    except (sqlite3.Error, OSError) as exc:
        message = f"cannot use the journal {root / JOURNAL_FILE}: {exc}"
        out.write(json.dumps({"error": {"code": "journal_unavailable", "message": message}}) + "\n")
        return 2
    if show:
        out.write(json.dumps(answer, ensure_ascii=False, indent=2) + "\n")
    return 0


async def _on_journal(settings: Settings, fn: Callable[[SqliteJournalStore], Awaitable[T]]) -> T:
    store = await SqliteJournalStore.open(settings.memory_dir / JOURNAL_FILE)
    try:
        return await fn(store)
    finally:
        await store.aclose()


def _error(exc: SidecarError, out: TextIO) -> int:
    out.write(json.dumps(exc.body()) + "\n")
    return 2


async def _embedder(settings: Settings, err: TextIO, without: str) -> Embedder | None:
    """The embedder the sidecar would use (``settings.embedder``), or None (``none``, or ``auto``
    without the in-process model). One that is asked for but cannot be had is None too, after a
    line on ``err`` saying why and what happens ``without`` it."""
    from sidecar.errors import ConfigError
    from sidecar.retrieval.embed.factory import make_embedder

    try:
        return await asyncio.to_thread(make_embedder, settings)
    except ConfigError as exc:
        err.write(f"memory-sidecar: no embedder ({exc.message}): {without}\n")
        return None


def _cut(text: str, chars: int) -> str:
    """``text`` on one line, at most ``chars`` characters (an ellipsis marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= chars else line[: chars - 1].rstrip() + "…"


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _expiry(expires_at: datetime | str | None, now: datetime) -> str:
    if expires_at is None:
        return "-"
    when = parse_iso(expires_at) if isinstance(expires_at, str) else expires_at
    return f"in {_age(max(0.0, (when - now).total_seconds()))}"


_DENSE = {
    "ok": "",
    "no_embedder": ", BM25 only: no embedder",
    "embedder_error": ", BM25 only: the embedder failed",
}


def _print_hits(hits: list[MemoryHit], answer: dict[str, Any], now: datetime, out: TextIO) -> None:
    if not hits:
        out.write("no results\n")
        return
    dense = _DENSE.get(answer["dense"], f", dense {answer['dense']}")
    out.write(f"{len(hits)} {'memory' if len(hits) == 1 else 'memories'} ({answer['scoring']} scoring{dense})\n")
    width = len(str(len(hits)))
    for n, (hit, shown) in enumerate(zip(hits, answer["hits"], strict=True), 1):
        e = hit.entry
        out.write(f"{n:>{width}}. [{e.memory_type}] {_cut(e.summary, 2 * CONTENT_CHARS)}\n")
        facts = [
            f"score {hit.parts.score:.4f} via {hit.via}",
            f"id {e.id}",
            f"age {_age((now - e.ts).total_seconds())}",
        ]
        if e.topic_key is not None:
            facts.append(f"topic {e.topic_key}")
        if e.tags:
            facts.append(f"tags {', '.join(e.tags)}")
        if e.expires_at is not None:
            facts.append(f"expires {_expiry(e.expires_at, now)}")
        pad = " " * (width + 2)
        out.write(f"{pad}{'  '.join(facts)}\n")
        if "explain" in shown:
            parts = ", ".join(f"{k} {v}" for k, v in shown["explain"].items() if k not in ("scoring", "score"))
            out.write(f"{pad}{parts}\n")


def _print_decay(answer: dict[str, Any], out: TextIO) -> None:
    rows = answer["memories"]
    if not rows:
        out.write("no memories\n")
        return
    now = utcnow()
    out.write(
        f"{'retention':>9}  {'importance':>10}  {'freq':>5}  {'recalls':>7}  {'age':>5}  {'expires':<9}  "
        f"{'type':<14}  {'id':<35}  content\n"
    )
    for r in rows:
        out.write(
            f"{r['retention']:>9.3f}  {r['importance']:>10.3f}  {r['frequency']:>5.2f}  {r['access_count']:>7}  "
            f"{_age(r['age_seconds']):>5}  {_expiry(r['expires_at'], now):<9}  {r['memory_type']:<14}  "
            f"{r['id']:<35}  {r['content']}\n"
        )
    if answer["total"] > len(rows):
        out.write(f"({len(rows)} of {answer['total']} live memories; --limit shows more)\n")
