"""``memory-sidecar health [--recompute]``: the journal's health snapshot as JSON (the CLI wires it)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import TextIO

from sidecar.episodic.entry import require_id
from sidecar.episodic.health import compute_health, latest_health
from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore
from sidecar.episodic.store import HealthSnapshot
from sidecar.errors import SidecarError
from sidecar.settings import Settings

__all__ = ["health_main"]


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
