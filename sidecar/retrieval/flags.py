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
before the change). After start the server scans every file in the background (``warm``).

The files found clean are remembered across restarts in ``CLEAN_FILES`` in the tier dir (each
file by a digest of its bytes, all of them under a digest of the scanner's code and data): the
warm-up after a restart reads each file and digests it, and scans only the files that changed
since, have a finding, or were never judged, so the first searches after a restart do not share
the host with a scan of the whole tier. The server writes the file when its warm-up ends and when
it stops; ``memory-sidecar search`` reads and writes the same file.

A hit is marked only with verdicts on the bytes the index holds for its file: each tier's index
tells the cache (``held``, its ``on_held`` hook, on the index's writer thread) which bytes each file
it changes holds before the change is searchable, so a search that meets the new text before the
queue's ``forget`` (a write the writer thread committed while the loop was busy, a write handed to
the index early, a shell edit the watcher queued, a reconcile after a consolidation run) reads the
file instead of answering for other bytes: a flagged section never shows unflagged, nor a clean one
flagged, for the moment between the two. Verdicts judged on the bytes the index holds are kept
through ``forget``.

A write that the injection scanner has just judged can say that it leaves the file's flagged
sections as they were (``carry``: an append to the file's last section, clean, that does not reach
where that section meets the one before it); its change then keeps them, with no new reading of
the file, when they describe the file exactly as the write found it (the digest of its bytes), the
index holds the bytes the write left (when it told them), and the file is still as the write left it (its stat, read when the change is applied: an edit made
meanwhile is in the index too). Any other change, or a chain of changes one of which did not say
so, forgets them as before."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sidecar.heap import release_free_memory
from sidecar.index.files import read_tier_file, scan_tier
from sidecar.prompt.verdicts import VERDICTS
from sidecar.scanner.apart import ApartJudge
from sidecar.scanner.installed import scanner_digest
from sidecar.write.durable import stat_key
from sidecar.write.scan_tail import file_digest

if TYPE_CHECKING:
    from sidecar.scanner.scan import SectionFinding

__all__ = ["CLEAN_FILES", "FlagCache", "Parts", "load_clean", "load_remembered", "save_clean", "sweep_clean_temps"]

#: In the tier dir (a dot file: never a memory file): the files the scanner found clean.
CLEAN_FILES = ".search-clean.json"

Key = tuple[str, str]  # (tier, path)
_UNTOLD = b"untold"  # no digest is this long: the index told nothing of the file since start

_NONE_FOUND: list[SectionFinding] = []  # kept for every file without a finding; never changed

#: Files a tier's warm-up finds not remembered clean, at least, for it to judge them in a child
#: process (``sidecar.scanner.apart``): a first start's pass over the whole tier, which judged in
#: the server's own process left it some 3 MB larger for good (its short-lived objects made between
#: the graph's and the index's long-lived ones). A restart's few changed files are judged in process.
APART_FROM = 64

#: Writes carried per file, at most, until their changes are applied (more are dropped: the file is
#: then read again at its next search, as without them).
CARRIED_PER_FILE = 16


class FlagCache:
    """Flagged sections per memory file, for at most ``limit`` files (least recently used go)."""

    def __init__(self, limit: int = 8192, apart_from: int = APART_FROM) -> None:
        self.limit = limit
        self.apart_from = apart_from  # files to judge, at least, for the warm-up to judge them apart
        self._known: OrderedDict[Key, list[SectionFinding]] = OrderedDict()
        # The digest of the bytes each known file's sections were judged on.
        self._digests: dict[Key, bytes] = {}
        # Writes that left a file's flagged sections as they were, not applied yet, in seq order.
        self._carried: dict[Key, list[_Carried]] = {}
        self._changes = 0  # files forgotten so far: a scan a change overtook keeps nothing
        # The digest of the bytes the index holds for each file it changed since start (None: the
        # file left it), told by the index before its commit (``held``); set on its writer thread.
        self._held: dict[Key, bytes | None] = {}
        # Each warmed tier's dir, its files when last listed, and the clean files remembered there
        # (``CLEAN_FILES``: path -> digest of the bytes found clean) as last read or written.
        self._remembered: dict[str, tuple[Path, frozenset[str], dict[str, str]]] = {}

    def knows(self, tier: str, path: str) -> bool:
        """Whether the verdicts on this file are at hand (a search showing it will not scan it)."""
        return (tier, path) in self._known and self._current((tier, path))

    def held(self, tier: str, files: dict[str, bytes | None]) -> None:
        """The index's ``on_held`` hook (``sidecar.index.sync.HeldHook``), on its writer thread:
        the bytes it holds for each of ``files`` from its next commit on. Verdicts judged on other
        bytes answer for none of its hits from then on."""
        for path, digest in files.items():
            self._held[(tier, path)] = digest  # one item set each: atomic, as the loop reads them

    def _current(self, key: Key) -> bool:
        """Whether the verdicts kept on the file hold for the bytes the index holds: judged on them,
        or on bytes that writes carried them from onto them (a write the index has before its
        ``forget``), or the index told nothing of the file since start (it holds what it held then)."""
        held = self._held.get(key, _UNTOLD)
        now = self._digests.get(key)
        if held is _UNTOLD or held == now:
            return True
        known = self._known.get(key, [])
        for step in self._carried.get(key, ()):
            if now == step.before and not any(found.line_end >= step.section_line for found in known):
                now = step.after
                if now == held:
                    return True
        return False

    def carry(
        self,
        tier: str,
        path: str,
        seq: int,
        *,
        section_line: int,
        before: bytes,
        after: bytes,
        file: Path,
        written: tuple[int, ...],
    ) -> None:
        """The write ``seq`` (queued, not applied yet) changed the file whose bytes had the digest
        ``before`` into bytes of digest ``after`` (``file``, whose stat key it left as ``written``),
        growing the section that starts on line ``section_line``, and left every section's verdict
        as it was: its change keeps the flagged sections if they were judged on ``before``, none of
        them is the grown one (whose lines the flag would no longer cover) and the file is still
        as the write left it."""
        key = (tier, path)
        if key not in self._known and key not in self._carried:
            return  # nothing to keep: the file is read at its next search anyway
        if len(self._carried) >= self.limit:
            self._carried.clear()  # forgotten writes cost a reading each, never a wrong mark
        carried = self._carried.setdefault(key, [])
        carried.append(_Carried(seq, section_line, before, after, file, written))
        del carried[:-CARRIED_PER_FILE]

    async def forget(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's ``UpdateHook``: the file changed (its changes up to ``seq``), scan it
        again when next shown, unless every write in that change carried its flagged sections."""
        self._changes += 1
        key = (tier, path)
        carried = self._carried.pop(key, None) or []
        later = [c for c in carried if c.seq > seq]
        if later:
            self._carried[key] = later
        steps = [c for c in carried if c.seq <= seq]  # the writes this change applied that carried
        now = self._digests.get(key) if kind == "updated" and steps else None
        known = self._known.get(key, [])
        for step in steps:
            grown = any(found.line_end >= step.section_line for found in known)
            now = step.after if now == step.before and not grown else None
        held = self._held.get(key, _UNTOLD)  # the bytes the index holds now, when it told them
        if key in self._known and held is not _UNTOLD and self._digests.get(key) == held:
            return  # judged on them (a search read the file after the change was committed)
        onto = now is not None and key in self._known and (held is _UNTOLD or now == held)
        if onto and now is not None and _stat_key(steps[-1].file) == steps[-1].written:  # no edit since
            self._digests[key] = now
            return
        self._known.pop(key, None)
        self._digests.pop(key, None)

    async def warm(self, roots: dict[str, Path]) -> None:
        """Scan every tier file not known yet, one at a time off the loop (the server runs this in
        the background after start), so searches seldom meet a file the first time. A file
        remembered clean in the tier's ``CLEAN_FILES`` is read and digested, not scanned, when its
        bytes are the ones remembered. Each tier's clean files are written back when it is done."""
        for tier, root in roots.items():
            files = await asyncio.to_thread(scan_tier, root)
            clean = await asyncio.to_thread(load_clean, root)
            self._remembered[tier] = (root, frozenset(files), clean)
            unknown = [rel for rel in files if (tier, rel) not in self._known]
            apart = ApartJudge() if sum(rel not in clean for rel in unknown) >= self.apart_from else None
            try:
                for rel in unknown:
                    if (tier, rel) not in self._known:
                        changes = self._changes
                        if apart is None:
                            found = await asyncio.to_thread(_flagged, root, rel, clean)
                        else:
                            found = await _flagged_apart(apart, root, rel, clean)
                        if changes == self._changes:
                            self._keep((tier, rel), found)
            finally:
                if apart is not None:
                    await apart.aclose()
            self._trim()
            await self.remember(tier)
        # The scans' transient texts leave free heap pages behind; no response follows to trigger
        # the idle release (``sidecar.server.lifecycle.IdleRelease``) until someone asks.
        await asyncio.to_thread(release_free_memory)

    async def remember(self, tier: str | None = None) -> None:
        """Write the clean files known of ``tier`` (of every warmed tier when None) to its
        ``CLEAN_FILES``, when they differ from what it holds: each file judged clean and still in
        the tier when it was last listed, by the digest of the bytes judged; a file not known now
        keeps the digest remembered for it (it is digested again before that is believed)."""
        for name in [tier] if tier is not None else list(self._remembered):
            if name not in self._remembered:
                continue
            root, files, saved = self._remembered[name]
            clean = {rel: digest for rel, digest in saved.items() if rel in files and (name, rel) not in self._known}
            for (known_tier, rel), found in self._known.items():
                digest = self._digests.get((known_tier, rel))
                if known_tier == name and not found and digest is not None and rel in files:
                    clean[rel] = digest.hex()
            if clean != saved:
                self._remembered[name] = (root, files, clean)
                await asyncio.to_thread(save_clean, root, clean)

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        """``results`` with ``flagged`` on each local hit whose section has a finding."""
        keys = {(h["source"], h["path"]) for h in results if h["source"] in roots and "flagged" not in h}
        known = self._known
        missing = []
        flagged = False
        for key in keys:
            judged = known.get(key)
            if judged is None or not self._current(key):
                missing.append(key)
            else:
                known.move_to_end(key)  # recently used: the last to go
                flagged = flagged or bool(judged)
        if not missing and not flagged:
            return results  # the common case: every file judged, nothing flagged in them
        fresh: dict[Key, list[SectionFinding]] = {}
        if missing:
            changes = self._changes
            remembered = self._remembered
            read = await asyncio.to_thread(
                lambda: {key: _flagged(roots[key[0]], key[1], _clean_of(remembered, key)) for key in missing}
            )
            fresh = {key: found for key, (found, _) in read.items()}
            if changes == self._changes:
                for key, scanned in read.items():
                    self._keep(key, scanned)
                self._trim()
        if not any(_found(fresh, self._known, key) for key in keys):
            return results  # the common case: nothing flagged in these files
        from sidecar.scanner.scan import finding_at

        out = []
        for hit in results:
            key = (hit["source"], hit["path"])
            found_in = _found(fresh, self._known, key)
            found = finding_at(found_in, int(hit["line_start"])) if found_in else None
            out.append({**hit, "flagged": found.as_json()} if found is not None else hit)
        return out

    def _keep(self, key: Key, scanned: tuple[list[SectionFinding], bytes | None]) -> None:
        found, data_digest = scanned
        self._known[key] = found if found else _NONE_FOUND  # one list for every clean file, not one each
        if data_digest is None:
            self._digests.pop(key, None)
        else:
            self._digests[key] = data_digest

    def _trim(self) -> None:
        while len(self._known) > self.limit:
            key, _ = self._known.popitem(last=False)
            self._digests.pop(key, None)


class _Carried(NamedTuple):
    """A write that left its file's flagged sections as they were (``FlagCache.carry``)."""

    seq: int
    section_line: int
    before: bytes
    after: bytes
    file: Path
    written: tuple[int, ...]


def _found(
    fresh: dict[Key, list[SectionFinding]], known: dict[Key, list[SectionFinding]], key: Key
) -> list[SectionFinding] | None:
    """The file's flagged sections: as read for this search, else as kept."""
    return fresh[key] if key in fresh else known.get(key)


def _stat_key(file: Path) -> tuple[int, ...] | None:
    """The file's stat key (``sidecar.write.durable.stat_key``); None when it is gone."""
    try:
        return stat_key(os.stat(file, follow_symlinks=False))
    except OSError:
        return None


def _clean_of(remembered: dict[str, tuple[Path, frozenset[str], dict[str, str]]], key: Key) -> dict[str, str]:
    """The clean files remembered in the dir of ``key``'s tier (none when it was not warmed)."""
    entry = remembered.get(key[0])
    return entry[2] if entry is not None else {}


def _flagged(root: Path, rel: str, clean: dict[str, str] | None = None) -> tuple[list[SectionFinding], bytes | None]:
    """``flagged_sections`` of the file as it is now, each section's verdict from ``VERDICTS``, and
    the digest of the bytes judged (None: no such file); none, unscanned, when ``clean`` remembers
    these bytes clean."""
    data = read_tier_file(root, rel)
    if data is None:
        return [], None
    digest = file_digest(data)
    if clean and clean.get(rel) == digest.hex():
        return [], digest
    return _judged(data), digest


async def _flagged_apart(
    apart: ApartJudge, root: Path, rel: str, clean: dict[str, str]
) -> tuple[list[SectionFinding], bytes | None]:
    """``_flagged(root, rel, clean)``, its text judged by ``apart`` (in this process when it cannot)."""
    data = await asyncio.to_thread(read_tier_file, root, rel)
    if data is None:
        return [], None
    digest = file_digest(data)
    if clean.get(rel) == digest.hex():
        return [], digest
    found = await apart.judge(data)
    if found is None:
        found = await asyncio.to_thread(_judged, data)
    return found, digest


def _judged(data: bytes) -> list[SectionFinding]:
    """The flagged sections of the text ``data`` holds, each section's verdict from ``VERDICTS``."""
    from sidecar.scanner.scan import flagged_sections

    return flagged_sections(data.decode("utf-8", errors="replace"), VERDICTS.section)


def load_clean(root: Path) -> dict[str, str]:
    """The files remembered clean in ``root``'s ``CLEAN_FILES`` (path -> digest of the bytes found
    clean); none when it is missing, unreadable, or written for another scanner. The temp files of
    writers of it that died before their rename are removed (``sweep_clean_temps``)."""
    return load_remembered(root)[0]


#: Files remembered clean in part: path -> (digest of the bytes judged, the first and last lines of
#: those bytes' heading sections found clean, as ``split_sections`` gives them).
Parts = dict[str, tuple[str, frozenset[tuple[int, int]]]]


def load_remembered(root: Path) -> tuple[dict[str, str], Parts]:
    """``load_clean(root)``, and the files whose sections were judged in part (``Parts``: what
    ``memory-sidecar search`` judges of a file too large to judge whole)."""
    sweep_clean_temps(root)
    try:
        saved = json.loads((root / CLEAN_FILES).read_text("utf-8"))
    except (OSError, ValueError):
        return {}, {}
    if (
        not isinstance(saved, dict)
        or saved.get("scanner") != scanner_digest()
        or not isinstance(saved.get("clean"), dict)
    ):
        return {}, {}  # another scanner's verdicts: none hold
    parts: Parts = {}
    kept = saved.get("parts")
    for rel, entry in (kept if isinstance(kept, dict) else {}).items():
        match entry:
            case [str(digest), [*spans]] if all(_is_span(span) for span in spans):
                parts[str(rel)] = (digest, frozenset((span[0], span[1]) for span in spans))
    return {str(k): str(v) for k, v in saved["clean"].items()}, parts


def _is_span(span: Any) -> bool:
    """Whether ``span`` is a section's lines as ``Parts`` keeps them: ``[first, last]``, whole numbers."""
    return isinstance(span, list) and len(span) == 2 and all(type(line) is int for line in span)


def sweep_clean_temps(root: Path) -> list[str]:
    """Remove the temp files ``save_clean`` left in ``root`` when its process was killed between
    writing one and renaming it (``.search-clean.json.<pid>.<thread>.tmp``), those of processes
    gone only: a live one (a sidecar, a CLI search) may be about to rename its own. Their names."""
    removed: list[str] = []
    try:
        with os.scandir(root) as listing:
            names = [entry.name for entry in listing if entry.name.startswith(f"{CLEAN_FILES}.")]
    except OSError:
        return removed
    for name in names:
        parts = name.split(".")  # "", "search-clean", "json", pid, thread, "tmp"
        if len(parts) != 6 or parts[-1] != "tmp" or not parts[3].isdigit() or _alive(int(parts[3])):
            continue
        with contextlib.suppress(OSError):
            (root / name).unlink()
            removed.append(name)
    return removed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def save_clean(root: Path, clean: dict[str, str], parts: Parts | None = None) -> None:
    """Replace ``root``'s ``CLEAN_FILES`` with ``clean`` and ``parts`` (whole, by a rename; a dir this
    user cannot write is left as it is, and its files are scanned again next time)."""
    path = root / CLEAN_FILES
    temp = path.with_name(f"{CLEAN_FILES}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)  # names memory files
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            saved = {rel: [digest, sorted(spans)] for rel, (digest, spans) in (parts or {}).items()}
            json.dump({"scanner": scanner_digest(), "clean": clean, "parts": saved}, out)
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)
