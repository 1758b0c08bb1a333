"""Consolidation as an operation: one run now, or its dry run (``POST /memory/consolidate``, the
MCP tool), and the schedule that runs one every ``--consolidate-interval`` hours: the agent tier,
and on a lead the crew tier too. After a run the tier is reconciled, so the index follows the
files it moved and wrote."""

from __future__ import annotations

import asyncio
import importlib
from datetime import date
from typing import cast

import structlog

from sidecar.contract import ConsolidateRequest
from sidecar.episodic.entry import invalid
from sidecar.ops.answers import ConsolidateAnswer
from sidecar.ops.sidecar import Sidecar

__all__ = ["consolidate", "consolidate_tier", "every"]

log = structlog.get_logger("sidecar.ops.consolidate")


async def consolidate(sc: Sidecar, req: ConsolidateRequest) -> ConsolidateAnswer:
    """One consolidation as asked: the crew tier only on a lead (it alone writes the crew tier)."""
    if req.tier not in sc.tiers:
        raise invalid("tier", "tier must be agent, or crew on a lead (only the lead writes the crew tier)")
    return await consolidate_tier(sc, req.tier, req.since, req.dry_run)


async def consolidate_tier(sc: Sidecar, tier: str, since: date | None, dry_run: bool) -> ConsolidateAnswer:
    """One consolidation of ``tier``; its report as JSON."""
    # The job's modules (and the scanner's rules) load with the first run (at most daily), not at
    # start-up, and on a thread: compiling them would hold every route for a tenth of a second.
    await asyncio.to_thread(importlib.import_module, "sidecar.consolidate.runner")
    from sidecar.consolidate.runner import run_consolidation

    journal = sc.journal if tier == "agent" else None
    report = await run_consolidation(
        sc.settings, tier, since=since, dry_run=dry_run, journal=journal, embedder=sc.embedder
    )
    if not dry_run:
        sc.writes.recount(tier)  # the notes it archived no longer count against the cap
        sc.queue.put(tier, None, "consolidate")
        if tier == "agent" and report.operator_model is not None and report.operator_model.changed:
            sc.queue.put("crew", None, "consolidate")  # the operator model lives in the crew dir
    # A report lists every line left out: thousands. Its JSON is ``ConsolidateAnswer``, field for field.
    return cast(ConsolidateAnswer, await asyncio.to_thread(report.to_json))


async def every(sc: Sidecar, seconds: float) -> None:
    """Consolidate every ``seconds``, for ever; the first run comes when the interval since the last
    recorded run is up, shortly after start when it is overdue. A failed run is logged and tried
    again next time."""
    from sidecar.clock import utcnow
    from sidecar.consolidate.schedule import first_delay, last_run

    tiers = list(sc.tiers)  # the agent tier, and on a lead the crew tier
    last = await asyncio.to_thread(last_run, sc.settings.memory_dir)
    wait = first_delay(last, utcnow(), seconds)
    while True:
        await asyncio.sleep(wait)
        wait = seconds
        for tier in tiers:
            try:
                report = await consolidate_tier(sc, tier, None, dry_run=False)
                log.info("consolidate.done", tier=tier, periods=len(report.get("periods", [])))
            except Exception:  # a failed run is logged and tried again next time
                log.exception("consolidate.failed", tier=tier)
