"""Write-path benchmarks on a real sidecar process: write -> searchable, shell write -> searchable,
durable writes per second; first with BM25 alone, then in the default configuration (the
in-process embedding model on, every chunk of the memory dir embedded beforehand, see
``prepared.py``), where every write also gives the background embedder a chunk to embed.

Write -> searchable is also printed in parts: the write's own request, the search request (its
wait for the reindex, then the search), the search's own time (the answer's ``took_ms``), and the
sidecar's CPU per write and search (every thread, the background embedding of earlier writes
included). The same pairs are then split by the sidecar's own log (``write.durable`` when the write
thread handed the durable write back to the loop, ``memory.updated`` when the reindex worker had
applied it, just before ``indexed_seq`` moves), timed on this host's clock: request -> durable
(the write thread's work, its fsyncs included), durable -> acknowledged (back to this client),
acknowledged -> indexed (how long the search could have had to wait: 0 when the index had the
write before its answer reached the client), and from the later of the two to the search's
answer; and how many items the reindex queue took per write (the seqs a run of writes used: 1.0
means no item but the writes' own).

The sidecar runs without scheduled consolidation (``MEMORY_SIDECAR_CONSOLIDATE_INTERVAL=0``: its
first run, overdue on a generated dir of old daily notes, would summarise every past week during
the measurement), and the measurement starts once the knowledge graph has read every file once
(``kg.backfilled`` in its log): the steady state, not the first minutes of a new memory dir.

The limit beside write -> searchable, measured in the same run right after it (the same host
load): the same appends made by hand, each one a durable replacement of the file (temp file,
write, fsync, rename, fsync of the directory), then the file's text replaced in a raw SQLite FTS5
table holding the same memory dir (WAL, synchronous NORMAL, as the index), committed, and the
token searched for with ``MATCH`` and ``bm25()``: no HTTP, no chunking, no postings, no hooks.
With the embedder on, the limit also embeds the query raw (``tests.bench.raw``), as the hybrid
search it is compared with must.

The limit beside the writes per second: the disk, measured in the same run and the same memory
dir. One replacement the way a durable write makes it, 600 times, appending to 20 files of the
same sizes: no HTTP, no lock, no reindex.

The sidecar's CPU per small append (one line, ``- fact``, to one of 20 files, over sequential
HTTP; every thread, its reindex, journal entry and graph reading included: each round ends once
its last append is indexed, and the after-hooks that follow run in it or the next, as behind a
steady stream of appends) is taken in ``WRITES_CPU_ROUNDS`` rounds (8) of ``WRITES_CPU_APPENDS``
(600) in all, each followed by a round of the same number of raw durable replacements (the limit,
this process's CPU), so a busy moment of the host lands on both; the median round is the figure,
the rounds' range beside it.
``WRITES_BENCH=cpu`` runs that part alone (BM25 only). With ``WRITES_BASELINE=DIR`` (a source
tree, such as ``git archive REV | tar -x -C DIR``), a second sidecar from that tree takes the same
appends over its own copy of the dir, in the same rounds (each sidecar first every other round):
the round-by-round difference shows a cut smaller than the spread between runs. ``WRITES_TREE=DIR``
runs "this tree" from another source tree too (two commits compared without the working tree's
edits).

Appends to one growing daily note (``WRITES_BENCH=growing``, BM25 only, a real sidecar over HTTP):
the note's one ``## Log`` section grows by a work-log bullet per append, as an agent's does through a
day, in blocks of ``GROWING_BLOCK``; the sidecar's CPU per append in each block (every thread, until
the block's last append is indexed) beside the note's size, and the same appends made as raw durable
replacements of a copy of the note.

Appends one at a time (``WRITES_BENCH=spaced``, a real sidecar over HTTP, BM25 only, then with the
embedder on and every chunk's vector stored first): ``SPACED_APPENDS`` one-line appends to the daily
notes (each appended to once before, as the first append since start reads a file whole), a pause
of ``SPACED_GAP_S`` after each, as an agent makes them, not back to back (where the
work that follows a change, the graph's reading, the file watcher's batch, the background embedding,
is shared by the appends of a moment). The sidecar's CPU over the appends (every thread, until the
last is indexed and, with the embedder on, embedded), less its CPU over as long a time with nothing
to do just before (the file watcher's polling, timers), per append. The limit beside: the same appends
as raw durable replacements, and with the embedder on a raw onnxruntime run over each chunk an
append changed (the index embeds a changed chunk whole; ``tests.bench.raw``), spaced the same way: an
operation after a pause finds the caches cold, and costs more than one of a stream.

An append's CPU split by hook (``WRITES_BENCH=hooks``, in process, BM25 only): the sidecar opened
in this process (``open_sidecar``, no HTTP) over the same generated dir plus a daily note holding
the repository's benign memory notes (``tests/data/scanner_notes_*.jsonl``), to which the rest of
those notes are then appended one at a time, each through the write service, waiting for it to be
indexed and for the after-hooks to run before the next (the first append, which loads the
injection scanner, is not counted). Each step's CPU is the process's (every thread) while it ran:
the write (the duplicate check's search, then the write thread, and of it the injection scanner),
the index's apply with its before-hooks, and each after-hook (the journal's entry, the graph's
reading, here of each append as it comes: no linger). A note the scanner refuses is not counted either. Run
twice: the graph reading each append from where the file's last reading stopped, and (for
comparison) reading the whole file every time (no reading remembered, ``READS_KEPT = 0``); the
lines the graph's rules read per append are printed beside. In the first run each write is also
judged by the scanner with every section it changes read whole (``scan_write`` on the whole file;
the write's own verdict comes from the tail it joins),
timed apart and left out of the other rows: the ratio of the two is from the same appends.

A small append's CPU by thread (``WRITES_BENCH=threads``, in process, BM25 only): the same
sidecar opened in this process over the generated dir, its postings built and its graph's first
reading done, then the sequential writes' appends (one line to 20 small files, as
``durable writes per second`` makes them over HTTP), each waiting for its index apply, the
after-hooks following on their own (as behind a stream of appends) and all done before the end.
Each thread's CPU over ``N_THREADS`` appends, from ``/proc/self/task`` (clock ticks: 0.01 s over
the run), named by the thread (the numbers of a pool's threads dropped; a thread
Python did not start, such as the file watcher's, by its kernel name): the event loop, the write
thread, the index's writer, the journal's and the graph's threads. Its log lines are JSON, as the
server writes them (to ``/dev/null`` here). No HTTP: the sequential row over HTTP costs the
request handling more.

Where the event loop's part of those appends goes (``WRITES_BENCH=profile``): half as many of the
same appends with the loop's thread under cProfile on its own CPU clock (``time.thread_time``;
profiling costs several times the work, so read the shares, not the sum), the sidecar's functions
with the largest cumulative share of it, then the CPU of one trip to a thread and back
(``asyncio.to_thread`` of a function doing nothing, both threads), which an append makes six of.

Where one write -> searchable pair's time goes inside the sidecar (``WRITES_BENCH=steps``): the
sidecar opened in this process (no HTTP) over the same dir with the in-process model on and every
chunk's vector stored, each pair (the same appends, then a search of the token with ``after_seq``)
made alone, ``N_STEPS`` of them, each after a pause that lets the previous write's background
embedding pass; the steps' start and end (from the write's arrival, wall clock) and each thread
step's CPU, by the functions that make them (the write thread, its injection scan, the index's
apply and its thread, the flag cache's forgetting and marking, the query's model run, BM25, the
ranking and its thread), p50 over the pairs; and the background embedding's CPU per write.

    python -m tests.bench writes        (parts: WRITES_BENCH=bm25,embedder, the default; or cpu, growing, spaced, hooks, threads, profile, steps)
"""

from __future__ import annotations

import asyncio
import cProfile
import datetime
import json
import os
import pstats
import random
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from sidecar.errors import InjectionSuspected
from sidecar.index.queue import UpdateHook
from tests.bench.prepared import embed_memory
from tests.bench.raw import RawQueryEmbedder
from tests.bench.util import ms, pct, report, wait_logged
from tests.support.corpus import benign_notes, make_corpus
from tests.support.embedding import all_embedded
from tests.support.procs import SidecarProcess, cpu_s, free_port, start_sidecar
from tests.support.waiting import async_wait_until

N = 300
N_RATE = 600
N_THREADS = 600  # small appends in the threads part
N_STEPS = int(os.environ.get("WRITES_STEPS", "80"))  # pairs timed step by step in the steps part
CPU_ROUNDS = int(os.environ.get("WRITES_CPU_ROUNDS", "8"))  # rounds of appends, each beside a round of its limit
_DEVNULL = open(os.devnull, "w")  # noqa: SIM115 (the threads part's log, for the process's life)


def raw_durable_writes(root: Path, n: int, name: str = "raw-limit") -> float:
    """The disk's limit: ``n`` fsync'd replacements (temp, write, fsync, rename, dir fsync); per second."""
    folder = root / name
    folder.mkdir()
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    content = [b""] * 20
    try:
        t0 = time.perf_counter()
        for i in range(n):
            content[i % 20] += b"- fact\n"
            tmp, name = f".w{i % 20}.md.tmp", f"w{i % 20}.md"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
            try:
                os.write(fd, content[i % 20])
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            os.fsync(dir_fd)
        return n / (time.perf_counter() - t0)
    finally:
        os.close(dir_fd)


def durable_replace_raw(dir_fd: int, name: str, data: bytes) -> None:
    """One replacement the way a durable write makes it: temp, write, fsync, rename, dir fsync."""
    tmp = f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644, dir_fd=dir_fd)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    os.fsync(dir_fd)


class RawAppends:
    """The limit of write -> searchable, one append at a time: appends like the API's (28 daily
    files), each a durable replacement, then the file's text replaced in a raw FTS5 table over a
    copy of the memory dir, committed, and searched for (with ``embed``, the query embedded raw
    too, as a hybrid search must). ``work`` holds the copy and the table."""

    def __init__(self, root: Path, work: Path, embed: RawQueryEmbedder | None = None) -> None:
        folder = work / "raw-searchable"
        shutil.copytree(root, folder)
        self.daily = folder / "daily"
        self.daily.mkdir(exist_ok=True)
        self.db = sqlite3.connect(work / "raw-fts.sqlite", isolation_level=None)
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body)")
        self.db.execute("BEGIN")
        for path in sorted(folder.rglob("*.md")):
            self.db.execute("INSERT INTO docs VALUES (?, ?)", (str(path.relative_to(folder)), path.read_text()))
        self.db.execute("COMMIT")
        self.dir_fd = os.open(self.daily, os.O_RDONLY | os.O_DIRECTORY)
        self.embed = embed

    def append(self, i: int) -> float:
        """The ``i``-th append, written, indexed and found: seconds it took."""
        name = f"2027-01-{i % 28 + 1:02d}.md"
        t0 = time.perf_counter()
        old = (self.daily / name).read_bytes() if (self.daily / name).exists() else b""
        new = old + (b"" if not old or old.endswith(b"\n") else b"\n") + f"- tok{i}x note".encode()
        durable_replace_raw(self.dir_fd, name, new)
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("DELETE FROM docs WHERE path = ?", (f"daily/{name}",))
        self.db.execute("INSERT INTO docs VALUES (?, ?)", (f"daily/{name}", new.decode()))
        self.db.execute("COMMIT")
        hits = self.db.execute(
            "SELECT path FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT 10", (f"tok{i}x",)
        ).fetchall()
        if self.embed is not None:
            self.embed(f"tok{i}x")
        took = time.perf_counter() - t0
        assert hits, f"tok{i}x"
        return took

    def close(self) -> None:
        os.close(self.dir_fd)
        self.db.close()


def raw_write_searchable(root: Path, base: Path, n: int, embed: RawQueryEmbedder | None = None) -> list[float]:
    """``n`` of ``RawAppends``' appends one after another, nothing beside them: seconds per append."""
    raw = RawAppends(root, base, embed)
    try:
        return [raw.append(i) for i in range(n)]
    finally:
        raw.close()


def logged(log: Path, events: tuple[str, ...]) -> dict[tuple[str, int], float]:
    """(event, seq) -> when the sidecar logged it (seconds since the epoch), from its JSON log."""
    found: dict[tuple[str, int], float] = {}
    for line in log.read_text(errors="replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("event") in events and "seq" in entry:
            at = datetime.datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()
            found.setdefault((entry["event"], entry["seq"]), at)
    return found


def report_steps(label: str, log: Path, pairs: list[tuple[int, float, float, float]]) -> None:
    """Write -> searchable split at the sidecar's own log lines (see the module's doc)."""
    seen = logged(log, ("write.durable", "memory.updated"))
    steps: dict[str, list[float]] = {
        "request -> durable": [],
        "durable -> acknowledged": [],
        "acknowledged -> indexed (0: before)": [],
        "then -> the search's answer": [],
    }
    for seq, sent, acknowledged, answered in pairs:
        durable, indexed = seen.get(("write.durable", seq)), seen.get(("memory.updated", seq))
        if durable is None or indexed is None:
            continue
        steps["request -> durable"].append(durable - sent)
        steps["durable -> acknowledged"].append(acknowledged - durable)
        steps["acknowledged -> indexed (0: before)"].append(max(0.0, indexed - acknowledged))
        steps["then -> the search's answer"].append(answered - max(indexed, acknowledged))
    for name, samples in steps.items():
        report(f"[{label}]   {name} (the sidecar's log)", ms(samples), f"{len(samples)} of {len(pairs)} pairs")
    items = (pairs[-1][0] - pairs[0][0]) / max(1, len(pairs) - 1)
    report(f"[{label}]   reindex items queued per write", f"{items:.2f}", "1.00: the writes' own only")


def main() -> None:
    parts = os.environ.get("WRITES_BENCH", "bm25,embedder").split(",")
    if "bm25" in parts:
        measure("BM25 only", "none")
    if "embedder" in parts:
        measure("embedder on", "auto")
    if "cpu" in parts:
        measure_cpu()
    if "hooks" in parts:
        for remembered in (True, False):
            asyncio.run(hooks_split(remembered))
    if "threads" in parts:
        asyncio.run(threads_split())
    if "profile" in parts:
        asyncio.run(threads_split(profiled=True))
    if "growing" in parts:
        measure_growing()
    if "spaced" in parts:
        for label, embedder in (("BM25 only", "none"), ("embedder on", "auto")):
            measure_spaced(label, embedder)
    if "steps" in parts:
        base = Path(tempfile.mkdtemp(prefix="bench-steps-"))
        try:
            make_corpus(base / "memory", 2_000)
            print(f"# {embed_memory(base / 'memory')}", flush=True)
            asyncio.run(steps_split(base / "memory"))
        finally:
            shutil.rmtree(base, ignore_errors=True)


class _Steps:
    """Each timed function's calls as (step, start, end, thread CPU), wall clock (``perf_counter``)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, float, float, float]] = []
        self.background = [0, 0.0]  # the background embedder's runs and their CPU

    def wrap(self, owner: Any, name: str, step: str, *, on_thread: bool = False) -> None:
        fn = getattr(owner, name)
        seen, background = self.seen, self.background

        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.thread_time() - cpu
                seen.append((step, start, time.perf_counter(), spent))
                if step == "background embedding":
                    background[0] += 1
                    background[1] += spent

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                seen.append((step, start, time.perf_counter(), 0.0))

        setattr(owner, name, timed if on_thread else awaited)


async def steps_split(root: Path) -> None:
    """One write -> searchable pair's steps inside the sidecar (see the module's doc)."""
    from sidecar.contract import SearchRequest, WriteRequest
    from sidecar.index.tier import Tier
    from sidecar.index.tier_index import TierIndex
    from sidecar.logs import configure_logging
    from sidecar.ops import search as ops_search
    from sidecar.retrieval import flags
    from sidecar.retrieval.embed.onnx import OnnxEmbedder
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings
    from sidecar.write.service import WriteService

    steps = _Steps()
    for owner, name, step, on_thread in (
        (WriteService, "write", "write (arrival -> answer)", False),
        (WriteService, "_dedup_candidates", "  duplicate check's search", False),
        (WriteService, "_write_durably", "  write thread", True),
        (WriteService, "_scan", "    injection scan", True),
        (Tier, "apply", "index apply (loop -> thread -> loop)", False),
        (TierIndex, "apply_paths", "  apply on the index's thread", True),
        (flags.FlagCache, "forget", "flag cache told of the change", False),
        (ops_search, "_search", "search (arrival -> answer)", False),
        (OnnxEmbedder, "_embed_foreground", "  the query's model run", True),
        (HybridSearcher, "search", "  search after indexed", False),
        (Tier, "search", "    BM25", False),
        (HybridSearcher, "_rank", "    ranking thread", True),
        (flags.FlagCache, "mark", "    flags marked", False),
        (flags, "_flagged", "      file read and judged for flags", True),
        (OnnxEmbedder, "embed_sync_sentences", "background embedding", True),
    ):
        steps.wrap(owner, name, step, on_thread=on_thread)
    configure_logging("json", "info", stream=_DEVNULL)
    settings = load_settings(
        {"memory_dir": str(root), "embedder": "auto", "consolidate_interval": "0", "reconcile_interval": "0"},
        environ={},
    )
    async with open_sidecar(settings) as side:
        for tier in side.tiers.values():
            tier.start_postings()
        files = len(list(root.rglob("*.md")))

        async def backfilled() -> bool:  # the graph's first reading of every file
            return len(await side.kg.graph.store.files("agent")) >= files

        await async_wait_until(backfilled, timeout=600, interval=0.1)

        async def pair(i: int) -> tuple[float, float, float]:
            start, cpu = time.perf_counter(), time.process_time()
            request = WriteRequest("agent", f"daily/2027-01-{i % 28 + 1:02d}.md", f"- tok{i}x note", "append")
            seq = (await side.writes.write(request))["seq"]
            body = await ops_search.search(side, SearchRequest(query=f"tok{i}x", after_seq=seq))
            assert body["results"] and body["index"]["after_seq_met"], body
            return start, time.perf_counter() - start, time.process_time() - cpu

        for i in range(30):  # the scanner's import, the files' first appends
            await pair(1000 + i)
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        starts: dict[str, list[float]] = {}
        ends: dict[str, list[float]] = {}
        walls: dict[str, list[float]] = {}
        cpus: dict[str, list[float]] = {}
        totals, cpu_totals = [], []
        steps.background[:] = [0, 0.0]
        for i in range(N_STEPS):
            await asyncio.sleep(0.35)  # the previous write's background embedding (0.25 s after it) passes
            steps.seen.clear()
            start, took, cpu = await pair(i)
            totals.append(took)
            cpu_totals.append(cpu)
            firsts: dict[str, tuple[float, float]] = {}
            for step, began, ended, spent in steps.seen:
                if began < start or step == "background embedding":
                    continue
                firsts.setdefault(step, (began - start, ended - start))
                walls.setdefault(step, []).append(ended - began)
                cpus.setdefault(step, []).append(spent)
            for step, (began, ended) in firsts.items():
                starts.setdefault(step, []).append(began)
                ends.setdefault(step, []).append(ended)
    report(
        "[steps] write -> searchable in process, one pair at a time",
        f"p50 {statistics.median(totals) * 1000:.2f} ms; process CPU p50 {statistics.median(cpu_totals) * 1000:.2f} ms",
        f"{N_STEPS} pairs; load average {os.getloadavg()[0]:.1f}",
    )
    for step in sorted(starts, key=lambda s: statistics.median(starts[s])):
        report(
            f"  {step}",
            f"{statistics.median(starts[step]) * 1000:6.2f} -> {statistics.median(ends[step]) * 1000:6.2f} ms; "
            f"wall {statistics.median(walls[step]) * 1000:.2f}, CPU {statistics.median(cpus[step]) * 1000:.2f} ms",
            f"{len(starts[step])} of {N_STEPS} pairs",
        )
    runs, spent = steps.background
    report(
        "  background embedding of the written chunks", f"{spent / N_STEPS * 1000:.2f} ms CPU per write", f"{runs} runs"
    )


def thread_cpu() -> dict[str, float]:
    """This process's CPU seconds by thread name (a pool's threads together; see the module's doc)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    out: dict[str, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                comm, fields = fh.read().split(" (", 1)[1].rsplit(") ", 1)
        except (OSError, ValueError):
            continue  # the thread ended
        name = names.get(int(tid), f"{comm} (not a Python thread)")
        name = re.sub(r"_\d+$", "", name)
        utime, stime = fields.split()[11:13]
        out[name] = out.get(name, 0.0) + (int(utime) + int(stime)) / tick
    return out


def _report_loop_profile(profile: cProfile.Profile, appends: int) -> None:
    """The event loop's profiled CPU per append, and the sidecar's functions with the largest
    cumulative share of it."""
    table: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    # Its time blocked in the selector is not its work (a thread's CPU clock still moves there).
    total = sum(tt for f, (_, _, tt, _, _) in table.items() if f[2] != "<method 'poll' of 'select.epoll' objects>")
    report("[profile] the event loop", f"{total / appends * 1000:.2f} ms profiled per append", f"{appends} appends")
    ours = [(ct, f) for f, (_, _, _, ct, _) in table.items() if "/sidecar/" in f[0] and ct > 0.02 * total]
    for ct, (file, line, func) in sorted(ours, reverse=True)[:16]:
        report(f"    {file.split('/sidecar/', 1)[1]}:{line} {func}", f"{ct / total:.0%}", "")


async def _hop_cpu(n: int = 3000) -> float:
    """CPU seconds of one ``asyncio.to_thread`` round trip of a no-op, both threads' parts."""
    for _ in range(200):
        await asyncio.to_thread(int)
    cpu = time.process_time()
    for _ in range(n):
        await asyncio.to_thread(int)
    return (time.process_time() - cpu) / n


async def threads_split(profiled: bool = False) -> None:
    """A small append's CPU by thread (see the module's doc); ``profiled``: where it goes."""
    from sidecar.contract import WriteRequest
    from sidecar.logs import configure_logging
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings

    configure_logging("json", "info", stream=_DEVNULL)
    base = Path(tempfile.mkdtemp(prefix="bench-threads-"))
    root = base / "memory"
    make_corpus(root, 2_000)
    settings = load_settings(
        {"memory_dir": str(root), "embedder": "none", "consolidate_interval": "0", "reconcile_interval": "0"},
        environ={},
    )
    try:
        async with open_sidecar(settings) as side:
            for tier in side.tiers.values():
                tier.start_postings()
            files = len(list(root.rglob("*.md")))

            async def backfilled() -> bool:  # the graph's first reading of every file
                return len(await side.kg.graph.store.files("agent")) >= files

            await async_wait_until(backfilled, timeout=600, interval=0.1)

            async def append(i: int) -> None:
                answer = await side.writes.write(WriteRequest("agent", f"topics/w{i % 20}.md", "- fact", "append"))
                await side.queue.wait_for(answer["seq"], 30.0)  # indexed; the after-hooks follow

            async def hooked() -> None:  # every after-hook done, the graph's lingering readings too
                await side.queue.wait_hooked(side.queue.latest_seq, 30.0)

            for i in range(40):  # the scanner's import, the files' first appends
                await append(i)
            await hooked()
            await asyncio.sleep(1.0)
            if profiled:  # the event loop's part: this thread's
                profile = cProfile.Profile(time.thread_time)
                profile.enable()
                for i in range(N_THREADS // 2):
                    await append(i)
                await hooked()
                profile.disable()
                _report_loop_profile(profile, N_THREADS // 2)
                report(
                    "[profile] one trip to a thread and back",
                    f"{await _hop_cpu() * 1e6:.0f} us of CPU",
                    f"load average {os.getloadavg()[0]:.1f}",
                )
                return
            before, cpu = thread_cpu(), time.process_time()
            for i in range(N_THREADS):
                await append(i)
            await hooked()
            cpu, after = time.process_time() - cpu, thread_cpu()
            report(
                "[threads] CPU per small append, in process, all hooks",
                f"{cpu / N_THREADS * 1000:.2f} ms",
                f"{N_THREADS} one-line appends to 20 files; load average {os.getloadavg()[0]:.1f}; <= 5 ms",
            )
            spent = {name: after[name] - before.get(name, 0.0) for name in after}
            for name, seconds in sorted(spent.items(), key=lambda item: -item[1]):
                if seconds > 0:
                    report(f"  thread {name}", f"{seconds / N_THREADS * 1000:.2f} ms", "")
    finally:
        shutil.rmtree(base, ignore_errors=True)


HOOKS_PATH = "daily/2027-02-01.md"
HOOKS_FIRST = 300  # of the notes' lines, in the daily note before the appends


async def hooks_split(remembered: bool) -> None:
    """One append's CPU by step and hook (see the module's doc)."""
    from sidecar.contract import WriteRequest
    from sidecar.kg import ingest
    from sidecar.scanner.scan import scan_write as whole_scan
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings
    from sidecar.write import service

    judge_write = service._judge_write

    label = "graph reads the appended lines" if remembered else "graph reads the whole file"
    kept = ingest.READS_KEPT
    if not remembered:
        ingest.READS_KEPT = 0
    base = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    root = base / "memory"
    make_corpus(root, 2_000)
    notes = benign_notes()
    first, later = [], []
    for note in notes:
        (first if sum(n.count("\n") for n in first) < HOOKS_FIRST else later).append(note)
    (root / HOOKS_PATH).write_text("# 2027-02-01\n\n" + "".join(first), encoding="utf-8")
    settings = load_settings(
        {"memory_dir": str(root), "embedder": "none", "consolidate_interval": "0", "reconcile_interval": "0"},
        environ={},
    )
    try:
        async with open_sidecar(settings) as side:
            for tier in side.tiers.values():
                tier.start_postings()
            files = len(list(root.rglob("*.md")))

            async def backfilled() -> bool:  # the graph's first reading of every file
                return len(await side.kg.graph.store.files("agent")) >= files

            await async_wait_until(backfilled, timeout=600, interval=0.1)
            await asyncio.sleep(1.0)
            spent: dict[str, float] = {}

            def timed(name: str, hook: UpdateHook) -> UpdateHook:
                async def run(tier: str, path: str, seq: int, kind: str) -> None:
                    cpu = time.process_time()
                    try:
                        await hook(tier, path, seq, kind)
                    finally:
                        spent[name] = spent.get(name, 0.0) + time.process_time() - cpu

                return run

            side.kg.ingest.linger_s = 0.0  # each append read as it comes, so its hook's CPU is its reading
            journal, graph = side.queue.after_hooks
            side.queue.after_hooks = [timed("journal", journal), timed("graph", graph)]
            scan = service._judge_write

            def scanned(*args: Any, **kwargs: Any) -> Any:
                cpu = time.process_time()  # on the write thread, while the loop waits for it
                try:
                    return scan(*args, **kwargs)
                finally:
                    spent["scanner"] = spent.get("scanner", 0.0) + time.process_time() - cpu
                    if remembered:  # the same write judged with every changed section whole, for the ratio
                        cpu = time.process_time()
                        old, new = args[0], args[1]  # every changed section read whole, as before the window
                        whole_scan(
                            None if old is None else old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
                        )
                        spent["whole"] = spent.get("whole", 0.0) + time.process_time() - cpu

            service._judge_write = scanned
            await side.writes.write(WriteRequest("agent", HOOKS_PATH, later.pop(0), "append"))  # imports the scanner
            spent.clear()
            steps = {"write": 0.0, "apply": 0.0, "all": 0.0}
            lines, refused = side.kg.ingest.lines_read, 0
            for note in later:
                whole_before = spent.get("whole", 0.0)
                cpu0 = time.process_time()
                try:
                    answer = await side.writes.write(WriteRequest("agent", HOOKS_PATH, note, "append"))
                except InjectionSuspected:
                    refused += 1  # the scanner's false alarm on a benign note: nothing written
                    continue
                cpu1 = time.process_time()
                await side.queue.wait_for(answer["seq"], 30.0)
                cpu2 = time.process_time()
                await side.queue.wait_hooked(answer["seq"], 30.0)
                cpu3 = time.process_time()
                steps["write"] += cpu1 - cpu0
                steps["apply"] += cpu2 - cpu1
                steps["all"] += cpu3 - cpu0 - (spent.get("whole", 0.0) - whole_before)
            n = len(later) - refused
            read = (side.kg.ingest.lines_read - lines) / n
            size = (root / HOOKS_PATH).stat().st_size
            report(
                f"[hooks, {label}] CPU per append, all hooks",
                f"{steps['all'] / n * 1000:.2f} ms",
                f"{n} appends ({refused} refused by the scanner) to a note growing to {size:,} bytes; <= 5 ms",
            )
            whole = spent.pop("whole", 0.0)
            report("  the write (duplicate check, write thread)", f"{(steps['write'] - whole) / n * 1000:.2f} ms", "")
            report("    of which the injection scanner", f"{spent.get('scanner', 0.0) / n * 1000:.2f} ms", "")
            if whole:
                report(
                    "    the same writes, every changed section judged whole",
                    f"{whole / n * 1000:.2f} ms",
                    f"{spent.get('scanner', 0.0) / whole:.2f}x (measured beside, left out of the rows above)",
                )
            report("  the index's apply and its before-hooks", f"{steps['apply'] / n * 1000:.2f} ms", "")
            for name in ("journal", "graph"):
                report(f"  after-hook: {name}", f"{spent.get(name, 0.0) / n * 1000:.2f} ms", "")
            report("  lines the graph's rules read per append", f"{read:.1f}", f"load average {os.getloadavg()[0]:.1f}")
    finally:
        ingest.READS_KEPT = kept
        service._judge_write = judge_write
        shutil.rmtree(base, ignore_errors=True)


def wait_embedded(client: httpx.Client, timeout: float = 120.0) -> str:
    """Wait until the embedder is ready with no backlog; what it says of itself."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        embedder = client.get("/memory/status").json()["embedder"]
        if all_embedded(embedder):
            return f"{embedder['search']} ({embedder['model']}, {embedder['vectors']} vectors)"
        time.sleep(0.1)
    raise RuntimeError(f"the embedder never caught up: {embedder}")


def _corpus_sidecar(prefix: str, embedder: str) -> tuple[Path, Path, SidecarProcess]:
    """A temp dir holding the generated 2k-chunk memory dir (every chunk's vector stored first when
    ``embedder`` is on) and a real sidecar serving it, without scheduled consolidation."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    root = base / "memory"
    make_corpus(root, 2_000)
    if embedder != "none":
        print(f"# {embed_memory(root)}", flush=True)
    side = start_sidecar(root, env={"MEMORY_SIDECAR_EMBEDDER": embedder, "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"})
    return base, root, side


def measure(label: str, embedder: str) -> None:
    base, root, side = _corpus_sidecar("bench-writes-", embedder)
    try:
        with httpx.Client(base_url=side.url, timeout=10) as client:
            wait_logged(side.log, "kg.backfilled")  # the graph's first reading of the dir, in its child
            if embedder != "none":
                report(f"[{label}] search", wait_embedded(client))
            degraded = 0
            api, writes, searches, took = [], [], [], []
            pairs: list[tuple[int, float, float, float]] = []  # (seq, sent, acknowledged, answered), wall clock
            cpu0 = cpu_s(side.proc.pid)
            for i in range(N):
                t0 = time.perf_counter()
                sent = time.time()
                seq = client.post(
                    "/memory/write", json={"path": f"daily/2027-01-{i % 28 + 1:02d}.md", "content": f"- tok{i}x note"}
                ).json()["seq"]
                t1 = time.perf_counter()
                body = client.post("/memory/search", json={"query": f"tok{i}x", "after_seq": seq}).json()
                api.append(time.perf_counter() - t0)
                pairs.append((seq, sent, sent + (t1 - t0), sent + api[-1]))
                writes.append(t1 - t0)
                searches.append(time.perf_counter() - t1)
                took.append(body["took_ms"] / 1000)
                assert body["results"] and body["index"]["after_seq_met"]
                degraded += "degraded" in body
            pair_cpu = (cpu_s(side.proc.pid) - cpu0) / N
            report(
                f"[{label}] API write -> searchable (write + search after_seq)",
                f"{ms(api)}; {degraded} of {N} answers degraded",
                "p99 <= 50 ms",
            )
            raw = raw_write_searchable(root, base, N, RawQueryEmbedder() if embedder != "none" else None)
            report(
                "  the limit: the same appends, durable, into a raw FTS5 table, searched"
                + (", the query embedded raw" if embedder != "none" else ""),
                f"{ms(raw)}; load average {os.getloadavg()[0]:.1f}",
                f"ratio p50 {pct(api, 50) / pct(raw, 50):.1f}x, p99 {pct(api, 99) / pct(raw, 99):.1f}x",
            )
            report(f"[{label}]   of which the write (durable, acknowledged)", ms(writes), "")
            report(f"[{label}]   and the search (waiting for the reindex, then searching)", ms(searches), "")
            report(f"[{label}]   of which the search itself (the answer's took_ms)", ms(took), "")
            report(
                f"[{label}]   sidecar CPU per write + search (all its threads)",
                f"{pair_cpu * 1000:.2f} ms",
                "the background embedding of earlier writes included",
            )
            report_steps(label, side.log, pairs)
            shell = []
            agent = root / "AGENT.md"
            for i in range(100):
                t0 = time.perf_counter()
                with agent.open("a") as fh:  # a plain append, no fsync, as `echo >>` does
                    fh.write(f"\n- shelltok{i}y\n")
                while not client.post("/memory/search", json={"query": f"shelltok{i}y"}).json()["results"]:
                    time.sleep(0.002)
                shell.append(time.perf_counter() - t0)
            report(f"[{label}] shell write -> searchable (watcher)", ms(shell), "p99 <= 300 ms")
            append_cpu_rounds(label, {"this tree": client}, {"this tree": side.proc.pid}, base)
    finally:
        side.stop()
        shutil.rmtree(base, ignore_errors=True)


def measure_cpu() -> None:
    """``WRITES_BENCH=cpu``: only the small appends' CPU rounds, BM25 only; with
    ``WRITES_BASELINE``, paired with another tree's sidecar (the module's doc)."""
    base = Path(tempfile.mkdtemp(prefix="bench-writes-cpu-"))
    baseline = os.environ.get("WRITES_BASELINE")
    sides: dict[str, SidecarProcess] = {}
    env = {"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}
    try:
        for name, tree in (("this tree", os.environ.get("WRITES_TREE")), ("baseline", baseline)):
            if name == "baseline" and tree is None:
                continue
            root = base / f"memory-{len(sides)}"
            make_corpus(root, 2_000)  # the same files for both (the same seed)
            sides[name] = _start_in(tree, root, env) if tree else start_sidecar(root, env=env)
        clients = {name: httpx.Client(base_url=side.url, timeout=10) for name, side in sides.items()}
        for name, client in clients.items():
            wait_logged(sides[name].log, "kg.backfilled")
            for i in range(40):  # the scanner's import, the files' first appends
                client.post(
                    "/memory/write", json={"path": f"topics/w{i % 20}.md", "content": "- fact", "mode": "append"}
                )
        append_cpu_rounds("BM25 only", clients, {name: side.proc.pid for name, side in sides.items()}, base)
        for client in clients.values():
            client.close()
    finally:
        for side in sides.values():
            side.stop()
        shutil.rmtree(base, ignore_errors=True)


#: ``WRITES_BENCH=growing``: appends per block, and blocks, to the one daily note.
GROWING_BLOCK, GROWING_BLOCKS = 100, 4
_GROWING_WORDS = (
    "deploy review standup ticket customer invoice rollout canary database index migration pipeline "
    "schedule vendor contract meeting budget report dashboard alert latency"
).split()
_GROWING_NAMES = "Priya Tomasz Aisha Kwame Elena Ravi Sofia Mateo".split()


def _log_line(rng: random.Random, i: int) -> str:
    """A work-log bullet of some 110 characters, as an agent appends them through a day."""
    w = _GROWING_WORDS
    act = rng.choice(["asked about", "finished", "reviewed", "moved", "fixed"])
    return (
        f"- {rng.choice(_GROWING_NAMES)} {act} the {rng.choice(w)} {rng.choice(w)} for the {rng.choice(w)} team; "
        f"next step is {rng.choice(w)} by {rng.randint(1, 28)} Dec (item {i}).\n"
    )


def measure_growing() -> None:
    """``WRITES_BENCH=growing``: the sidecar's CPU per append (BM25 only, over HTTP, every thread)
    to one daily note whose one section grows through the day, as an agent's log does: a block of
    ``GROWING_BLOCK`` one-line appends at a time, each block ended when its last append is indexed,
    with the note's size after it; beside each block, the same appends made raw (durable replacements
    of a copy of the note, this process's CPU)."""
    base = Path(tempfile.mkdtemp(prefix="bench-writes-growing-"))
    root = base / "memory"
    (root / "daily").mkdir(parents=True)
    note = "daily/2027-02-01.md"
    (root / note).write_text("# 2027-02-01\n\n## Log\n")
    side = start_sidecar(root, env={"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"})
    rng = random.Random(7)
    raw_dir = base / "raw"
    raw_dir.mkdir()
    dir_fd = os.open(raw_dir, os.O_RDONLY | os.O_DIRECTORY)
    raw_text = (root / note).read_bytes()
    try:
        client = httpx.Client(base_url=side.url, timeout=30)
        wait_logged(side.log, "kg.backfilled")
        for i in range(50):  # the scanner's import, the note's first appends
            line = _log_line(rng, i)
            client.post("/memory/write", json={"path": note, "content": line, "mode": "append"}).raise_for_status()
            raw_text += line.encode()
        for block in range(GROWING_BLOCKS):
            cpu0 = cpu_s(side.proc.pid)
            lines = [_log_line(rng, 1000 * (block + 1) + i) for i in range(GROWING_BLOCK)]
            seq = 0
            for line in lines:
                answer = client.post("/memory/write", json={"path": note, "content": line, "mode": "append"})
                seq = answer.raise_for_status().json()["seq"]
            client.post("/memory/search", json={"query": "item", "after_seq": seq}).raise_for_status()
            took = (cpu_s(side.proc.pid) - cpu0) / GROWING_BLOCK
            raw0 = time.process_time()
            for line in lines:
                raw_text += line.encode()
                durable_replace_raw(dir_fd, "note.md", raw_text)
            raw = (time.process_time() - raw0) / GROWING_BLOCK
            size = (root / note).stat().st_size
            report(
                f"[growing] CPU per append, the note at {size / 1024:.0f} KB after the block",
                f"{took * 1000:.2f} ms",
                f"<= 5 ms; the same appends raw: {raw * 1000:.2f} ms; load average {os.getloadavg()[0]:.1f}",
            )
        client.close()
    finally:
        os.close(dir_fd)
        side.stop()
        shutil.rmtree(base, ignore_errors=True)


#: ``WRITES_BENCH=spaced``: the appends, and the pause after each.
SPACED_APPENDS, SPACED_GAP_S = 30, 1.0


def measure_spaced(label: str, embedder: str) -> None:
    """``WRITES_BENCH=spaced``: the sidecar's CPU per append when appends come one at a time (the
    module's doc)."""
    from sidecar.index.chunker import chunk_markdown
    from sidecar.retrieval.vectors import embed_text

    base, root, side = _corpus_sidecar("bench-writes-spaced-", embedder)
    raw_dir = base / "raw"
    raw_dir.mkdir()
    dir_fd = os.open(raw_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with httpx.Client(base_url=side.url, timeout=30) as client:
            wait_logged(side.log, "kg.backfilled")
            if embedder != "none":
                wait_embedded(client)
            paths = [f"daily/2027-01-{i % 20 + 1:02d}.md" for i in range(SPACED_APPENDS)]
            for path in dict.fromkeys(paths):  # each file's first append since start reads it whole
                client.post("/memory/write", json={"path": path, "content": "- warm\n", "mode": "append"})
            time.sleep(3 * SPACED_GAP_S)  # what the start and those appends left to do, done
            pid = side.proc.pid
            cpu0, t0 = cpu_s(pid), time.monotonic()
            time.sleep(SPACED_APPENDS * SPACED_GAP_S)
            idle = (cpu_s(pid) - cpu0) / (time.monotonic() - t0)  # CPU seconds a second, nothing to do
            lines = [f"- spaced{i}x noted during the rollout review\n" for i in range(SPACED_APPENDS)]
            before = {path: (root / path).read_bytes() if (root / path).exists() else b"" for path in set(paths)}
            cpu0, t0 = cpu_s(pid), time.monotonic()
            seq = 0
            for path, line in zip(paths, lines, strict=True):
                answer = client.post("/memory/write", json={"path": path, "content": line, "mode": "append"})
                seq = answer.raise_for_status().json()["seq"]
                time.sleep(SPACED_GAP_S)
            client.post("/memory/search", json={"query": "spaced0x", "after_seq": seq}).raise_for_status()
            if embedder != "none":
                wait_embedded(client)
            took = (cpu_s(pid) - cpu0 - idle * (time.monotonic() - t0)) / SPACED_APPENDS
        texts = dict(before)
        raw_write = raw_embed = 0.0
        model = RawQueryEmbedder() if embedder != "none" else None
        for path, line in zip(paths, lines, strict=True):
            texts[path] += line.encode()
            cpu = time.process_time()
            durable_replace_raw(dir_fd, "note.md", texts[path])
            raw_write += time.process_time() - cpu
            if model is not None:  # the chunk the append changed: the file's last, embedded whole
                last = chunk_markdown(texts[path].decode())[-1]
                text = embed_text(last.heading, last.body)
                cpu = time.process_time()
                model(text)
                raw_embed += time.process_time() - cpu
            time.sleep(SPACED_GAP_S)  # spaced as the sidecar's were: each starts as cold
        raw = (raw_write + raw_embed) / SPACED_APPENDS
        parts = f"{raw_write / SPACED_APPENDS * 1000:.2f} ms durable" + (
            f" + {raw_embed / SPACED_APPENDS * 1000:.2f} ms the changed chunk's session.run"
            if model is not None
            else ""
        )
        report(
            f"[spaced, {label}] CPU per append, one every {SPACED_GAP_S:g} s",
            f"{took * 1000:.2f} ms",
            f"<= 5 ms; raw {raw * 1000:.2f} ms ({parts}), ratio {took / raw:.1f}x; idle {idle * 1000:.2f} ms a second "
            f"subtracted; load average {os.getloadavg()[0]:.1f}",
        )
    finally:
        os.close(dir_fd)
        side.stop()
        shutil.rmtree(base, ignore_errors=True)


def _start_in(tree: str, root: Path, env: dict[str, str]) -> SidecarProcess:
    """``memory-sidecar serve`` from the source tree ``tree`` (its ``sidecar`` package first on the path)."""
    port = free_port()
    log = root.parent / f"sidecar-{port}.log"
    argv = [sys.executable, "-m", "sidecar", "serve", "--memory-dir", str(root), "--port", str(port)]
    argv += ["--log-format", "json"]
    full = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", **env, "PYTHONPATH": tree}
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=full, cwd=tree)
    return SidecarProcess(proc, port, log, argv).wait_ready(60)


def append_cpu_rounds(label: str, clients: dict[str, httpx.Client], pids: dict[str, int], base: Path) -> None:
    """The sequential appends' rate and each sidecar's CPU per append (the module's doc):
    ``CPU_ROUNDS`` rounds of ``N_RATE / CPU_ROUNDS`` appends to each sidecar in turn, then as many
    raw durable replacements (the disk's limit, this process's CPU), so all see the same host load."""
    per_round = max(1, int(os.environ.get("WRITES_CPU_APPENDS", N_RATE)) // CPU_ROUNDS)
    cpu: dict[str, list[float]] = {name: [] for name in clients}
    raw: list[tuple[float, float]] = []  # (CPU s per replacement, replacements per second)
    elapsed = 0.0
    for r in range(CPU_ROUNDS):
        for name in list(clients)[:: 1 if r % 2 == 0 else -1]:  # each goes first every other round
            client = clients[name]
            cpu0, t0 = cpu_s(pids[name]), time.perf_counter()
            for i in range(per_round):
                seq = client.post(
                    "/memory/write", json={"path": f"topics/w{i % 20}.md", "content": "- fact", "mode": "append"}
                ).json()["seq"]
            if name == "this tree":
                elapsed += time.perf_counter() - t0
            # Until the last append is indexed. The after-hooks (the journal's entry, the graph's
            # reading, which lets a changed file linger) follow on their own, in this round or the
            # next, as they do behind a steady stream of appends: the median round has them.
            client.post("/memory/search", json={"query": "fact", "after_seq": seq})
            cpu[name].append((cpu_s(pids[name]) - cpu0) / per_round)
        started, t0 = time.process_time(), time.perf_counter()
        rate = raw_durable_writes(base, per_round, f"raw-limit-{r}")
        raw.append(((time.process_time() - started) / per_round, rate))
    load = os.getloadavg()[0]
    report(
        f"[{label}] durable writes per second (sequential HTTP, 20 files)",
        f"{per_round * CPU_ROUNDS / elapsed:.0f} writes/s",
        "",
    )
    for name, rounds in cpu.items():
        report(
            f"[{label}] sidecar CPU per small append ({name}; all its threads, hooks included)",
            f"median {statistics.median(rounds) * 1000:.2f} ms, rounds {min(rounds) * 1000:.2f}-{max(rounds) * 1000:.2f}",
            f"<= 5 ms; {CPU_ROUNDS} rounds of {per_round}; load average {load:.1f}",
        )
    if len(cpu) == 2:
        paired = [a - b for a, b in zip(cpu["this tree"], cpu["baseline"], strict=True)]
        report(
            "  this tree less the baseline, round by round",
            f"median {statistics.median(paired) * 1000:+.2f} ms, rounds "
            f"{min(paired) * 1000:+.2f} to {max(paired) * 1000:+.2f}",
            "",
        )
    report(
        "  the limit, interleaved: the same replacements without the sidecar",
        f"median {statistics.median(c for c, _ in raw) * 1000:.2f} ms of CPU, "
        f"{statistics.median(w for _, w in raw):.0f} writes/s",
        "temp, write, fsync, rename, dir fsync",
    )


if __name__ == "__main__":
    main()
