"""Which search hits come from a section the injection scanner flagged, so an agent reading them
knows. Sections are judged as the memory block judges them (``flagged_sections``: a section with
its seam to the one before, so the half that completes a payload split across a heading is marked
and its clean siblings are not). A file is scanned at the first search that shows a hit from it (a few ms for a few KB, off
the loop); its verdicts are kept until the reindex queue applies a change to it (``forget`` is one
of the queue's update hooks), so they always describe the file as the index does. After start the
server scans every file in the background (``warm``)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.index.files import read_tier_file, scan_tier

if TYPE_CHECKING:
    from sidecar.scanner.scan import SectionFinding

__all__ = ["FlagCache"]

Key = tuple[str, str]  # (tier, path)


class FlagCache:
    """Flagged sections per memory file, for at most ``limit`` files (least recently used go)."""

    def __init__(self, limit: int = 8192) -> None:
        self.limit = limit
        self._known: OrderedDict[Key, list[SectionFinding]] = OrderedDict()

    def knows(self, tier: str, path: str) -> bool:
        """Whether the verdicts on this file are at hand (a search showing it will not scan it)."""
        return (tier, path) in self._known

    async def forget(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's ``UpdateHook``: the file changed, scan it again when next shown."""
        self._known.pop((tier, path), None)

    async def warm(self, roots: dict[str, Path]) -> None:
        """Scan every tier file not known yet, one at a time off the loop (the server runs this in
        the background after start), so searches seldom meet a file the first time."""
        for tier, root in roots.items():
            files = await asyncio.to_thread(scan_tier, root)
            for rel in files:
                if (tier, rel) not in self._known:
                    self._known[(tier, rel)] = await asyncio.to_thread(_flagged, root, rel)
        self._trim()

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        """``results`` with ``flagged`` on each local hit whose section has a finding."""
        keys = {(h["source"], h["path"]) for h in results if h["source"] in roots and "flagged" not in h}
        missing = [key for key in keys if key not in self._known]
        for key in keys - set(missing):
            self._known.move_to_end(key)  # recently used: the last to go
        if missing:
            fresh = await asyncio.to_thread(lambda: {key: _flagged(roots[key[0]], key[1]) for key in missing})
            self._known.update(fresh)
            self._trim()
        if not any(self._known.get(key) for key in keys):
            return results  # the common case: nothing flagged in these files
        from sidecar.scanner.scan import finding_at

        out = []
        for hit in results:
            known = self._known.get((hit["source"], hit["path"]))
            found = finding_at(known, int(hit["line_start"])) if known else None
            out.append({**hit, "flagged": found.as_json()} if found is not None else hit)
        return out

    def _trim(self) -> None:
        while len(self._known) > self.limit:
            self._known.popitem(last=False)


def _flagged(root: Path, rel: str) -> list[SectionFinding]:
    from sidecar.scanner.scan import flagged_sections

    data = read_tier_file(root, rel)
    return [] if data is None else flagged_sections(data.decode("utf-8", errors="replace"))
