"""One consolidation of a tier as the settings configure it: the summariser, the evergreen file
and its cap, the journal's identity, and on a lead with ``--operator-id`` the operator model
(``operators/<user_slug(operator_id, workspace_id)>.md`` in the crew dir: the file the memory block
reads for that user in that workspace). One run per tier dir at a time in this process. The route,
the CLI and the schedule all run this: the same job, typed memories merged when a journal is given,
the archive bounded by a cap the size of the tier's, model summaries within a run budget, and the
run's end recorded for the schedule (``schedule.py``).

While a run lasts, the cyclic garbage collector does not run on its own: the run allocates
millions of small objects on its worker threads, and each full collection they set off walks the
heap in one C call holding the GIL, and the event loop with it, on whichever thread happened to
allocate (50-200 ms at a time on a large tier). Reference counting frees what the run and the
requests meanwhile let go of; only garbage in cycles waits for the collector, which runs again
when the last run ends. The run leaves the heap's frozen part alone (``serve`` freezes what
start-up made): asking how much is frozen walks every frozen object, holding the loop for as long."""

from __future__ import annotations

import asyncio
import functools
import gc
from datetime import date
from pathlib import Path

from sidecar.clock import utcnow
from sidecar.consolidate.budget import Budgeted
from sidecar.consolidate.job import Embed, OperatorModel, Progress, consolidate
from sidecar.consolidate.report import Report
from sidecar.consolidate.schedule import record_run
from sidecar.consolidate.summarise import Summariser, make_summariser
from sidecar.episodic.store import JournalStore
from sidecar.errors import Conflict
from sidecar.retrieval.embed.base import Embedder, embed_in_background
from sidecar.settings import Settings

__all__ = ["RUN_BUDGET_S", "SUMMARY_TIMEOUT_S", "run_consolidation", "run_with_journal"]

#: The longest one model summary may take before the extractive summary stands in.
SUMMARY_TIMEOUT_S = 20.0
#: The longest all of a run's model summaries may take together (``budget.py``).
RUN_BUDGET_S = 45.0
_RUNNING: set[Path] = set()
#: Whether the collector ran on its own before the first of the runs under way (it does again after the last).
_COLLECTING = [True]


async def run_consolidation(
    settings: Settings,
    tier: str,
    *,
    since: date | None = None,
    dry_run: bool = False,
    journal: JournalStore | None = None,
    progress: Progress | None = None,
    embedder: Embedder | None = None,
) -> Report:
    """Consolidate the ``agent`` or ``crew`` tier; Conflict (409) while a run of it is under way."""
    root = settings.crew_dir if tier == "crew" else settings.memory_dir
    if root in _RUNNING:
        raise Conflict(f"a consolidation of the {tier} tier is already running", code="consolidation_running")
    kind = settings.summariser
    base = settings.openai_base_url if kind == "openai" else settings.ollama_host
    summariser: Summariser = make_summariser(
        kind, base, settings.summariser_model, settings.openai_api_key, SUMMARY_TIMEOUT_S
    )
    if kind != "none":
        summariser = Budgeted(summariser, run_s=RUN_BUDGET_S, call_s=SUMMARY_TIMEOUT_S)
    embed: Embed | None = None if embedder is None else functools.partial(embed_in_background, embedder)
    operator = None
    if settings.operator_id and "crew" in settings.held_tiers:
        from sidecar.prompt.block import user_slug

        slug = user_slug(settings.operator_id, settings.workspace_id)
        operator = OperatorModel(settings.crew_dir, f"operators/{slug}.md", settings.topic_cap_bytes)
    _RUNNING.add(root)
    if len(_RUNNING) == 1:  # no full collection of the run's objects holds the loop meanwhile (module docstring)
        _COLLECTING[0] = gc.isenabled()
        gc.disable()
    try:
        report = await consolidate(
            root,
            since=since,
            until=utcnow().date(),
            summariser=summariser,
            dry_run=dry_run,
            evergreen="CREW.md" if tier == "crew" else "AGENT.md",
            journal=journal,
            workspace_id=settings.workspace_id,
            agent_id=settings.agent_id,
            evergreen_cap_bytes=settings.evergreen_cap_bytes,
            operator=operator,
            progress=progress,
            embed=embed,
            archive_cap_bytes=settings.tier_cap_bytes,
        )
        if journal is not None:
            from sidecar.consolidate.memories import merge_memories

            report.memories_merged = await merge_memories(journal, settings.workspace_id, dry_run=dry_run)
        if not dry_run:
            await asyncio.to_thread(record_run, root, utcnow())
        return report
    finally:
        _RUNNING.discard(root)
        if not _RUNNING and _COLLECTING[0]:
            gc.enable()
        await summariser.aclose()


async def run_with_journal(
    settings: Settings, tier: str, *, since: date | None, dry_run: bool, progress: Progress | None
) -> Report:
    """``run_consolidation`` with the agent tier's journal when it exists (what the CLI runs, the
    same job as the route's): typed memories merged and the weeks recorded. A journal the dir does
    not have is never created; the run goes on without its part and the report says so."""
    if tier == "crew":
        return await run_consolidation(settings, tier, since=since, dry_run=dry_run, progress=progress)
    from sidecar.episodic.sqlite_store import JOURNAL_FILE, SqliteJournalStore

    path = settings.memory_dir / JOURNAL_FILE
    if not path.is_file():
        report = await run_consolidation(settings, tier, since=since, dry_run=dry_run, progress=progress)
        report.no_journal = f"{path} does not exist (not created): no typed memories merged, no weeks recorded"
        return report
    journal = await SqliteJournalStore.open(path)
    try:
        return await run_consolidation(settings, tier, since=since, dry_run=dry_run, progress=progress, journal=journal)
    finally:
        await journal.aclose()
