"""Which search hits come from a section the injection scanner flagged, so an agent reading them
knows: the verdicts per file are cached by the file's size and mtime, and computed off the loop."""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.index.files import read_tier_file

if TYPE_CHECKING:
    from sidecar.prompt.scan import SectionFinding

__all__ = ["FlagCache"]

Key = tuple[Path, str]


class FlagCache:
    """Flagged sections per memory file, valid while the file keeps its size and mtime. A file is
    scanned once, at the first search that shows a hit from it (a few ms for a few KB), so the cache
    holds every file of a tier of ordinary size: a tier past ``limit`` files pays rescans."""

    def __init__(self, limit: int = 8192) -> None:
        self.limit = limit
        self._known: OrderedDict[Key, tuple[tuple[int, int], list[SectionFinding]]] = OrderedDict()

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        """``results`` with ``flagged`` on each local hit whose section has a finding."""
        wanted = {(roots[h["source"]], h["path"]) for h in results if h["source"] in roots and "flagged" not in h}
        if not wanted:
            return results
        stamps: dict[Key, tuple[int, int]] = {}
        for key in wanted:  # a stat each, on the loop: microseconds
            stamp = _stamp(*key)
            if stamp is not None:
                stamps[key] = stamp
        missing = [key for key, stamp in stamps.items() if self._cached(key, stamp) is None]
        if missing:
            fresh = await asyncio.to_thread(lambda: {key: _flagged(*key) for key in missing})
            for key, found_here in fresh.items():
                self._store(key, stamps[key], found_here)
        from sidecar.prompt.scan import finding_at

        out = []
        for hit in results:
            key = (roots.get(hit["source"], Path()), hit["path"])
            sections = self._cached(key, stamps[key]) if key in stamps else None
            found = finding_at(sections, int(hit["line_start"])) if sections else None
            out.append({**hit, "flagged": found.as_json()} if found is not None else hit)
        return out

    def _cached(self, key: Key, stamp: tuple[int, int]) -> list[SectionFinding] | None:
        known = self._known.get(key)
        if known is None or known[0] != stamp:
            return None
        self._known.move_to_end(key)
        return known[1]

    def _store(self, key: Key, stamp: tuple[int, int], sections: list[SectionFinding]) -> None:
        self._known[key] = (stamp, sections)
        self._known.move_to_end(key)
        while len(self._known) > self.limit:
            self._known.popitem(last=False)


def _stamp(root: Path, rel: str) -> tuple[int, int] | None:
    try:
        st = os.stat(root / rel)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _flagged(root: Path, rel: str) -> list[SectionFinding]:
    from sidecar.prompt.scan import flagged_sections

    data = read_tier_file(root, rel)
    return [] if data is None else flagged_sections(data.decode("utf-8", errors="replace"))
