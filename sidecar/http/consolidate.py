"""``POST /memory/consolidate`` (a consolidation now, or its dry run) and the schedule that runs one
every ``--consolidate-interval`` hours: the agent tier, and on a lead the crew tier too. After a
run the tier is reconciled, so the index follows the files it moved and wrote."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import structlog
from aiohttp import web

from sidecar.episodic.entry import invalid
from sidecar.episodic.lifecycle import JOURNAL
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.keys import EMBEDDER, QUEUE, SETTINGS, WRITES

__all__ = ["consolidate_schedule_ctx", "routes"]

log = structlog.get_logger(__name__)
routes = web.RouteTableDef()


async def consolidate_tier(app: web.Application, tier: str, since: date | None, dry_run: bool) -> dict[str, Any]:
    # The job's modules (and the scanner's rules) load with the first run (at most daily), not at
    # start-up, and on a thread: compiling them would hold every route for a tenth of a second.
    await asyncio.to_thread(importlib.import_module, "sidecar.consolidate.runner")
    from sidecar.consolidate.runner import run_consolidation

    journal = app.get(JOURNAL) if tier == "agent" else None
    report = await run_consolidation(
        app[SETTINGS], tier, since=since, dry_run=dry_run, journal=journal, embedder=app.get(EMBEDDER)
    )
    if not dry_run:
        app[WRITES].recount(tier)  # the notes it archived no longer count against the cap
        app[QUEUE].put(tier, None, "consolidate")
        if tier == "agent" and report.operator_model is not None and report.operator_model.changed:
            app[QUEUE].put("crew", None, "consolidate")  # the operator model lives in the crew dir
    return await asyncio.to_thread(report.to_json)  # a report lists every line left out: thousands


@routes.post("/memory/consolidate")
async def _consolidate(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    settings = request.app[SETTINGS]
    tier = body.get("tier", "agent")
    if tier not in ("agent", "crew") or (tier == "crew" and settings.role != "lead"):
        raise invalid("tier", "tier must be agent, or crew on a lead (only the lead writes the crew tier)")
    since = body.get("since")
    if since is not None:
        try:
            since = date.fromisoformat(since) if isinstance(since, str) else None
        except ValueError:
            since = None
        if since is None:
            raise invalid("since", "since must be a date, YYYY-MM-DD")
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise invalid("dry_run", "dry_run must be true or false")
    return json_answer(await consolidate_tier(request.app, tier, since, dry_run))


async def consolidate_schedule_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: every ``consolidate_interval`` hours, consolidate; the first run comes when the
    interval since the last recorded run is up, shortly after start when it is overdue. Never with
    memory off: memory is then neither read nor written."""
    hours = app[SETTINGS].consolidate_interval if app[SETTINGS].memory_enabled else 0
    task = asyncio.create_task(_every(app, hours * 3600)) if hours > 0 else None
    yield
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _every(app: web.Application, seconds: float) -> None:
    from sidecar.clock import utcnow
    from sidecar.consolidate.schedule import first_delay, last_run

    tiers = ["agent", "crew"] if app[SETTINGS].role == "lead" else ["agent"]
    last = await asyncio.to_thread(last_run, app[SETTINGS].memory_dir)
    wait = first_delay(last, utcnow(), seconds)
    while True:
        await asyncio.sleep(wait)
        wait = seconds
        for tier in tiers:
            try:
                report = await consolidate_tier(app, tier, None, dry_run=False)
                log.info("consolidate.done", tier=tier, periods=len(report.get("periods", [])))
            except Exception:  # a failed run is logged and tried again next time
                log.exception("consolidate.failed", tier=tier)
