"""Memory writes for the agent: validate, cap, write durably, then queue the reindex.

``append`` is a read-modify-write on the one write thread, so concurrent appends all land exactly
once. Caps are counted in UTF-8 bytes: a per-file cap by kind (daily, evergreen, other) and a cap
on the whole tier dir; a new file also counts against the tier's cap on files. Over a hard cap
nothing is written and the error carries the file's current text and usage so the agent can
consolidate and retry with ``replace`` in the same turn; past the soft cap (80%) the write
succeeds with the same material and a warning.

The write thread's verdict on an append goes to the search's flag cache (``FlagKeeper``) when it
shows the file's flagged sections unchanged, so the search after the write marks its hits without
reading the file again.

A write that holds the write thread for ``STALL_S`` seconds (a hung disk, a file that blocks)
stalls every write behind it: from then on new writes are refused at once (503
``writes_stalled``) and the sink reports unhealthy, until it finishes.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import structlog

from sidecar.contract import MODES, TIERS, WriteAnswer, WriteRequest
from sidecar.errors import (
    CapExceeded,
    Conflict,
    Forbidden,
    InjectionSuspected,
    NoCrewTier,
    NotFound,
    TierMissing,
    WriteFailed,
    WritesStalled,
)
from sidecar.index.files import scan_tier
from sidecar.index.queue import ReindexQueue
from sidecar.retrieval.priority import hold
from sidecar.settings import Settings
from sidecar.write.dedup import (
    Candidate,
    Duplicate,
    FileLines,
    find_duplicate,
    is_judged,
    judged_lines,
    tier_query,
)
from sidecar.write.durable import durable_replace, read_file
from sidecar.write.idempotency import IdempotencyKeys
from sidecar.write.paths import open_parent_dir
from sidecar.write.scan_tail import Judged, JudgedTails, decodable, file_digest, last_section, scan_append
from sidecar.write.usage import counts_against_cap

if TYPE_CHECKING:
    from sidecar.index.tier_index import TierIndex
    from sidecar.scanner.scan import SectionFinding

__all__ = ["MODES", "TIERS", "FlagKeeper", "WriteRequest", "WriteService", "usage"]

log = structlog.get_logger("sidecar.write.service")
#: The longest a tier's counted usage is kept without a change from outside this sidecar (the file
#: watcher and the reconciles report those, and the next write rescans): a safety net.
USAGE_TTL_S = 600.0
#: A tier whose scan is slow (tens of thousands of files) is scanned again only after this many
#: times the last scan took, so the scans take at most a fiftieth of a core.
USAGE_SCAN_SHARE = 50
SLOW_WRITE_S = 1.0  # a write that took longer (from its arrival) is logged with where the time went
STALL_S = 10.0  # one write on the write thread for longer than this: writes are stalled
EVERGREEN = frozenset({"AGENT.md", "CREW.md", "pins.md"})
DEDUP_CANDIDATES = 5  # chunks of the tier an append is compared with, besides its own file
DEDUP_QUERY_WORDS = 64
DEDUP_RAREST_WORDS = 4  # of each judged line, the duplicate check searches the tier for these
_WRITTEN = "_written"  # the file's stat key after a write, from the write thread to the queue
_KEPT = "_kept"  # what the flag cache is told of a write that left the file's flagged sections as they were
CONSOLIDATE = (
    "Consolidate the current entries (merge duplicates, drop stale lines, summarise), then retry "
    'this write in the same turn with mode "replace" carrying the consolidated body.'
)


class FlagKeeper(Protocol):
    """The search's flag cache, as a write tells it (``sidecar.retrieval.flags.FlagCache.carry``)."""

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
    ) -> None: ...


def usage(used: int, cap: int, unit: str = "bytes") -> dict[str, Any]:
    percent = int(used * 100 // cap) if cap else 100
    return {"used": used, "cap": cap, "percent": percent, "text": f"{used} of {cap} {unit}, {percent}%"}


def combine(old: bytes | None, content: str, mode: str) -> bytes:
    """The file's new bytes; an append starts on a new line."""
    new = content.encode("utf-8")
    if mode == "replace" or not old:
        return new
    return old + (b"" if old.endswith(b"\n") else b"\n") + new


class WriteService:
    def __init__(
        self,
        settings: Settings,
        queue: ReindexQueue,
        *,
        embedder: object | None = None,
        flags: FlagKeeper | None = None,
    ) -> None:
        self.settings = settings
        self.queue = queue
        # Told of each write that leaves its file's flagged sections as they were; None: nobody.
        self.flags = flags
        # Writes run one at a time, in the order they came, on this thread (``_write_durably``).
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-writes")
        # Tier bytes and files: scanned at start (``warm``), kept current by each write, and scanned
        # again by the next write once a change came from outside (a shell edit the file watcher or
        # a reconcile saw: ``changed_outside``), or when older than USAGE_TTL_S; never sooner than
        # USAGE_SCAN_SHARE times the last scan's length after it. That rescan runs on a thread of its
        # own while writes go on with the usage they keep: no write walks the tier, which takes
        # seconds over tens of thousands of files.
        self._usage: dict[Path, _Usage] = {}
        self._outside: set[Path] = set()  # tiers changed from outside since their last scan began
        self._scans = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-usage-scan")
        self._scanning: set[Path] = set()
        # Held while a tier's usage is read and replaced: a write's count and a rescan's result
        # (on another thread) never overwrite each other.
        self._usage_lock = threading.Lock()
        # When the write on the write thread started (monotonic), None while it is idle.
        self._busy_since: float | None = None
        self.stall_after = STALL_S
        self.keys = IdempotencyKeys()
        # The judged lines of the files appended to lately, for the duplicate check (write thread).
        self.file_lines = FileLines()
        # The files whose last section's verdict is known from their last write (write thread): an
        # append to one is judged with the tail it joins, not the whole section.
        self.judged_tails = JudgedTails()
        self.embedder = embedder  # the in-process model, when loaded: its semantic layer judges writes too
        self.count = 0
        self.bytes = 0

    def read_root(self, tier: str) -> Path:
        """The dir a tier is read from: members read the crew dir too (it is mounted for them)."""
        s = self.settings
        if tier == "agent":
            return s.memory_dir
        if not s.has_crew:
            raise NoCrewTier("this agent has no crew tier (role solo)")
        return s.crew_dir

    def root(self, tier: str) -> Path:
        """The dir a tier is written to; only the lead writes the crew tier."""
        root = self.read_root(tier)
        if tier not in self.settings.held_tiers:
            raise Forbidden("only the crew lead writes the crew tier", code="crew_write_forbidden")
        return root

    def file_cap(self, path: str) -> int:
        s = self.settings
        if path.startswith("daily/"):
            return s.daily_cap_bytes
        if path in EVERGREEN:
            return s.evergreen_cap_bytes
        return s.topic_cap_bytes

    def stalled_for(self) -> float:
        """Seconds the write under way has held the write thread; 0.0 while it is idle."""
        since = self._busy_since
        return 0.0 if since is None else time.monotonic() - since

    def stalled(self) -> str | None:
        """Why writes are stalled now, or None when they are not."""
        held = self.stalled_for()
        if held <= self.stall_after:
            return None
        return f"the write thread has been stuck on one write for {held:.0f} s"

    async def write_once(self, req: WriteRequest, key: str) -> tuple[WriteAnswer, bool]:
        """``write`` under an idempotency key: (the answer, whether it is the first write's answer
        replayed). A retry with the key of a write that landed writes nothing."""
        return await self.keys.run(key, req, self.write)

    def check_enabled(self) -> None:
        """403 ``memory_disabled`` when this agent's memory is off (``memory_enabled`` false)."""
        if not self.settings.memory_enabled:
            raise Forbidden("memory is off for this agent (memory: false); nothing was written", code="memory_disabled")

    async def write(self, req: WriteRequest) -> WriteAnswer:
        """Write ``req`` durably and queue its reindex. An agent waits on a write until the index
        has it (its next search asks with ``after_seq``): from its arrival until then it is urgent
        work (``priority.hold``), and ordinary searches start no new CPU stage meanwhile."""
        urgent = hold()
        try:
            out = await self._write(req)
        except BaseException:
            urgent.release()
            raise
        if "duplicate_of" in out:  # nothing was written: nothing to index
            urgent.release()
        else:
            urgent.release_after(self.queue.wait_for(out["seq"], self.settings.after_seq_timeout))
        return out

    async def _write(self, req: WriteRequest) -> WriteAnswer:
        self.check_enabled()
        root = self.root(req.tier)
        why = self.stalled()
        if why is not None:
            raise WritesStalled(f"memory writes are stalled: {why}; nothing was written")
        queued = time.perf_counter()
        candidates = await self._dedup_candidates(req)
        out = await asyncio.get_running_loop().run_in_executor(
            self._thread, self._write_durably, root, req, queued, candidates
        )
        if "duplicate_of" in out:  # nothing was written: the answer points at what memory holds
            out["seq"] = self.queue.latest_seq
            log.info("write.duplicate", tier=req.tier, path=req.path, duplicate_of=out["duplicate_of"])
            return cast(WriteAnswer, out)
        # On the loop (the queue is not thread-safe), so possibly in another order than the files
        # were written, which is harmless: a write is durable before its seq exists, and the
        # reindex that seq waits for reads the file after that. The file's stat as the write left
        # it goes with it: the watcher then does not queue the same file again for this write.
        written = out.pop(_WRITTEN)
        out["seq"] = self.queue.put(req.tier, req.path, "write", written)
        kept = out.pop(_KEPT, None)
        if kept is not None and written is not None and self.flags is not None:  # before the worker applies it
            line, before, after = kept
            self.flags.carry(
                req.tier,
                req.path,
                out["seq"],
                section_line=line,
                before=before,
                after=after,
                file=root / req.path,
                written=written,
            )
        self.count += 1
        self.bytes += out["bytes"]
        log.info("write.durable", tier=req.tier, path=req.path, mode=req.mode, bytes=out["bytes"], seq=out["seq"])
        return cast(WriteAnswer, out)

    async def delete(self, tier: str, path: str, heading: str | None = None) -> dict[str, Any]:
        """Delete a whole file, or one heading section of it (with its subsections), durably and on
        the write thread; the reindex queue then journals the change. ``heading`` is the section's
        heading path ("Deploy > Rollback") or its last part; it must name exactly one section."""
        root = self.root(tier)
        why = self.stalled()
        if why is not None:
            raise WritesStalled(f"memory writes are stalled: {why}; nothing was deleted")
        out = await asyncio.get_running_loop().run_in_executor(
            self._thread, self._delete_now, tier, root, path, heading
        )
        out["seq"] = self.queue.put(tier, path, "write", out.pop(_WRITTEN, None))
        log.info("write.deleted", tier=tier, path=path, heading=heading, seq=out["seq"])
        return {"tier": tier, "path": path, **out}

    def _delete_now(self, tier: str, root: Path, path: str, heading: str | None) -> dict[str, Any]:
        self._busy_since = time.monotonic()
        try:
            old = read_file(root, path)
            if old is None:
                raise NotFound(f"no memory file {path!r}; nothing was deleted", code="file_not_found")
            if heading is None:
                _unlink_durably(root, path)
                self._usage.pop(root, None)  # counted again on the next write
                return {"deleted": "file", "bytes_removed": len(old), "bytes": 0}
            text = old.decode("utf-8", errors="replace")
            start, end, line_start, line_end = _section_span(text, heading)
            new = (text[:start] + text[end:]).encode("utf-8")
            written = None
            self.queue.note_writing(tier, path)
            try:
                written = durable_replace(root, path, new, old)
            finally:
                self.queue.note_written(tier, path, written)
            self._count(root, path, old, new)
            return {
                "deleted": "section",
                "heading": heading,
                "line_start": line_start,
                "line_end": line_end,
                "bytes_removed": len(old) - len(new),
                "bytes": len(new),
                _WRITTEN: written,
            }
        finally:
            self._busy_since = None

    async def check_duplicate(self, tier: str, path: str | None, content: str) -> Duplicate | None:
        """Where ``content`` already is in the tier (``memory.check_duplicate``), or None."""
        threshold = self.settings.dedup_threshold or 0.9
        if not is_judged(content):  # no line long enough to judge: nothing to look for
            return None
        candidates = await self._tier_candidates(tier, content, besides=path)
        if path is not None:
            old = await asyncio.get_running_loop().run_in_executor(self._thread, read_file, self.root(tier), path)
            if old:
                candidates.insert(0, Candidate(path, 1, old.decode("utf-8", errors="replace")))
        return find_duplicate(content, candidates, threshold)

    async def _dedup_candidates(self, req: WriteRequest) -> list[Candidate] | None:
        """What an append is compared with besides its own file (None: this write is not checked, as
        one with no line long enough to judge never is a duplicate)."""
        if req.mode != "append" or req.force or self.settings.dedup_threshold <= 0 or not is_judged(req.content):
            return None
        return await self._tier_candidates(req.tier, req.content, besides=req.path)

    async def _tier_candidates(self, tier: str, content: str, besides: str | None = None) -> list[Candidate]:
        """The chunks the tier's BM25 ranks first for ``content``, but the file ``besides``'s: that
        file is judged as it is now, and its chunks in the index may be a write or a delete behind (a
        file deleted and written again at once would be a duplicate of itself). None when the index
        cannot answer (the check is a courtesy: it never holds a write back)."""
        index = self.queue.tiers.get(tier)
        query = None if index is None else self._dedup_query(index.index, content)
        if index is None or not query:
            return []
        try:
            hits = await index.search(query, DEDUP_CANDIDATES)
        except Exception as exc:  # an index that cannot answer: only the file itself is compared
            log.info("write.dedup_search_failed", tier=tier, error=type(exc).__name__)
            return []
        return [Candidate(h.path, h.line_start, h.text) for h in hits if h.path != besides]

    def _dedup_query(self, index: TierIndex, content: str) -> str:
        """What the duplicate check searches the tier for: each judged line's rarest words the
        tier holds (``dedup.tier_query``), or, while the index cannot count its words, the
        content's first words. Empty: no line can be in the tier, nothing to search."""
        lines = judged_lines(content)
        every = list(dict.fromkeys(w for words in lines for w in words))
        counts = index.postings_counts(every) if every else None
        if counts is None:
            return " ".join(content.split()[:DEDUP_QUERY_WORDS])
        threshold = self.settings.dedup_threshold or 0.9
        picked = tier_query(lines, dict(zip(every, counts, strict=True)), threshold, DEDUP_RAREST_WORDS)
        return " ".join(picked[:DEDUP_QUERY_WORDS])

    def close(self) -> None:
        """Wait for the writes under way and stop the write thread."""
        self._thread.shutdown(wait=True)
        self._scans.shutdown(wait=False, cancel_futures=True)

    def recount(self, tier: str) -> None:
        """Forget the tier's counted usage (a consolidation moved its files): the next write counts
        it afresh instead of refusing room the run freed."""
        self._usage.pop(self.read_root(tier), None)

    def warm(self) -> None:
        """Make ready, on the write thread, before any write needs it, what the first write would
        otherwise wait for: the usage of the tiers this sidecar writes (a walk of each), and the
        injection scanner (its rules compiled, and with the in-process model its semantic layer,
        whose prototypes are embedded once: seconds of CPU on a loaded host)."""
        for tier in self.settings.held_tiers:
            self._thread.submit(self._tier_usage, self.root(tier))
        if self.settings.memory_enabled:  # memory off: no write will come to be judged
            self._thread.submit(_warm_scanner, self.embedder)

    def _write_durably(
        self, root: Path, req: WriteRequest, queued: float, candidates: list[Candidate] | None = None
    ) -> dict[str, Any]:
        """The write, on the one write thread: one write at a time, as per-file read-modify-write
        and the tier-wide cap both need, first come first served. The injection scan runs here too
        (a hop to another thread costs more CPU than the scan of a typical entry).

        The serial section is the file work and its fsyncs only. It used to be an asyncio lock held
        until the event loop took the answer back, and under a search load that wait for the loop
        was most of it."""
        self._busy_since = time.monotonic()
        try:
            return self._write_now(root, req, queued, candidates)
        finally:
            self._busy_since = None

    def _write_now(
        self, root: Path, req: WriteRequest, queued: float, candidates: list[Candidate] | None
    ) -> dict[str, Any]:
        started = time.perf_counter()
        if not root.is_dir():
            raise TierMissing(f"the {req.tier} tier dir {root} is missing; nothing was written")
        old = read_file(root, req.path)
        if candidates is not None:  # an append: the file as it is now, then the tier's best matches
            here = [Candidate(req.path, 1, "", self.file_lines.judged((str(root), req.path), old))] if old else []
            found = find_duplicate(req.content, here + candidates, self.settings.dedup_threshold)
            if found is not None:
                size = len(old or b"")
                return {
                    "tier": req.tier,
                    "path": req.path,
                    "bytes": size,
                    "usage": usage(size, self.file_cap(req.path)),
                    "duplicate_of": found.to_json(),
                }
        new = combine(old, req.content, req.mode)
        warning = self._check_caps(root, req, old, new)
        flagged, kept = self._scan(root, req, old, new)  # bounded, but up to a few ms on big files
        checked = time.perf_counter()
        written = None
        self.queue.note_writing(req.tier, req.path)  # the watcher may see the rename before the loop queues the write
        try:
            written = durable_replace(root, req.path, new, old)
        finally:
            self.queue.note_written(req.tier, req.path, written)
        done = time.perf_counter()
        if done - queued > SLOW_WRITE_S:  # where a slow write spent its time, for whoever looks
            log.warning(
                "write.slow",
                path=req.path,
                ms=round((done - queued) * 1000, 1),
                queued_ms=round((started - queued) * 1000, 1),
                checks_ms=round((checked - started) * 1000, 1),
                durable_ms=round((done - checked) * 1000, 1),
            )
        self._count(root, req.path, old, new)
        out: dict[str, Any] = {"tier": req.tier, "path": req.path, "bytes": len(new), _WRITTEN: written}
        if kept is not None:
            out[_KEPT] = kept
            if written is not None:
                # The index reads the file now, while the loop answers: the change is searchable a
                # trip through the loop sooner (the write's ``put`` takes it up). For a write that
                # left every flagged section as it was (the flag cache keeps its verdicts through
                # the change). A search that meets the new text before the cache hears of the write
                # reads the file: the index tells the cache which bytes it holds before its commit.
                self.queue.apply_early(req.tier, req.path, written)
        out["usage"] = usage(len(new), self.file_cap(req.path))
        if warning is not None:
            out.update(warning)
        if flagged is not None:
            out["flagged"] = flagged
            notice = (
                f"the section {flagged['heading'] or '(before the first heading)'!r} (lines "
                f"{flagged['line_start']}-{flagged['line_end']}) matches prompt-injection rule "
                f"{flagged['category']} ({flagged['pattern']}): it was saved, but it is withheld from the memory block"
            )
            out["warning"] = (
                f"{out['warning']} Also, {notice}." if "warning" in out else notice[0].upper() + notice[1:] + "."
            )
        return out

    def _refuses(self, tier: str) -> bool:
        return self.settings.agent_refuse_injection if tier == "agent" else self.settings.crew_refuse_injection

    def _scan(
        self, root: Path, req: WriteRequest, old: bytes | None, new: bytes
    ) -> tuple[dict[str, Any] | None, tuple[int, bytes, bytes] | None]:
        """The scanner's verdict on the sections the write changes: raise InjectionSuspected for a
        ``block`` finding (unless this tier's refusal is off), else what to flag in the answer; and,
        for a clean append that leaves the file's flagged sections as they were, what the flag
        cache is told (the first line of the section it grew, the digests before and after)."""
        key = (str(root), req.path)
        remembered = self.judged_tails.known(key, old) if old else None
        known, before = remembered if remembered is not None else (None, None)
        hit, judged = _judge_write(old, new, self.embedder, known)
        after = file_digest(new) if judged is not None else None
        if hit is None or hit.finding.level != "block" or not self._refuses(req.tier):
            self.judged_tails.judged(key, new, judged, after)  # written (a refused write leaves the file as known)
        if hit is None:
            if remembered is None and old and judged is not None and new.startswith(old):
                # The first append since start (or since an edit by hand): every section it changed
                # was judged whole, so where the file's last section started is all that is wanted.
                known, before = Judged(last_section(old.decode("utf-8", errors="replace")), None), file_digest(old)
            if before is None or after is None or known is None or judged is None:
                return None, None
            return None, _kept_flags(old, new, known, judged, before=before, after=after)
        found = hit.finding
        flagged = hit.as_json()
        if found.level == "block" and self._refuses(req.tier):
            raise InjectionSuspected(
                f"refused: the content matches prompt-injection rule {found.category} ({found.pattern}) in the "
                f"section {hit.heading or '(before the first heading)'!r}; nothing was written",
                category=found.category,
                pattern=found.pattern,
                section={"heading": hit.heading, "line_start": hit.line_start, "line_end": hit.line_end},
            )
        return flagged, None

    def changed_outside(self, tier: str) -> None:
        """A file of ``tier`` changed, not by this sidecar's writes: its next write rescans it."""
        if tier in self.settings.held_tiers:
            self._outside.add(self.read_root(tier))

    def _tier_usage(self, root: Path) -> _Usage:
        cached = self._usage.get(root)
        if cached is None:
            self._outside.discard(root)
            cached = self._usage[root] = _scan_usage(root)
        elif root not in self._scanning:
            age = time.monotonic() - cached.at
            if (root in self._outside or age > USAGE_TTL_S) and age > USAGE_SCAN_SHARE * cached.cost:
                self._outside.discard(root)  # a change from outside during the walk marks it again
                self._scanning.add(root)
                self._scans.submit(self._rescan, root)
        return cached

    def _count(self, root: Path, path: str, old: bytes | None, new: bytes) -> None:
        """A write's change to its tier's usage, applied to the usage as it is now: a rescan that
        finished while the write was made is kept, the write counted on it."""
        if not counts_against_cap(path):
            return
        with self._usage_lock:
            known = self._usage.get(root)  # None: recounted since (``recount``), the next write scans
            if known is not None:
                self._usage[root] = known.after(old, new)

    def _rescan(self, root: Path) -> None:
        """The usage scanned afresh (on its own thread). A write that lands during the walk may
        be counted twice or not at all until the next scan: the caps are a budget, not a ledger."""
        try:
            fresh = _scan_usage(root)
            with self._usage_lock:
                self._usage[root] = fresh
        finally:
            self._scanning.discard(root)

    def _check_caps(self, root: Path, req: WriteRequest, old: bytes | None, new: bytes) -> dict[str, Any] | None:
        """Raise CapExceeded over a hard cap; return the soft-cap warning material, if any."""
        old_size = len(old or b"")
        # An archived note is bounded by consolidation's own archive cap, not the tier's.
        growth = len(new) - old_size if counts_against_cap(req.path) else 0
        tier = self._tier_usage(root)
        if old is None and tier.files >= self.settings.tier_max_files:
            cap = self.settings.tier_max_files
            raise CapExceeded(
                f"files cap exceeded: the tier already holds {tier.files} files of {cap}; nothing was "
                "written. Add to an existing file, or merge files and delete the rest.",
                cap_scope="files",
                current_entries="",
                usage=usage(tier.files, cap, "files"),
                would_be=tier.files + 1,
                largest_files=_largest_files(root),
            )
        tier_before = tier.size
        checks = [
            ("file", old_size, len(new), self.file_cap(req.path)),
            ("tier", tier_before, tier_before + growth, self.settings.tier_cap_bytes),
        ]
        for scope, before, after, cap in checks:
            if after > cap and scope == "tier":
                # The space is held by other files too: name the largest, which is where room is made.
                largest = _largest_files(root)
                named = ", ".join(f"{f['path']} ({f['bytes']:,} bytes)" for f in largest)
                raise CapExceeded(
                    f"tier cap exceeded: this {req.mode} would make the tier {after} bytes of {cap}; nothing "
                    f"was written. The largest files are {named}: read one (memory read), then write it back "
                    'consolidated with mode "replace" (or delete what is stale), then retry this write.',
                    cap_scope=scope,
                    current_entries=(old or b"").decode("utf-8", errors="replace"),
                    usage=usage(before, cap),
                    would_be=after,
                    largest_files=largest,
                )
            if after > cap:
                raise CapExceeded(
                    f"{scope} cap exceeded: this {req.mode} would make {after} bytes of {cap}; nothing was "
                    "written. " + CONSOLIDATE,
                    cap_scope=scope,
                    current_entries=(old or b"").decode("utf-8", errors="replace"),
                    usage=usage(before, cap),
                    would_be=after,
                )
        for scope, _, used, cap in checks:
            if used >= cap * self.settings.soft_cap_ratio:
                return {
                    "warning": f"{scope} is at {usage(used, cap)['text']}, past the soft cap. " + CONSOLIDATE,
                    "current_entries": new.decode("utf-8", errors="replace"),
                    "usage": usage(used, cap),
                }
        return None


def _largest_files(root: Path, count: int = 5) -> list[dict[str, Any]]:
    """The tier's ``count`` largest files that count against its cap, largest first (read only
    when a write is refused, to say where room can be made)."""
    files = [(f.size, rel) for rel, f in scan_tier(root).items() if counts_against_cap(rel)]
    return [{"path": rel, "bytes": size} for size, rel in sorted(files, key=lambda x: (-x[0], x[1]))[:count]]


def _scan_usage(root: Path) -> _Usage:
    started = time.monotonic()
    files = {rel: f for rel, f in scan_tier(root).items() if counts_against_cap(rel)}
    done = time.monotonic()
    return _Usage(sum(f.size for f in files.values()), len(files), done, done - started)


class _Usage(NamedTuple):
    """A tier's .md bytes and files, as of ``at`` (monotonic)."""

    size: int
    files: int
    at: float
    cost: float  # how long the scan took (s)

    def after(self, old: bytes | None, new: bytes) -> _Usage:
        """The usage once ``old`` (None: no such file) is replaced by ``new``."""
        return _Usage(self.size - len(old or b"") + len(new), self.files + (old is None), self.at, self.cost)


def _unlink_durably(root: Path, path: str) -> None:
    """Remove the file (never following a link) and fsync its directory before answering."""
    name = path.rsplit("/", 1)[-1]
    try:
        with open_parent_dir(root, path, create=False) as dir_fd:
            os.unlink(name, dir_fd=dir_fd)
            os.fsync(dir_fd)
    except FileNotFoundError:
        raise NotFound(f"no memory file {path!r}; nothing was deleted", code="file_not_found") from None
    except OSError as exc:
        raise WriteFailed(f"could not delete {path!r}: {exc.strerror}", code="delete_failed") from None


def _section_span(text: str, heading: str) -> tuple[int, int, int, int]:
    """(start, end) characters and (first, last) lines of the one section ``heading`` names,
    subsections included; 404 when none does, 409 when several do."""
    from sidecar.scanner.sections import split_sections

    sections = split_sections(text)
    wanted = heading.strip()
    found = [
        i
        for i, s in enumerate(sections)
        if s.heading and (s.heading == wanted or s.heading.rsplit(" > ", 1)[-1] == wanted)
    ]
    if not found:
        raise NotFound(f"no section headed {heading!r}; nothing was deleted", code="section_not_found")
    if len(found) > 1:
        spans = ", ".join(
            f"{sections[i].heading} (lines {sections[i].line_start}-{sections[i].line_end})" for i in found
        )
        raise Conflict(
            f"several sections are headed {heading!r}: {spans}; name it by its heading path", code="ambiguous_heading"
        )
    first = sections[found[0]]
    last = first
    for section in sections[found[0] + 1 :]:
        if not section.heading.startswith(first.heading + " > "):
            break
        last = section
    return first.start, last.end, first.line_start, last.line_end


def _warm_scanner(embedder: object | None) -> None:
    """Load what ``_judge_write`` uses: the scanner's rules and, over the in-process model, its
    semantic layer (which needs numpy: a BM25-only sidecar does not load it before a write)."""
    from sidecar.scanner.in_process import semantic_layer
    from sidecar.scanner.scan import scan_write

    scan_write(None, "# warm\n\nnothing to see", semantic=semantic_layer(embedder))


def _scan_write(old: bytes | None, new: bytes, embedder: object | None = None) -> SectionFinding | None:
    """The scanner's verdict on the write of ``new`` over ``old``, every section it changed judged whole."""
    return _judge_write(old, new, embedder, None)[0]


def _kept_flags(
    old: bytes | None, new: bytes, known: Judged, judged: Judged, *, before: bytes, after: bytes
) -> tuple[int, bytes, bytes] | None:
    """What the flag cache is told of a clean append (the scanner found nothing in the section it
    grew), when every section's verdict as the search judges it (``section_verdict``: its own
    text, and its seam with the section before it) is as it was: the append opened no section,
    and the section it grew is the file's first or reaches ``SEAM_CHARS`` past its start before
    the append (so its seam with the section before is unchanged). None otherwise."""
    from sidecar.scanner.scan import SEAM_CHARS  # loaded already: the write was judged with it

    if old is None or not new.startswith(old) or judged.last.start != known.last.start:
        return None
    start = known.last.start
    if start and len(old.decode("utf-8", errors="replace")) - start < SEAM_CHARS:
        return None
    return known.last.line, before, after


def _judge_write(
    old: bytes | None, new: bytes, embedder: object | None, known: Judged | None
) -> tuple[SectionFinding | None, Judged | None]:
    """The scanner's verdict on the write of ``new`` over ``old``, and what is then known of the
    file's last section (None: unknown). An append to a file whose last section's verdict is
    ``known`` is judged on the tail it joins (``scan_tail``); any other write as before, its last
    section's verdict then taken (an append or a new file; a replace leaves it unknown)."""
    # The scanner compiles its rules on import (~10 ms): the first write pays it, not the start-up.
    from sidecar.scanner.in_process import semantic_layer
    from sidecar.scanner.scan import scan_write, verdict

    semantic = semantic_layer(embedder)  # None for a BM25-only sidecar, numpy not imported
    before = None if old is None else old.decode("utf-8", errors="replace")
    after = new.decode("utf-8", errors="replace")
    if semantic is not None and semantic.has_head:  # the learned head reads a long section's start
        return scan_write(before, after, semantic=semantic), None
    if before is not None and known is not None:
        windowed = scan_append(before, after, known, scan_write)
        if windowed is not None:
            return windowed
    found = scan_write(before, after, semantic=semantic)
    if before is not None and (after == before or not after.startswith(before)):
        return found, None
    last = last_section(after)
    section = after[last.start :]
    if decodable(section):  # the next append to it is judged whole: its verdict would not be read
        return found, Judged(last, None, decodable=True)
    return found, Judged(last, None if found is None else verdict(section))
