"""A member's copy of the crew's files, from a server store, in its own crew dir.

With the crew in a server store a member has no shared volume, yet its memory block reads the
crew's files (``[CREW SHARED MEMORY]``). So the member keeps a copy: whenever the store's files
version moves (the lead changed something), the files whose content hash differs from the copy's
are written there durably (temp, fsync, rename, dir fsync), and files the store no longer has are
removed. The copy is a mirror, never a source: nothing reads it back into the store. A store that
is down leaves the copy as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from pathlib import Path

import structlog

from sidecar.index.files import path_problem, read_tier_file, scan_tier
from sidecar.store.base import StoreUnavailable
from sidecar.store.postgres import PostgresCrewStore
from sidecar.tasks import stop_task
from sidecar.write.durable import durable_replace

__all__ = ["CrewFileCopy"]

log = structlog.get_logger("sidecar.store.copy")
BATCH_FILES = 200


class CrewFileCopy:
    def __init__(self, store: PostgresCrewStore, root: Path, *, tick: float = 1.0) -> None:
        self.store = store
        self.root = root
        self.tick = tick
        self.version: int | None = None  # the store's files version the copy equals
        self._task: asyncio.Task[None] | None = None
        # Each copied file's content hash by its size and mtime: a version move re-reads only
        # the files whose size or mtime changed since (tens of thousands of files otherwise).
        self._hashes: dict[str, tuple[int, int, str]] = {}

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="crew-file-copy")

    async def stop(self) -> None:
        if self._task is not None:
            await stop_task(self._task)

    async def _run(self) -> None:
        while True:
            try:
                await self.step()
            except (StoreUnavailable, OSError) as exc:
                log.warning("store.copy_failed", error=str(exc))
            except Exception:
                log.exception("store.copy_failed")
            await asyncio.sleep(self.tick)

    async def step(self) -> tuple[int, int]:
        """Bring the copy level with the store if its version moved; (files written, removed)."""
        version = await self.store.version()
        if version == self.version:
            return 0, 0
        held = await self.store.files()
        local = await asyncio.to_thread(self._local)
        changed = sorted(p for p, h in held.items() if local.get(p) != h and path_problem(p) is None)
        for start in range(0, len(changed), BATCH_FILES):
            found = await self.store.file_contents(changed[start : start + BATCH_FILES])
            await asyncio.to_thread(self._write, {p: data for p, (_, data) in found.items() if data is not None})
        gone = [p for p in local if p not in held]
        await asyncio.to_thread(self._remove, gone)
        self.version = version
        if changed or gone:
            log.info("store.copied", written=len(changed), removed=len(gone))
        return len(changed), len(gone)

    def _local(self) -> dict[str, str]:
        """The copy's files by content hash (the index's own hash: blake2b, 16 bytes); a file
        whose size and mtime are those it had when last hashed is not read again."""
        out = {}
        known: dict[str, tuple[int, int, str]] = {}
        for rel, stat in scan_tier(self.root).items():
            held = self._hashes.get(rel)
            if held is not None and held[:2] == (stat.size, stat.mtime_ns):
                digest = held[2]
            else:
                data = read_tier_file(self.root, rel)
                if data is None:
                    continue
                digest = hashlib.blake2b(data, digest_size=16).hexdigest()
            out[rel] = digest
            known[rel] = (stat.size, stat.mtime_ns, digest)
        self._hashes = known
        return out

    def _write(self, files: dict[str, bytes]) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for rel, data in files.items():
            self._hashes.pop(rel, None)
            durable_replace(self.root, rel, data, read_tier_file(self.root, rel))

    def _remove(self, paths: list[str]) -> None:
        for rel in paths:
            self._hashes.pop(rel, None)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.root / rel)
