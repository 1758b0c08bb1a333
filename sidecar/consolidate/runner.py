"""One consolidation of a tier as the settings configure it: the summariser, the evergreen file
and its cap, the journal's identity, and on a lead with ``--operator-id`` the operator model
(``operators/<user_slug(operator_id, workspace_id)>.md`` in the crew dir: the file the memory block
reads for that user in that workspace). One run per tier dir at a time in this process."""

from __future__ import annotations

import functools
from datetime import date
from pathlib import Path

from sidecar.consolidate.job import Embed, OperatorModel, Progress, consolidate
from sidecar.consolidate.report import Report
from sidecar.consolidate.summarise import make_summariser
from sidecar.episodic.clock import utcnow
from sidecar.episodic.store import JournalStore
from sidecar.errors import Conflict
from sidecar.retrieval.embed.base import Embedder, embed_in_background
from sidecar.settings import Settings

__all__ = ["SUMMARY_TIMEOUT_S", "run_consolidation"]

#: The longest one model summary may take before the extractive summary stands in.
SUMMARY_TIMEOUT_S = 60.0
_RUNNING: set[Path] = set()


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
    summariser = make_summariser(kind, base, settings.summariser_model, settings.openai_api_key, SUMMARY_TIMEOUT_S)
    embed: Embed | None = None if embedder is None else functools.partial(embed_in_background, embedder)
    operator = None
    if settings.operator_id and settings.role == "lead":
        from sidecar.prompt.block import user_slug

        slug = user_slug(settings.operator_id, settings.workspace_id)
        operator = OperatorModel(settings.crew_dir, f"operators/{slug}.md", settings.topic_cap_bytes)
    _RUNNING.add(root)
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
        )
        if journal is not None:
            from sidecar.consolidate.memories import merge_memories

            report.memories_merged = await merge_memories(journal, settings.workspace_id, dry_run=dry_run)
        return report
    finally:
        _RUNNING.discard(root)
        await summariser.aclose()
