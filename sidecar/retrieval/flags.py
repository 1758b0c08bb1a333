"""Which search hits come from a section the injection scanner flagged, so an agent reading them
knows. Sections are judged as the memory block judges them (``section_verdict``: a section with
its seam to the one before, so the half that completes a payload split across a heading is marked
and its clean siblings are not), and the scanner's answers are the block's own store
(``sidecar.prompt.verdicts.VERDICTS``, by the text judged): a section the block judged is not
judged again for a search, nor the other way round, and a file read again after a change has
only its changed sections judged. A file is read at the first search that shows a hit from it
(off the loop); which of its sections have a finding is kept until the reindex queue applies a
change to it (``forget`` is one of the queue's update hooks), so it describes the file as the
index does. A scan that a change to any file overtook keeps nothing (it may have read the file
before the change). After start the server scans every file in the background (``warm``)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.index.files import read_tier_file, scan_tier
from sidecar.prompt.verdicts import VERDICTS

if TYPE_CHECKING:
    from sidecar.scanner.scan import SectionFinding

__all__ = ["FlagCache"]

Key = tuple[str, str]  # (tier, path)


class FlagCache:
    """Flagged sections per memory file, for at most ``limit`` files (least recently used go)."""

    def __init__(self, limit: int = 8192) -> None:
        self.limit = limit
        self._known: OrderedDict[Key, list[SectionFinding]] = OrderedDict()
        self._changes = 0  # files forgotten so far: a scan a change overtook keeps nothing

    def knows(self, tier: str, path: str) -> bool:
        """Whether the verdicts on this file are at hand (a search showing it will not scan it)."""
        return (tier, path) in self._known

    async def forget(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's ``UpdateHook``: the file changed, scan it again when next shown."""
        self._changes += 1
        self._known.pop((tier, path), None)

    async def warm(self, roots: dict[str, Path]) -> None:
        """Scan every tier file not known yet, one at a time off the loop (the server runs this in
        the background after start), so searches seldom meet a file the first time."""
        for tier, root in roots.items():
            files = await asyncio.to_thread(scan_tier, root)
            for rel in files:
                if (tier, rel) not in self._known:
                    changes = self._changes
                    found = await asyncio.to_thread(_flagged, root, rel)
                    if changes == self._changes:
                        self._known[(tier, rel)] = found
        self._trim()

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        """``results`` with ``flagged`` on each local hit whose section has a finding."""
        keys = {(h["source"], h["path"]) for h in results if h["source"] in roots and "flagged" not in h}
        known = self._known
        missing = []
        flagged = False
        for key in keys:
            judged = known.get(key)
            if judged is None:
                missing.append(key)
            else:
                known.move_to_end(key)  # recently used: the last to go
                flagged = flagged or bool(judged)
        if not missing and not flagged:
            return results  # the common case: every file judged, nothing flagged in them
        fresh: dict[Key, list[SectionFinding]] = {}
        if missing:
            changes = self._changes
            fresh = await asyncio.to_thread(lambda: {key: _flagged(roots[key[0]], key[1]) for key in missing})
            if changes == self._changes:
                self._known.update(fresh)
                self._trim()
        if not any(fresh.get(key) or self._known.get(key) for key in keys):
            return results  # the common case: nothing flagged in these files
        from sidecar.scanner.scan import finding_at

        out = []
        for hit in results:
            key = (hit["source"], hit["path"])
            found_in = fresh.get(key) or self._known.get(key)
            found = finding_at(found_in, int(hit["line_start"])) if found_in else None
            out.append({**hit, "flagged": found.as_json()} if found is not None else hit)
        return out

    def _trim(self) -> None:
        while len(self._known) > self.limit:
            self._known.popitem(last=False)


def _flagged(root: Path, rel: str) -> list[SectionFinding]:
    """``flagged_sections`` of the file as it is now, each section's verdict from ``VERDICTS``."""
    from sidecar.scanner.scan import flagged_sections

    data = read_tier_file(root, rel)
    return [] if data is None else flagged_sections(data.decode("utf-8", errors="replace"), VERDICTS.section)
