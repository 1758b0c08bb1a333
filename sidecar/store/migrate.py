"""``memory-sidecar store migrate --from sqlite:DIR --to postgres://...``: copy a crew tier's
index (its chunks exactly as the lead's chunker cut them, and the stored vectors of one model) into
a PostgreSQL crew store, leaving the store equal to the index.

It works file by file, a batch of files per transaction, and compares content hashes first: a run
that was killed, or is run again after the files changed, copies only the files the store does not
hold as they are now (and removes those the index no longer has). Progress goes to a callback.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sidecar.store.postgres import PostgresCrewStore
from sidecar.store.sqlite import SqliteCrewSource

__all__ = ["MigrateReport", "migrate_crew"]


@dataclass
class MigrateReport:
    files: int = 0  # in the source index
    copied: int = 0
    skipped: int = 0  # already in the store, unchanged
    removed: int = 0
    chunks: int = 0  # copied with the files
    vectors: int = 0
    model: str | None = None
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


async def migrate_crew(
    source_dir: Path,
    dsn: str,
    crew: str,
    *,
    model: str | None = None,
    batch: int = 200,
    progress: Callable[[MigrateReport], None] | None = None,
    query_s: float = 30.0,
) -> MigrateReport:
    """Copy ``source_dir``'s tier index into the store; ``model``: whose vectors (default: the
    model most stored vectors belong to)."""
    started = time.monotonic()
    source = SqliteCrewSource(source_dir)
    report = MigrateReport(model=model or await asyncio.to_thread(source.main_model))
    store = PostgresCrewStore(dsn, crew, timeout=query_s)
    store.defer_indexes = True  # built once at the end (an index the store has already is kept up to date)
    try:
        files = await asyncio.to_thread(source.files)
        held = await store.files()
        report.files = len(files)
        todo = sorted(p for p, f in files.items() if held.get(p) != f.hash)
        report.skipped = len(files) - len(todo)
        gone = sorted(p for p in held if p not in files)
        for start in range(0, len(todo), batch):
            part = todo[start : start + batch]
            chunks = await asyncio.to_thread(source.chunks, part)
            hashes = [c.hash for rows in chunks.values() for c in rows]
            vectors = await asyncio.to_thread(source.vectors, report.model, hashes)
            contents = await asyncio.to_thread(source.contents, part)
            flags = await asyncio.to_thread(source.flags, contents)
            pairs = [(files[p], chunks[p]) for p in part]
            await store.replace_files(pairs, report.model, vectors, flags, contents)
            report.copied += len(part)
            report.chunks += len(hashes)
            report.vectors += sum(1 for h in hashes if h in vectors)
            report.seconds = round(time.monotonic() - started, 3)
            if progress is not None:
                progress(report)
        await store.remove_files(gone)
        report.removed = len(gone)
        await store.build_indexes()  # also after a run killed before it got here
        await store.analyze()
    finally:
        await store.close()
    report.seconds = round(time.monotonic() - started, 3)
    return report
