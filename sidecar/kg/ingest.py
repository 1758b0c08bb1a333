"""Feeding the graph: memory files as the reindex queue applies their changes (and all of them
once at start, skipping those already read), and journal entries as they are appended.

A file is read again only when its bytes changed (a digest per file). Facts a file no longer
states are not ended: a note moved to the archive still said them. A journal entry's facts start
at the entry's time unless its text names a date. With a chat model (``llm``), its checked facts
join the rules' (``kg.llm``); a fact both find is kept once.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import structlog

from sidecar.index.files import read_tier_file, scan_tier
from sidecar.kg.extract import Extracted, extract
from sidecar.kg.graph import KnowledgeGraph, new_facts
from sidecar.kg.llm import LlmExtractor
from sidecar.kg.model import Scope, iso, parse_when
from sidecar.kg.sqlite_kg import JournalFeed

__all__ = ["BACKFILL_REST", "Ingest"]

log = structlog.get_logger("sidecar.kg")
_CURSOR = "journal"
#: Seconds the start-up backfill rests per second of work, so searches and writes come first: a
#: first start over a large dir reads every file into the graph at a quarter of a core.
BACKFILL_REST = 3.0


class Ingest:
    """Reads tier files and journal entries into ``graph``; ``scopes`` says whose graph each tier feeds."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        roots: dict[str, Path],
        scopes: dict[str, Scope],
        journal: JournalFeed | None,
        llm: LlmExtractor | None = None,
    ) -> None:
        self.graph = graph
        self.llm = llm
        self.roots = roots
        self.scopes = scopes
        self.journal = journal
        self._following = asyncio.Lock()
        self._reading = asyncio.Lock()  # one file at a time, and none while closing
        self._closed = False

    async def file(self, tier: str, path: str) -> int:
        """Read one tier file into the graph if its bytes changed; the number of facts it states."""
        async with self._reading:
            return 0 if self._closed else await self._file(tier, path)

    async def _file(self, tier: str, path: str) -> int:
        root = self.roots.get(tier)
        if root is None or not path.endswith(".md"):
            return 0
        data = await asyncio.to_thread(read_tier_file, root, path)
        if data is None:
            return 0
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        if await self.graph.store.file_digest(tier, path) == digest:
            return 0
        text = data.decode("utf-8", errors="replace")
        found = await self._with_llm(await asyncio.to_thread(extract, text, path), text, path)
        facts, aliases = new_facts(found, f"file:{tier}:{path}", _mtime(root / path))
        await self.graph.add(self.scopes[tier], facts, aliases, file=(tier, path, digest))
        return len(facts)

    async def changed(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's hook: a file it added or updated is read again."""
        if kind != "removed":
            await self.file(tier, path)

    async def backfill(self) -> int:
        """Every tier file not yet read as it is now, paced (``BACKFILL_REST``); the number of facts
        they state."""
        total = 0
        for tier, root in self.roots.items():
            scan = await asyncio.to_thread(scan_tier, root)
            for path in sorted(scan):
                started = time.perf_counter()
                total += await self.file(tier, path)
                await asyncio.sleep((time.perf_counter() - started) * BACKFILL_REST)
        return total

    async def follow(self) -> int:
        """Read the journal entries appended since the last call; the number of facts they state."""
        if self.journal is None:
            return 0
        total = 0
        async with self._following:
            while not self._closed:
                after = await self.graph.store.cursor(_CURSOR)
                rows = await self.journal.read(after)
                if not rows:
                    return total
                for seq, entry_id, workspace, crew, ts, entry_type, summary in rows:
                    found = await self._with_llm(extract(summary), summary, f"journal/{entry_type}")
                    facts, aliases = new_facts(
                        found, f"journal:{entry_id}", parse_when(ts, "ts"), f"journal/{entry_type}"
                    )
                    await self.graph.add(Scope(workspace, crew), facts, aliases)
                    total += len(facts)
                    last = seq
                await self.graph.store.set_cursor(_CURSOR, last)
        return total

    async def _with_llm(self, found: list[Extracted], text: str, path: str) -> list[Extracted]:
        """The rules' facts, and the model's that the rules did not find."""
        if self.llm is None:
            return found
        seen = {(f.subject.lower(), f.predicate, f.object.lower()) for f in found}
        more = [
            f
            for f in await self.llm.extract(text, path)
            if (f.subject.lower(), f.predicate, f.object.lower()) not in seen
        ]
        return found + more

    async def aclose(self) -> None:
        """Wait for a file being read, then read no more (a later change is read at the next start)."""
        async with self._reading, self._following:
            self._closed = True
            if self.journal is not None:
                await self.journal.aclose()


def _mtime(path: Path) -> str:
    try:
        return iso(datetime.fromtimestamp(os.stat(path).st_mtime, UTC))
    except OSError:
        return iso(datetime.now(UTC))
