"""The load generator of the ``load`` and ``http`` benchmarks, and what they measure on the server.

Traffic comes from wrk when it is installed (Debian/Ubuntu: ``apt-get install -y wrk``), driven by
``load.lua``: one connection per wrk thread, every request formatted once at start, every response
timed and written out by the script. Without wrk (or with ``LOAD_GENERATOR=python``) it comes
from aiohttp clients in the bench process, which then takes a good part of the CPU the server
shares (the report says which generator ran).

A run lasts ``warmup + seconds``. Only responses completed inside the measured window (the last
``seconds``) count for throughput and latency; the server's CPU and RSS are read from /proc at
both ends of that window and once a second in between, so the CPU per request is the server's CPU
inside the window over the requests answered inside it. The generator's CPU is for the whole run.

With ``probe=True`` each writer follows every acknowledged write with searches for the write's
unique token, the first with the write's ``seq`` as ``after_seq`` (which waits until the index has
applied it), any further one plain, until an answer shows the token: write -> searchable under the
load, from the write's request to that answer. Those searches are kind ``probe``.

With ``write_every`` above 0 the writers write at a fixed rate instead of one write right after the
last: each starts a write at most once every ``write_every`` seconds, on a schedule of its own (the
writers' phases spread over one period), so the number of writes beside the searches does not
follow how fast the server finds them. A write whose turn came while its writer was still busy
starts at once and counts as late (``Run.late_writes``); the schedule does not catch up.

An append is one line: its writer's unique token, then words. With ``tier_words`` above 0 that
share of the appends carries 12-20 words drawn as the generated corpus draws its own (by
frequency, of its 5,000 commonest), as a user's note shares its words with the notes before it: the duplicate check then
searches the tier for its rarest ones. The others carry the same five words every time ("noted
during the load run"), too few beside the token for any line of the tier to be a duplicate of it,
so the check never searches.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
import random
import re
import resource
import shutil
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.support.procs import cpu_s, process_tree, tree_rss_kb

__all__ = ["WRK_HINT", "Run", "drive", "pick_generator", "server_cpu_s"]

WRK_HINT = "wrk is not installed: apt-get update && apt-get install -y wrk (or LOAD_GENERATOR=python)"
WRITE_FILES = 40  # appends spread over topics/load-NN.md, well under the per-file cap
SAMPLE_S = 1.0
TIER_SENTENCES = 2000  # lines of tier words the appends draw from (``tier_words``)
TIER_VOCAB = 5000  # the corpus's commonest words, which those lines are made of
PLAIN_APPEND = "noted during the load run"
#: Runs started in this process: each draws its queries with a seed of its own (a search connection
#: replaying the query sequence it drew in an earlier run would find every query vector cached).
_runs = itertools.count()


def server_cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) of ``pid`` and anything it started."""
    total = 0.0
    for p in process_tree(pid):
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            total += cpu_s(p)
    return total


def thread_cpu_s(pid: int) -> dict[str, float]:
    """CPU seconds of ``pid``'s process tree by thread name (digits dropped, so a pool's threads
    add up; a child process's threads prefixed ``child:``)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for p in process_tree(pid):
        for stat in Path(f"/proc/{p}/task").glob("*/stat"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                head, tail = stat.read_text().rsplit(")", 1)
                name = re.sub(r"[\d_-]+$", "", head.split("(", 1)[1]) or "?"
                name = name if p == pid else f"child:{name}"
                fields = tail.split()
                out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def pick_generator() -> tuple[str | None, str]:
    """(path of wrk, or None for the Python generator; a line saying which and why)."""
    wanted = os.environ.get("LOAD_GENERATOR", "auto")
    if wanted not in ("auto", "wrk", "python"):
        raise SystemExit(f"LOAD_GENERATOR must be auto, wrk or python, not {wanted!r}")
    wrk = shutil.which("wrk") if wanted != "python" else None
    if wrk is not None:
        out = subprocess.run([wrk, "--version"], capture_output=True, text=True, check=False)
        lines = (out.stdout or out.stderr).splitlines()
        version = lines[0].split(" [")[0] if lines else "wrk"
        return wrk, f"{version} + tests/bench/load.lua (one connection per wrk thread)"
    if wanted == "wrk":
        raise SystemExit(f"LOAD_GENERATOR=wrk but {WRK_HINT}")
    why = "LOAD_GENERATOR=python" if wanted == "python" else WRK_HINT
    return None, f"python aiohttp clients in the bench process ({why}); they share the server's cores"


@dataclass
class Sample:
    at: float  # time.monotonic()
    cpu_s: float
    rss_kb: int
    counted: int = 0  # what drive's ``count`` read then (0 without one)
    threads: dict[str, float] = field(default_factory=dict)  # thread_cpu_s then


@dataclass
class Run:
    """One generator run against one server process."""

    started: float
    warm_end: float
    end: float
    # (kind, status, completed at [time.monotonic()], latency s), every response of the run
    responses: list[tuple[str, int, float, float]] = field(default_factory=list)
    acked: list[tuple[str, str, int]] = field(default_factory=list)  # (path, token, seq) of every 201 write
    degraded_at: list[float] = field(default_factory=list)  # completion times of searches answered "degraded"
    # (found at [time.monotonic()], write -> searchable s, searches it took (-1: not found within
    # 30 s), the write's seq)
    searchable: list[tuple[float, float, int, int]] = field(default_factory=list)
    written: dict[int, tuple[float, float]] = field(default_factory=dict)  # seq -> (sent, acknowledged)
    samples: list[Sample] = field(default_factory=list)
    generator_cpu_s: float = 0.0
    transport_errors: int = 0
    late_writes: int = 0  # writes that started past their turn on the fixed-rate schedule

    def window(self) -> list[tuple[str, int, float, float]]:
        return [r for r in self.responses if self.warm_end <= r[2] <= self.end]

    @property
    def seconds(self) -> float:
        return self.end - self.warm_end

    def count(self, kind: str | None = None) -> int:
        return sum(1 for r in self.window() if kind is None or r[0] == kind)

    def degraded(self) -> int:
        """Searches in the measured window answered without a leg (``"degraded"``: BM25 alone)."""
        return sum(1 for t in self.degraded_at if self.warm_end <= t <= self.end)

    def rate(self, kind: str | None = None) -> float:
        return self.count(kind) / self.seconds

    def latencies_ms(self, kind: str) -> list[float]:
        return [r[3] * 1000 for r in self.window() if r[0] == kind]

    def statuses(self) -> Counter[tuple[str, int]]:
        return Counter((r[0], r[1]) for r in self.window())

    def at(self, when: float) -> Sample:
        """The sample taken closest to ``when``."""
        return min(self.samples, key=lambda s: abs(s.at - when))

    @property
    def server_cpu(self) -> float:
        """The server's CPU seconds inside the measured window."""
        return self.at(self.end).cpu_s - self.at(self.warm_end).cpu_s

    def cpu_per_request_ms(self) -> float:
        n = self.count()
        return self.server_cpu * 1000 / n if n else float("nan")

    def generator_cpu_per_request_ms(self) -> float:
        n = len(self.responses)
        return self.generator_cpu_s * 1000 / n if n else float("nan")

    def thread_cpu(self) -> dict[str, float]:
        """The server's CPU seconds inside the measured window, by thread name (``thread_cpu_s``)."""
        first, last = self.at(self.warm_end).threads, self.at(self.end).threads
        return {name: cpu - first.get(name, 0.0) for name, cpu in last.items()}

    def counted(self) -> tuple[int, int]:
        """What drive's ``count`` read at the start and at the end of the measured window."""
        return self.at(self.warm_end).counted, self.at(self.end).counted

    def searchable_ms(self) -> list[float]:
        """Write -> searchable of the probed writes found inside the measured window."""
        return [s[1] * 1000 for s in self.searchable if self.warm_end <= s[0] <= self.end and s[2] > 0]

    def searchable_polls(self) -> list[int]:
        """Searches each probed write inside the window took until found (-1: never found)."""
        return [s[2] for s in self.searchable if self.warm_end <= s[0] <= self.end]

    def rss_window(self) -> list[int]:
        """RSS samples (kB) from the end of the warm-up to the end of the window."""
        return [s.rss_kb for s in self.samples if self.warm_end - 0.05 <= s.at <= self.end + 0.05]


def drive(
    url: str,
    pid: int,
    *,
    seconds: float,
    warmup: float,
    connections: int,
    writers: int,
    queries: list[str],
    work: Path,
    wrk: str | None,
    probe: bool = False,
    count: Callable[[], int] | None = None,
    write_every: float = 0.0,
    tier_words: float = 0.0,
) -> Run:
    """Load ``url`` (the server is process ``pid``) for ``warmup + seconds``: ``writers`` connections
    only write (appends; with ``probe``, each followed by searches until it is found), the others
    only search; every connection waits for its answer. ``count``, when given, is read with every
    sample of the server (``Sample.counted``). ``write_every`` > 0: each writer starts a write at
    most once every that many seconds, on a fixed schedule (see the module's doc). ``tier_words``:
    the share of appends that carry words of the tier (see the module's doc)."""
    seed = 1000 * (next(_runs) + 1)
    lines = tier_sentences(TIER_SENTENCES, seed) if tier_words > 0 else []
    if wrk is not None:
        return _drive_wrk(
            wrk,
            url,
            pid,
            seconds,
            warmup,
            connections,
            writers,
            queries,
            work,
            probe,
            count,
            seed,
            write_every,
            (tier_words, lines),
        )
    return asyncio.run(
        _drive_python(
            url,
            pid,
            seconds,
            warmup,
            connections,
            writers,
            queries,
            probe,
            count,
            seed,
            write_every,
            (tier_words, lines),
        )
    )


def tier_sentences(n: int, seed: int) -> list[str]:
    """``n`` lines of 12-20 words drawn as ``tests.support.corpus`` draws the corpus's (by
    frequency), from its 5,000 commonest words, which a generated tier of a few hundred chunks
    holds nearly all of: the words of such a line are the tier's, the line itself not."""
    from tests.support.corpus import VOCAB

    rng = random.Random(seed)
    words = VOCAB[:TIER_VOCAB]
    weights = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(len(words))))
    return [" ".join(rng.choices(words, cum_weights=weights, k=rng.randint(12, 20))) for _ in range(n)]


def append_line(token: str, rng: random.Random, appends: tuple[float, list[str]]) -> str:
    """An append's content: the token, then tier words (a share ``appends[0]`` of the time) or the
    plain words."""
    share, lines = appends
    words = rng.choice(lines) if lines and rng.random() < share else PLAIN_APPEND
    return f"- {token} {words}"


def _sample_times(started: float, warm_end: float, end: float) -> list[float]:
    ticks = [started + k * SAMPLE_S for k in range(int((end - started) / SAMPLE_S) + 1)]
    return sorted({*ticks, warm_end, end})


def _sampler(
    pid: int, times: list[float], into: list[Sample], stop: threading.Event, count: Callable[[], int] | None
) -> None:
    for when in times:
        if stop.wait(max(0.0, when - time.monotonic())):
            return
        threads = thread_cpu_s(pid)
        into.append(Sample(time.monotonic(), server_cpu_s(pid), tree_rss_kb(pid), count() if count else 0, threads))


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _self_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _drive_wrk(
    wrk: str,
    url: str,
    pid: int,
    seconds: float,
    warmup: float,
    connections: int,
    writers: int,
    queries: list[str],
    work: Path,
    probe: bool,
    count: Callable[[], int] | None,
    seed: int,
    write_every: float,
    appends: tuple[float, list[str]] = (0.0, []),
) -> Run:
    work.mkdir(parents=True, exist_ok=True)
    for stale in ("responses.tsv", "summary.tsv"):
        (work / stale).unlink(missing_ok=True)
    (work / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (work / "appends.txt").write_text("".join(line + "\n" for line in appends[1]))
    env = {
        **os.environ,
        "LOAD_WRK_DIR": str(work),
        "LOAD_WRITERS": str(writers),
        "LOAD_WRITE_FILES": str(WRITE_FILES),
        "LOAD_PROBE": "1" if probe else "0",
        "LOAD_SEED": str(seed),
        "LOAD_WRITE_EVERY_MS": f"{write_every * 1000:.3f}",
        "LOAD_TIER_WORDS": f"{appends[0] if appends[1] else 0.0:.3f}",
    }
    script = Path(__file__).with_name("load.lua")
    # A little past the window's end, so the window does not see the connections wind down (wrk
    # takes whole seconds).
    total = math.ceil(warmup + seconds + 0.5)
    argv = [wrk, f"-t{connections}", f"-c{connections}", f"-d{total}s", "--timeout", "30s", "-s", str(script), url]
    cpu_before = _children_cpu_s()
    started = time.monotonic()
    run = Run(started=started, warm_end=started + warmup, end=started + warmup + seconds)
    stop = threading.Event()
    with (work / "wrk.out").open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
        sampler = threading.Thread(
            target=_sampler, args=(pid, _sample_times(started, run.warm_end, run.end), run.samples, stop, count)
        )
        sampler.start()
        try:
            proc.wait(timeout=total + 120)
        finally:
            stop.set()
            sampler.join()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    run.generator_cpu_s = _children_cpu_s() - cpu_before
    if proc.returncode != 0 or not (work / "summary.tsv").exists():
        raise RuntimeError(f"wrk failed ({proc.returncode}): {(work / 'wrk.out').read_text()}")
    summary = {k: int(v) for k, v in (line.split("\t") for line in (work / "summary.tsv").read_text().splitlines())}
    run.transport_errors = summary["connect"] + summary["read"] + summary["write"] + summary["timeout"]
    run.late_writes = summary.get("late_writes", 0)
    for line in (work / "responses.tsv").read_text().splitlines():
        kind, status, us, done_us, *acked = line.split("\t")
        if kind == "searchable":
            run.searchable.append((int(done_us) / 1e6, int(us) / 1e6, int(status), int(acked[2])))
            continue
        run.responses.append((kind, int(status), int(done_us) / 1e6, int(us) / 1e6))
        if acked == ["degraded"]:
            run.degraded_at.append(int(done_us) / 1e6)
        elif acked:
            path, token, seq = acked
            run.acked.append((path, token, int(seq)))
            run.written[int(seq)] = ((int(done_us) - int(us)) / 1e6, int(done_us) / 1e6)
    return run


async def _drive_python(
    url: str,
    pid: int,
    seconds: float,
    warmup: float,
    connections: int,
    writers: int,
    queries: list[str],
    probe: bool,
    count: Callable[[], int] | None,
    seed: int,
    write_every: float,
    appends: tuple[float, list[str]] = (0.0, []),
) -> Run:
    cpu_before = _self_cpu_s()
    started = time.monotonic()
    run = Run(started=started, warm_end=started + warmup, end=started + warmup + seconds)
    until = run.end + 0.5
    stop = threading.Event()
    sampler = threading.Thread(
        target=_sampler, args=(pid, _sample_times(started, run.warm_end, run.end), run.samples, stop, count)
    )
    sampler.start()
    connector = aiohttp.TCPConnector(limit=connections)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=30)) as session:
            await asyncio.gather(
                *(
                    _client(
                        n, n < writers, session, url, until, queries, run, probe, seed, write_every, writers, appends
                    )
                    for n in range(connections)
                )
            )
    finally:
        stop.set()
        await asyncio.to_thread(sampler.join)
    run.generator_cpu_s = _self_cpu_s() - cpu_before  # the sampler thread's reads of /proc included
    return run


async def _client(
    n: int,
    writes: bool,
    session: aiohttp.ClientSession,
    url: str,
    until: float,
    queries: list[str],
    run: Run,
    probe: bool,
    seed: int,
    write_every: float = 0.0,
    writers: int = 1,
    appends: tuple[float, list[str]] = (0.0, []),
) -> None:
    rng = random.Random(seed + n)
    i = 0
    turn = time.monotonic() + write_every * n / max(1, writers)  # the writers' phases spread over one period
    while time.monotonic() < until:
        i += 1
        body: dict[str, object]
        if writes and write_every > 0:
            now = time.monotonic()
            if now > turn + 0.001:
                run.late_writes += 1
                turn = now
            await asyncio.sleep(turn - now)
            turn += write_every
        if writes:
            kind = "write"
            token = f"loadw{n}n{i}x"
            path = f"topics/load-{rng.randrange(WRITE_FILES):02d}.md"
            route, body = "/memory/write", {"path": path, "content": append_line(token, rng, appends)}
        else:
            kind = "search"
            route, body = "/memory/search", {"query": rng.choice(queries), "limit": 10}
        started = time.perf_counter()
        try:
            async with session.post(url + route, json=body) as resp:
                raw = await resp.read()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError):
            run.transport_errors += 1
            continue
        took = time.perf_counter() - started
        run.responses.append((kind, status, time.monotonic(), took))
        if kind == "search" and b'"degraded"' in raw:
            run.degraded_at.append(time.monotonic())
        if kind == "write" and status == 201:
            seq = json.loads(raw)["seq"]
            run.acked.append((path, token, seq))
            run.written[seq] = (time.monotonic() - took, time.monotonic())
            if probe:
                await _probe(session, url, token, seq, started, run)


async def _probe(session: aiohttp.ClientSession, url: str, token: str, seq: int, wrote: float, run: Run) -> None:
    """Search for ``token`` (first with ``after_seq``, then plain) until an answer shows it."""
    polls = 0
    while True:
        polls += 1
        body: dict[str, object] = {"query": token, "limit": 10} | ({"after_seq": seq} if polls == 1 else {})
        started = time.perf_counter()
        try:
            async with session.post(url + "/memory/search", json=body) as resp:
                raw = await resp.read()
                status = resp.status
        except (aiohttp.ClientError, TimeoutError):
            run.transport_errors += 1
            continue
        now = time.perf_counter()
        run.responses.append(("probe", status, time.monotonic(), now - started))
        found = status == 200 and token.encode() in raw
        if found or now - wrote > 30:
            run.searchable.append((time.monotonic(), now - wrote, polls if found else -1, seq))
            return
