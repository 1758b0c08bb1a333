"""One consolidation of a tier as the settings configure it: the summariser, the evergreen file
and its cap, the journal's identity, and on a lead with ``--operator-id`` the operator model
(``operators/<user_slug(operator_id, workspace_id)>.md`` in the crew dir: the file the memory block
reads for that user in that workspace). One run per tier dir at a time in this process. The route,
the CLI and the schedule all run this: the same job, typed memories merged when a journal is given,
the archive bounded by a cap the size of the tier's, model summaries within a run budget, and the
run's end recorded for the schedule (``schedule.py``).

The job itself runs in a process of its own (``child.py``): its CPU work never holds this
process's interpreter lock, so the event loop answers while it runs, on a busy host too. This
process keeps the run's guard (one at a time per tier), the embedding model the job asks for
vectors, the journal it hands each week's entry, the merge of typed memories and the record of
the run's end.

While a run lasts, the cyclic garbage collector does not run on its own here: the report that
comes back is tens of thousands of small objects (unpickled on a thread, off the loop), and a full
collection they set off would walk the whole heap in one C call holding the interpreter lock, and
so the loop, whichever thread set it off (50-200 ms at a time on a large tier). Reference counting
frees what the requests meanwhile let go of; only garbage in cycles waits for the collector,
which runs again when the last run ends. The run leaves the heap's frozen part alone (``serve``
freezes what start-up made): asking how much is frozen walks every frozen object, holding the loop
for as long."""

from __future__ import annotations

import asyncio
import functools
import gc
from datetime import date
from pathlib import Path

import structlog

from sidecar.clock import utcnow
from sidecar.consolidate.child import Run, SummariserSpec, run_in_child
from sidecar.consolidate.job import Embed, OperatorModel, Progress, recorder
from sidecar.consolidate.memories import merge_memories
from sidecar.consolidate.report import Report
from sidecar.consolidate.schedule import record_run
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
    spec = SummariserSpec(
        kind,
        settings.openai_base_url if kind == "openai" else settings.ollama_host,
        settings.summariser_model,
        settings.openai_api_key,
        call_s=SUMMARY_TIMEOUT_S,
        run_s=RUN_BUDGET_S,
    )
    embed: Embed | None = None if embedder is None else functools.partial(embed_in_background, embedder)
    record = recorder(journal, None, workspace_id=settings.workspace_id, agent_id=settings.agent_id)
    operator = None
    if settings.operator_id and "crew" in settings.held_tiers:
        from sidecar.prompt.block import user_slug

        slug = user_slug(settings.operator_id, settings.workspace_id)
        operator = OperatorModel(settings.crew_dir, f"operators/{slug}.md", settings.topic_cap_bytes)
    run = Run(
        root,
        since,
        utcnow().date(),
        dry_run,
        evergreen="CREW.md" if tier == "crew" else "AGENT.md",
        workspace_id=settings.workspace_id,
        agent_id=settings.agent_id,
        evergreen_cap_bytes=settings.evergreen_cap_bytes,
        operator=operator,
        archive_cap_bytes=settings.tier_cap_bytes,
        summariser=spec,
        log_format=settings.log_format,
        log_level=structlog.get_logger("sidecar.consolidate").bind().get_effective_level(),
    )
    _RUNNING.add(root)
    if len(_RUNNING) == 1:  # no full collection holds the loop meanwhile (module docstring)
        _COLLECTING[0] = gc.isenabled()
        gc.disable()
    try:
        report = await run_in_child(run, embed=embed, record=record, progress=progress)
        if journal is not None:
            report.memories_merged = await merge_memories(journal, settings.workspace_id, dry_run=dry_run)
        if not dry_run:
            await asyncio.to_thread(record_run, root, utcnow())
        return report
    finally:
        _RUNNING.discard(root)
        if not _RUNNING and _COLLECTING[0]:
            gc.enable()


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
