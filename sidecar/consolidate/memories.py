"""Near-duplicate typed memories merged: the journal's half of consolidation.

An agent that remembers "Deploys go through make ship" on Monday and "deploys go through make
ship." on Thursday holds two memories that say one thing; recall shows both and each takes part of
the prompt. Live typed memories of one scope (workspace, crew or not, namespace) and one type are
clustered like a week's lines (``cluster.cluster_lines``: word sets at a Jaccard of at least
``MERGE_JACCARD``, never two that differ in a number). Each cluster keeps one memory: the one
with the highest importance, then confidence, then the newest. The others become ``superseded``
with ``superseded_by`` naming it (kept as history, never served again) and it takes their access
counts. A memory with a topic key is never merged: its key already says which one is current.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.consolidate.cluster import cluster_lines
from sidecar.consolidate.periods import Line
from sidecar.episodic.entry import StoredEntry
from sidecar.episodic.store import JournalStore

__all__ = ["MERGE_JACCARD", "MergedMemories", "merge_memories"]

MERGE_JACCARD = 0.8
MAX_MEMORIES = 10_000  # the newest live memories a run looks at


@dataclass(frozen=True, slots=True)
class MergedMemories:
    """One cluster: the memory kept (its id and text) and the ids merged into it."""

    kept: str
    summary: str
    merged: tuple[str, ...]


async def merge_memories(journal: JournalStore, workspace_id: str, *, dry_run: bool) -> list[MergedMemories]:
    """Merge the workspace's near-duplicate live memories (module docstring); a dry run only says which."""
    entries = [e for e in await journal.memories(workspace_id, None, MAX_MEMORIES) if e.topic_key is None]
    # Clustering ten thousand memories takes a third of a second of CPU: on a thread, not the loop.
    found = await asyncio.to_thread(_all_clusters, entries)
    out = []
    for kept, merged in found:
        if dry_run:
            out.append(MergedMemories(kept.id, kept.summary, tuple(e.id for e in merged)))
            continue
        done = await journal.merge_into(workspace_id, kept.id, [e.id for e in merged])
        if done:
            out.append(MergedMemories(kept.id, kept.summary, tuple(done)))
    return out


def _all_clusters(entries: Sequence[StoredEntry]) -> list[tuple[StoredEntry, list[StoredEntry]]]:
    return [found for group in _groups(entries).values() for found in _clusters(group)]


def _groups(entries: Sequence[StoredEntry]) -> dict[tuple[str, str, str], list[StoredEntry]]:
    groups: dict[tuple[str, str, str], list[StoredEntry]] = {}
    for entry in entries:
        groups.setdefault((entry.crew_id or "", entry.namespace, entry.memory_type or ""), []).append(entry)
    return groups


def _clusters(group: list[StoredEntry]) -> list[tuple[StoredEntry, list[StoredEntry]]]:
    by_id = {e.id: e for e in group}
    lines = [Line(e.summary, e.id, "") for e in sorted(group, key=lambda e: e.seq)]
    out = []
    for cluster in cluster_lines(lines, MERGE_JACCARD):
        members = [by_id[line.source] for line in cluster.members]
        if len(members) < 2:
            continue
        kept = max(members, key=lambda e: (e.base_importance, e.confidence, e.seq))
        out.append((kept, [e for e in members if e.id != kept.id]))
    return out
