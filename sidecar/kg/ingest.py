"""Feeding the graph: memory files as the reindex queue applies their changes (and all of them
once at start, skipping those already read), and journal entries as they are appended.

A start-up backfill over many files reads their facts in a child process (``_Extractor``): the rules
are pure Python, some tens of milliseconds per file, and in a thread they would hold the GIL that
the event loop needs for every search, so a search meeting one file's extraction waited for it.

A file is read again only when its bytes changed (a digest per file), and one that only grew (an
append: its bytes at its last reading start its bytes now) only from where that reading stopped:
the rules read its new lines, with the headings and code fence in force there. A file gone from
the tier (deleted in a shell or an editor, or while the sidecar was down) ends the facts read from
it, at the time its removal is seen, unless another place still states them: then they are moved there
(``_still_stated``). A journal entry's facts start at the entry's time unless its text names a
date. With a chat model (``llm``), its checked facts join the rules' (``kg.llm``); a fact both
find is kept once.

A changed file may wait ``linger_s`` before the graph reads it (the server's ``LINGER_S``): appends
to it in that time are then read once, in one reading of the lines they added. Whoever needs the
graph as the files are now reads the waiting files first (``read_pending``: ``follow`` does, and so
every graph question), and so does the close.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import os
import pickle
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import structlog

from sidecar.errors import SidecarError
from sidecar.index.files import read_tier_file, scan_tier
from sidecar.kg.facts import Extracted, Position
from sidecar.kg.graph import KnowledgeGraph, new_facts
from sidecar.kg.llm import LlmExtractor
from sidecar.kg.model import Scope, iso, now_iso, parse_when
from sidecar.kg.sqlite_kg import JournalFeed
from sidecar.tasks import Child
from sidecar.write.durable import read_file

__all__ = [
    "ARCHIVE_ROOT",
    "BACKFILL_REST",
    "CLAIMED_DIR",
    "EXTRACTOR_FROM",
    "INLINE_CHARS",
    "MOVE_S",
    "QUIET_PATIENCE",
    "QUIET_S",
    "QUIET_SHARE",
    "SUPERSEDE_S",
    "Ingest",
]

log = structlog.get_logger("sidecar.kg")
_CURSOR = "journal"
#: Seconds the start-up backfill rests per second of work, so searches and writes come first: a
#: first start over a large dir reads every file into the graph at a quarter of a core.
BACKFILL_REST = 3.0
#: A backfill over at least this many files reads their facts in a child process; fewer are read in
#: a thread (a child costs ~50 ms and ~12 MB to start, and a few files hold the loop only briefly).
EXTRACTOR_FROM = 50
#: While the child serves, the backfill also waits for the sidecar to be quiet before the next file:
#: it goes on resting in steps of ``QUIET_S`` while the sidecar's own CPU over the last rest was above
#: ``QUIET_SHARE`` of a core (searches, writes, the rest of start-up), at most ``QUIET_PATIENCE`` s.
QUIET_S = 0.25
QUIET_SHARE = 0.2
QUIET_PATIENCE = 10.0
#: Appended lines of at most this many characters in all are read on the event loop (a few hundred
#: microseconds at most); longer ones in a thread, as a whole file is.
INLINE_CHARS = 1_000
#: Files whose reading is remembered (``_Read``), the most recently read: an append to one of them
#: is read from where its last reading stopped.
READS_KEPT = 512


class Ingest:
    """Reads tier files and journal entries into ``graph``; ``scopes`` says whose graph each tier feeds."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        roots: dict[str, Path],
        scopes: dict[str, Scope],
        journal: JournalFeed | None,
        llm: LlmExtractor | None = None,
        *,
        linger_s: float = 0.0,
    ) -> None:
        self.graph = graph
        self.llm = llm
        self.roots = roots
        self.scopes = scopes
        self.journal = journal
        self._following = asyncio.Lock()
        self._reading = asyncio.Lock()  # one file at a time, and none while closing
        self._closed = False
        self._extractor: _Extractor | None = None  # the child process, while a large backfill runs
        self._extracted = 0  # files whose facts were read (not skipped as unchanged)
        self.lines_read = 0  # lines of tier files the rules read
        # Where the last reading of each file stopped (the newest ``READS_KEPT``): a file that only
        # grew since is read from there on, not from its first line.
        self._reads: OrderedDict[tuple[str, str], _Read] = OrderedDict()
        self._unread: set[tuple[str, str]] = set()  # changed files whose reading failed: read again
        # Changed files waiting ``linger_s`` before their reading (in the order they changed first).
        self.linger_s = linger_s
        self._pending: dict[tuple[str, str], int] = {}  # the file -> its latest change (a count)
        self._changes = 0
        self._pending_task: asyncio.Task[None] | None = None
        self._hurry = asyncio.Event()  # set at the close: no more lingering
        # Facts a file's removal ended, until a delete through the API asks for them (``ended_file``):
        # the reindex queue may see the removal before the route asks.
        self._gone: OrderedDict[tuple[str, str], int] = OrderedDict()
        # When the graph last ended a file's facts (a delete, a removal), by file: a file written
        # again states its facts from then at the earliest. Its modification time comes from the
        # kernel's coarse clock, which runs a few ms behind the one that dates the end, so a file
        # written again within that grain would otherwise date its facts before their end and find
        # them held then, not current.
        self._ended_at: OrderedDict[tuple[str, str], str] = OrderedDict()
        # Removals that ended facts, by the removed file's digest: (when, tier, path, end, ids). The
        # same bytes seen again soon (``MOVE_S``) are a move seen in two steps: the facts reopen.
        self._removals: OrderedDict[str, tuple[float, str, str, str, list[int]]] = OrderedDict()
        # Journal entries read lately: (when read, scope, time, the facts they state), for ``_superseded``.
        self._read_entries: OrderedDict[str, tuple[float, Scope, str, frozenset[int]]] = OrderedDict()

    @property
    def files_read(self) -> int:
        """Files whose facts were read since start (not those skipped as unchanged)."""
        return self._extracted

    async def file(self, tier: str, path: str) -> int:
        """Read one tier file into the graph if its bytes changed; the number of facts it states."""
        async with self._reading:
            return 0 if self._closed else await self._file(tier, path)

    async def _file(self, tier: str, path: str) -> int:
        root = self.roots.get(tier)
        if root is None or not path.endswith(".md"):
            return 0
        # The bytes and the digest the graph recorded for them, in one trip off the loop.
        read, recorded = await self.graph.store.digest_with(tier, path, lambda: _read_with_mtime(root, path))
        if read is None:
            return 0
        data, mtime = read
        mtime = max(mtime, self._ended_at.pop((tier, path), mtime))
        digest = hashlib.blake2b(data, digest_size=16).hexdigest()
        self._gone.pop((tier, path), None)
        removal = self._removals.pop(digest, None)
        if removal is not None and removal[1] == tier and time.monotonic() - removal[0] <= MOVE_S:
            _, _, before, end, ids = removal
            moved = (f"file:{tier}:{before}#", f"file:{tier}:{path}#")
            reopened = await self.graph.store.reopen(self.scopes[tier], ids, end, moved)
            log.info("kg.file_moved", tier=tier, path=path, moved_from=before, facts_reopened=reopened)
            recorded = await self.graph.store.file_digest(tier, path)  # as the reopening left it
        if recorded == digest:
            return 0
        text = data.decode("utf-8", errors="replace")
        self._extracted += 1
        lines = text.splitlines()
        after = self._grown_from(tier, path, data, lines, recorded)
        if after is None:
            found, position = await self._extract(text, path)
            found = await self._with_llm(found, text, path)
        else:
            found, position = await self._extract_after(lines, path, after)
        self.lines_read += position.lines - (after.resumes_at if after is not None else 0)
        facts, aliases = new_facts(found, f"file:{tier}:{path}", mtime)
        await self.graph.add(
            self.scopes[tier], facts, aliases, file=(tier, path, digest), grown=after is not None
        )  # fmt: skip
        self._reads[(tier, path)] = _Read(len(data), digest, position)
        self._reads.move_to_end((tier, path))
        while len(self._reads) > READS_KEPT:
            self._reads.popitem(last=False)
        return len(facts)

    def _grown_from(self, tier: str, path: str, data: bytes, lines: list[str], recorded: str | None) -> Position | None:
        """Where the last reading of the file stopped, when the file only grew since and the graph
        holds that reading: its bytes then are the start of ``data`` and their lines ``lines``' first
        ones, unchanged (the last one not run on). None otherwise (and with a chat model, which
        reads whole files): the file is read whole."""
        read = self._reads.get((tier, path))
        if read is None or self.llm is not None or recorded != read.digest:
            return None
        at = read.position
        if len(data) <= read.size or not 0 < at.lines <= len(lines) or lines[at.lines - 1] != at.last:
            return None
        return at if hashlib.blake2b(data[: read.size], digest_size=16).hexdigest() == read.digest else None

    async def _extract_after(self, lines: list[str], path: str, after: Position) -> tuple[list[Extracted], Position]:
        """The facts of the lines after ``after``: on the loop when they are short, else in a thread."""
        from sidecar.kg.extract import extract_lines  # the rules compile at the first reading

        if sum(len(line) for line in lines[after.resumes_at :]) <= INLINE_CHARS:
            return extract_lines(lines, path, after=after)
        return await asyncio.to_thread(extract_lines, lines, path, after=after)

    async def changed(self, tier: str, path: str, seq: int, kind: str) -> None:
        """The reindex queue's hook: a file it added or updated is read again. One whose reading
        fails (a full disk) is kept for ``reread``, and the failure goes to the queue's log."""
        if kind == "removed":
            self._pending.pop((tier, path), None)
            await self.removed(tier, path)
            return
        if self.linger_s > 0 and not self._closed:
            self._changes += 1
            self._pending[(tier, path)] = self._changes
            if self._pending_task is None or self._pending_task.done():
                self._pending_task = asyncio.create_task(self._read_pending_later(), name="kg-pending")
            return
        await self._read_changed(tier, path)

    async def _read_changed(self, tier: str, path: str) -> None:
        try:
            await self.file(tier, path)
        except Exception:
            self._unread.add((tier, path))
            raise
        self._unread.discard((tier, path))

    async def read_pending(self) -> None:
        """Read now the changed files waiting for their linger (a failure is logged, and the file
        read again later with ``reread``)."""
        for key, change in list(self._pending.items()):
            try:
                await self._read_changed(*key)
            except Exception:
                log.exception("kg.read_failed", tier=key[0], path=key[1])
            if self._pending.get(key) == change:  # not changed again since: read as it is now
                del self._pending[key]

    async def _read_pending_later(self) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.linger_s):
                await self._hurry.wait()
        await self.read_pending()

    async def ended_file(self, tier: str, path: str, *, section: bool = False) -> int:
        """A file deleted (with ``section``, one heading section of it): the facts read from it that
        it no longer states end now. The number of facts ended."""
        scope, root = self.scopes.get(tier), self.roots.get(tier)
        if scope is None or root is None:
            return 0
        left = None
        if section:
            data = await asyncio.to_thread(read_tier_file, root, path)
            left = (data or b"").decode("utf-8", errors="replace")
        async with self._reading:
            source, end = f"file:{tier}:{path}#", now_iso()
            ended = len(await self.graph.store.end_sourced(scope, source, end, prefix=True, unless_in=left))
            self._ended((tier, path), end)
            return ended + (0 if section else self._gone.pop((tier, path), 0))

    def _ended(self, key: tuple[str, str], end: str) -> None:
        self._ended_at[key] = max(end, self._ended_at.pop(key, end))
        while len(self._ended_at) > _GONE_KEPT:
            self._ended_at.popitem(last=False)

    async def removed(self, tier: str, path: str) -> int:
        """A file gone from the tier, however it went (a delete in a shell, an editor, a move): the
        facts read from it end now, except those another place still states (``_still_stated``):
        those stay current, read from there. The number of facts ended."""
        scope, root = self.scopes.get(tier), self.roots.get(tier)
        if scope is None or root is None or not path.endswith(".md"):
            return 0
        async with self._reading:
            if self._closed or await asyncio.to_thread(read_tier_file, root, path) is not None:
                return 0  # back already: its next reading says what it states
            self._reads.pop((tier, path), None)
            places = await asyncio.to_thread(_still_stated, root, path)
            source, end = f"file:{tier}:{path}#", now_iso()
            digest = await self.graph.store.file_digest(tier, path)
            ids = await self.graph.store.end_sourced(scope, source, end, prefix=True, moved=_mover(tier, places))
            ended = len(ids)
            self._ended((tier, path), end)
            if ended:
                self._gone[(tier, path)] = self._gone.pop((tier, path), 0) + ended
                if digest is not None:
                    self._removals[digest] = (time.monotonic(), tier, path, end, ids)
                for kept in (self._gone, self._removals):
                    while len(kept) > _GONE_KEPT:
                        kept.popitem(last=False)
            log.info(
                "kg.file_removed", tier=tier, path=path, facts_ended=ended, archived=sorted({p for p, _ in places})
            )
            return ended

    async def forgotten(self, scope: Scope, entry_ids: list[str]) -> int:
        """Memories forgotten: the facts read from them end now (the caller follows the journal before
        it forgets, so every fact they stated has been read). The number of facts ended."""
        ended = 0
        for entry_id in entry_ids:
            ended += len(await self.graph.store.end_sourced(scope, f"journal:{entry_id}", now_iso()))
        return ended

    async def reread(self) -> int:
        """Read again the changed files whose reading failed; the number of facts they state."""
        total = 0
        for tier, path in sorted(self._unread):
            total += await self.file(tier, path)  # a failure leaves it (and the rest) for next time
            self._unread.discard((tier, path))
        return total

    async def backfill(self) -> int:
        """Every tier file not yet read as it is now, paced (``BACKFILL_REST``, and with the child
        serving, the sidecar quiet: ``QUIET_SHARE``); the number of facts they state."""
        total = 0
        try:
            for tier, root in self.roots.items():
                scan = await asyncio.to_thread(scan_tier, root)
                if len(scan) >= EXTRACTOR_FROM and self._extractor is None:
                    self._extractor = _Extractor()
                for path in sorted(scan):
                    started, extracted = time.perf_counter(), self._extracted
                    total += await self.file(tier, path)
                    rest = (time.perf_counter() - started) * BACKFILL_REST
                    if self._extractor is not None and self._extracted > extracted:
                        await _until_quiet(rest)
                    else:
                        await asyncio.sleep(rest)
                # Files read before and gone since (removed while the sidecar was down): after the
                # files that are here were read, so a moved one is found at its new path.
                for path in sorted(set(await self.graph.store.files(tier)) - set(scan)):
                    await self.removed(tier, path)
        finally:
            extractor, self._extractor = self._extractor, None
            if extractor is not None:
                await extractor.aclose()
        return total

    async def _extract(self, text: str, path: str) -> tuple[list[Extracted], Position]:
        """The rules' facts in ``text`` and where their reading stopped: in the child process while
        one serves, else in a thread."""
        if self._extractor is not None:
            found = await self._extractor.extract(text, path)
            if found is not None:
                return found
        return await asyncio.to_thread(extract_text, text, path)

    async def follow(self) -> int:
        """Read the journal entries appended since the last call; the number of facts they state.
        Then end the facts of the entries the newest ones superseded (``_superseded``)."""
        await self.read_pending()  # the files as they are now first
        if self.journal is None:
            return 0
        from sidecar.kg.extract import extract

        total = 0
        async with self._following:
            while not self._closed:
                after = await self.graph.store.cursor(_CURSOR)
                rows = await self.journal.read(after)
                if not rows:
                    break
                for seq, entry_id, workspace, crew, ts, entry_type, summary in rows:
                    # Off the event loop: a long entry (an ingested chunk) takes the rules a while.
                    rules = await asyncio.to_thread(extract, summary)
                    found = await self._with_llm(rules, summary, f"journal/{entry_type}")
                    when = parse_when(ts, "ts")
                    facts, aliases = new_facts(found, f"journal:{entry_id}", when, f"journal/{entry_type}")
                    stated = await self.graph.add(Scope(workspace, crew), facts, aliases)
                    self._read_entries[entry_id] = (
                        time.monotonic(), Scope(workspace, crew), when, frozenset(f.id for f in stated)
                    )  # fmt: skip
                    total += len(facts)
                    last = seq
                await self.graph.store.set_cursor(_CURSOR, last)
            if not self._closed:
                await self._superseded()
        return total

    async def _superseded(self) -> None:
        """End the facts read from the entries that entries read lately (``SUPERSEDE_S``) superseded
        (a changed value an ingest or a topic key stored over them), at the newer one's time. A fact
        the newer one states too stays, read from it. The supersession may follow the newer entry's
        append by a moment (the ingest marks it after storing), so each is looked for a while."""
        assert self.journal is not None
        now = time.monotonic()
        while self._read_entries and now - next(iter(self._read_entries.values()))[0] > SUPERSEDE_S:
            self._read_entries.popitem(last=False)
        if not self._read_entries:
            return
        for old, new in await self.journal.superseded(list(self._read_entries)):
            _, scope, when, stated = self._read_entries[new]

            def moved(
                fact_id: int, sentence: str, source: str, new: str = new, stated: frozenset[int] = stated
            ) -> str | None:
                return f"journal:{new}" if fact_id in stated else None

            ended = await self.graph.store.end_sourced(scope, f"journal:{old}", when, moved=moved)
            if ended:
                log.info("kg.superseded", entry=old, by=new, facts_ended=len(ended))

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
        """Read the changed files still waiting, wait for a file being read, then read no more (a
        later change is read at the next start)."""
        self._hurry.set()  # a reading waiting for its linger starts now
        task, self._pending_task = self._pending_task, None
        if task is not None:
            await task
        await self.read_pending()
        async with self._reading, self._following:
            self._closed = True
            if self.journal is not None:
                await self.journal.aclose()


class _Read(NamedTuple):
    """A file as its last reading saw it: its size and digest, and where the rules stopped."""

    size: int
    digest: str
    position: Position


#: Removals whose ended facts are kept (the newest), for a delete through the API to count and for
#: a move seen in two steps.
_GONE_KEPT = 256
#: Seconds within which a file with the bytes of one removed is taken for it, moved: the facts its
#: removal ended are current again, read from the new path (the watcher may see a ``mv`` as a
#: removal, then, in a later batch, a new file).
MOVE_S = 60.0
#: Seconds an entry read from the journal is watched for the entries it superseded.
SUPERSEDE_S = 30.0
#: Where consolidation moves a daily note (``archive/<path>``), and where the note waits while it
#: is moved (``.consolidate/claimed/<name>``); tests/kg checks these against consolidation's own.
ARCHIVE_ROOT = "archive/"
CLAIMED_DIR = ".consolidate/claimed/"
_PACKED = ".gz"


def _still_stated(root: Path, path: str) -> list[tuple[str, str]]:
    """Where the facts of a removed tier file ``path`` may be stated now, as (path, text), besides
    the files the graph has read (the store knows those): the archive's copy (``archive/<path>``:
    consolidation moves a daily note there, first into ``.consolidate/claimed/``, which is read
    before the archive so that a move under way is found in one of the two), or the compressed
    copy of an archived note (``<path>.gz``)."""
    places = []
    if path.startswith(ARCHIVE_ROOT):
        packed = _read_plain(root, path + _PACKED)
        with contextlib.suppress(EOFError, gzip.BadGzipFile, zlib.error):
            if packed is not None:
                places.append((path + _PACKED, gzip.decompress(packed).decode("utf-8", "replace")))
        return places
    home = ARCHIVE_ROOT + path
    if path.startswith("daily/") and path.count("/") == 1:
        claimed = _read_plain(root, CLAIMED_DIR + path.removeprefix("daily/"))
        if claimed is not None:
            places.append((home, claimed.decode("utf-8", errors="replace")))
    archived = read_tier_file(root, home)
    if archived is not None:
        places.append((home, archived.decode("utf-8", errors="replace")))
    return places


def _read_plain(root: Path, rel: str) -> bytes | None:
    """The bytes of a regular file under ``root`` that is not a tier file (a claimed note, a
    compressed one), never through a link; None when there is none."""
    try:
        return read_file(root, rel)
    except SidecarError:
        return None


def _mover(tier: str, places: list[tuple[str, str]]) -> Callable[[int, str, str], str | None]:
    """For ``end_sourced``: a fact's new source, in the first place that states its sentence (the
    line it is on there), or None."""
    # The sentence as read leaves out a list marker, bold marks and backquotes (``kg.extract``).
    plain = [(p, text.replace("**", "").replace("`", "")) for p, text in places]

    def moved(fact_id: int, sentence: str, source: str) -> str | None:
        for path, text in plain:
            at = text.find(sentence) if sentence else -1
            if at >= 0:
                return f"file:{tier}:{path}#{text.count(chr(10), 0, at) + 1}"
        return None

    return moved


async def _until_quiet(rest: float) -> None:
    """Sleep ``rest`` seconds, then on in steps of ``QUIET_S`` while this process (the sidecar:
    every thread, not the child) used more than ``QUIET_SHARE`` of a core over the last sleep, for
    at most ``QUIET_PATIENCE`` seconds in all."""
    waited = 0.0
    while True:
        cpu = time.process_time()
        await asyncio.sleep(rest)
        waited += rest
        if time.process_time() - cpu <= QUIET_SHARE * rest or waited >= QUIET_PATIENCE:
            return
        rest = QUIET_S


def extract_text(text: str, path: str = "") -> tuple[list[Extracted], Position]:
    """The rules' ``extract_text`` (``kg.extract``), imported at the first reading: their patterns
    compile on import, which the sidecar's start need not wait for."""
    from sidecar.kg.extract import extract_text as read

    return read(text, path)


# The child: reads (text, path) pickles framed by a 4-byte length on stdin, answers each with the
# pickled ("ok", facts) or ("error", message), and ends at the end of its input (the sidecar closed
# the pipe, or died). It imports the rules alone (not the server), from the package the sidecar runs,
# and runs at a lower priority than the sidecar (nice 10): on a busy host, searches get the CPU first.
_CHILD = """
import os, pickle, struct, sys
os.nice(10)
sys.path.insert(0, sys.argv[1])
from sidecar.kg.extract import extract_text
inp, out = sys.stdin.buffer, sys.stdout.buffer
while len(head := inp.read(4)) == 4:
    text, path = pickle.loads(inp.read(struct.unpack(">I", head)[0]))
    try:
        answer = pickle.dumps(("ok", extract_text(text, path)))
    except Exception as exc:
        answer = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
    out.write(struct.pack(">I", len(answer)) + answer)
    out.flush()
"""


class _Extractor:
    """``extract`` in a child Python process, started at the first file it is given. Its CPU is
    spent beside the event loop's, never under its GIL. If the child cannot start or dies, ``extract``
    answers None and the caller extracts in a thread."""

    def __init__(self) -> None:
        self._child = Child(_CHILD, name="kg.extractor")

    async def extract(self, text: str, path: str) -> tuple[list[Extracted], Position] | None:
        answer = await self._child.ask(pickle.dumps((text, path)))
        if answer is None:
            return None
        status, value = answer
        if status != "ok":
            raise RuntimeError(f"extraction of {path} failed: {value}")
        found: tuple[list[Extracted], Position] = value
        return found

    async def aclose(self) -> None:
        """End the child (its input closed, it exits) and wait for it."""
        await self._child.aclose()


def _read_with_mtime(root: Path, path: str) -> tuple[bytes, str] | None:
    """A tier file's bytes and its modification time as read (one trip off the loop for both)."""
    data = read_tier_file(root, path)
    return None if data is None else (data, _mtime(root / path))


def _mtime(path: Path) -> str:
    try:
        return iso(datetime.fromtimestamp(os.stat(path).st_mtime, UTC))
    except OSError:
        return iso(datetime.now(UTC))
