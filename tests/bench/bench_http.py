"""What HTTP costs the search route: a real sidecar next to bare aiohttp routes, same load, same run.

The sidecar is a real process (``memory-sidecar serve``) on a generated 10k-chunk memory dir, BM25
only (``MEMORY_SIDECAR_EMBEDDER=none``) and no scheduled consolidation (its first run would
summarise the generated dir's past weeks during the rounds), default settings otherwise. Next to it, two bare aiohttp
processes (``tests/bench/bare_route.py``: aiohttp run the way the sidecar runs it, one route, no
middleware):

- bare: answers a real sidecar search answer of median size, captured first: the limit;
- bare + search: answers the same BM25 search (``TierIndex.search`` from the in-memory postings,
  hits as the sidecar's JSON) over its own index of an identical copy of the memory dir.
- bare + the sidecar's search service: a whole sidecar opened in the bare process over another
  identical copy (the same settings, its postings built and its graph's first reading done), its
  route calling the search service the sidecar's route calls (``SearchService.search``: the limit
  and the spare hits ranked by standing, the lift, the flagged-hit marks, the snippets) with the
  body's query and limit, unchecked. The sidecar against it is the route's own work alone (the
  middleware, the body's checks, the metrics, the index state): the target is the sidecar at
  >= 0.8x its requests/s and CPU per request.

All four get the same requests from the same generator (wrk + ``load.lua``, search connections
only; see ``loadgen.py``), in rotating rounds so that a shared host's drift hits them alike. Per
round: requests/s, and the server's CPU per request over the measured window (what the other
tenants of a shared machine disturb least). Ratios are medians of the per-round ratios. The CPU
per request splits into aiohttp (bare), the search (bare + search minus bare) and the rest of the
sidecar (sidecar minus bare + search: middleware, validation, metrics, the answer's index state).

Before the load: the sidecar's idle RSS once its BM25 postings are built, the knowledge graph has
read every file once (``kg.backfilled``: a fresh memory dir's first reading runs in a child
process for a while after start, and would otherwise share the measured rounds) and it has been
idle long enough to hand back what it does not need (``IdleRelease``: 0.25 s), next to the bare
route's (target: at most the bare route's + 30 MB).

Then (``matching``) a tier where every chunk matches every query: 400 daily notes of repetitive
sections, every paragraph holding every one of eight words and a name or two, queried with two or
three of the words (every other query with a name). The worst case for the snippet windows, which
find and weigh every match of every query word in each hit shown. The graph's lift does not run on
it: its sentences ("Ana checked the ... notes.") state no fact the graph's extractor reads, so the
graph holds no entity for a query to name. Three servers take the same rounds:
the sidecar, a bare route running the same BM25 search with the sidecar's windows, and one with a
window at each hit's first matching word (no cluster chosen, no highlights) and no lift: the
target is the sidecar at most 1.5x that one's CPU per request.

Then (``split``) where the search operation's CPU goes, in this process, on both tiers: a real
sidecar opened in process (``open_sidecar``, the same settings) over a copy of each, once its
postings are built and its knowledge graph has read every file, and per query,
each part timed on the event loop's thread (``time.thread_time``), one query after another:
the bare route's search (BM25 top 10 and their answers), the limit + ``SLACK`` hits the search
service reads, their ranking by standing (``by_standing``), the search service's whole answer, and
the search operation's (``ops.search``: the service's answer and the index state), and what a
search reading no spare hits would spend on the same two steps (BM25 top 10, ``by_standing`` over
them: the bound on what ranking by standing inside the index could save). What HTTP adds
on top (aiohttp, the middleware chain, the JSON body) is the route's CPU per request above less
the operation's.

Not in the default run (``HTTP_PARTS=profile``): the whole application served in this process
(``create_app``, as ``serve`` builds it, on a loopback port) over the 10k-chunk tier, once its
postings are built and the graph has read every file, and ``HTTP_PROFILE_REQUESTS`` searches sent
by a client in another process on one keep-alive connection, profiled on the event loop's thread
(``cProfile`` timed by ``time.thread_time``): the functions that spend the most CPU of their own,
and the loop thread's CPU per request without the profiler beside it (a pass of its own).

Not in the default run either (``HTTP_PARTS=standing``): how far the answers would move if the
index ranked by score times standing itself and read only the limit (no spare hits), on both tiers:
every BM25 hit weighed by its standing, the best 10 then reordered as ``by_standing`` reorders
(``more_terms_first``, ``restated_first``), against ``by_standing`` over the limit + ``SLACK`` hits
as the search service ranks them (neither leaves out copies of a text shown above).

Nor (``HTTP_PARTS=answers``): the search operation's answers on both tiers (1,250 searches each:
the split's queries at limit 10, and some with ``explain``, markdown highlights, limit 20 and whole
sections), written to ``HTTP_ANSWERS``; with ``HTTP_ANSWERS_BASELINE=DIR``, another checkout's
answers to the same searches, compared one by one (a change that only makes search cheaper must
leave every one identical).

    python -m tests.bench http        HTTP_SECONDS=8 HTTP_ROUNDS=3 HTTP_CONNECTIONS=8 HTTP_WARMUP=2
                                      HTTP_PARTS=route,matching,split HTTP_MATCHING_FILES=400
                                      HTTP_SPLIT_QUERIES=500 (HTTP_PARTS=profile HTTP_PROFILE_REQUESTS=3000
                                      HTTP_PROFILE_SORT=tottime|cumulative) (HTTP_PARTS=standing)
                                      (HTTP_PARTS=answers HTTP_ANSWERS=FILE HTTP_ANSWERS_BASELINE=DIR)
                                      (HTTP_BASELINE=DIR: another checkout's sidecar in the same rounds;
                                      run from a directory without a sidecar package, PYTHONPATH=this tree)
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from sidecar.ops.sidecar import Sidecar
from tests.bench.bare_route import start_bare
from tests.bench.loadgen import Run, drive, pick_generator, server_cpu_s
from tests.bench.util import cpu_reference, pct, report, wait_logged
from tests.support.corpus import make_corpus, make_queries
from tests.support.procs import SidecarProcess, free_port, rss_kb, start_sidecar
from tests.support.waiting import async_wait_until

__all__ = ["main"]

CHUNKS = 10_000
SECONDS = float(os.environ.get("HTTP_SECONDS", "8"))
WARMUP = float(os.environ.get("HTTP_WARMUP", "2"))
ROUNDS = int(os.environ.get("HTTP_ROUNDS", "3"))
CONNECTIONS = int(os.environ.get("HTTP_CONNECTIONS", "8"))
#: BM25 only; no scheduled consolidation: on a generated memory dir of old daily notes its first run
#: (shortly after start, since it is overdue) summarises every past week and would share the rounds.
STEADY = {"MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_CONSOLIDATE_INTERVAL": "0"}
IDLE_RSS_OVER_BARE_MB = 30  # the target: idle RSS (BM25 only) at most a bare aiohttp route's + this
PARTS = os.environ.get("HTTP_PARTS", "route,matching,split").split(",")
SPLIT_QUERIES = int(os.environ.get("HTTP_SPLIT_QUERIES", "500"))
PROFILE_REQUESTS = int(os.environ.get("HTTP_PROFILE_REQUESTS", "3000"))
#: How the profile's functions are ordered: by their own CPU ("tottime") or with their callees' ("cumulative").
PROFILE_SORT = os.environ.get("HTTP_PROFILE_SORT", "tottime")
#: The tier where every chunk matches every query: files of repetitive notes.
MATCHING_FILES = int(os.environ.get("HTTP_MATCHING_FILES", "400"))
MATCHING_WORDS = ("deploy", "rollback", "database", "release", "incident", "staging", "migration", "latency")
#: Names in the notes and every other query (the graph reads no fact of these notes: no entity, no lift).
MATCHING_NAMES = ("Ana", "Ben", "Postgres", "Grafana")
MATCHING_TARGET = 1.5  # a search <= this x the same search with first-word windows and no lift
#: Another checkout of the project: its sidecar takes the same rounds beside this tree's (route and
#: matching), so a change is read against the code before it in one run. The bench then runs from a
#: directory holding no ``sidecar`` package, with ``PYTHONPATH`` naming this tree: each server finds
#: its code by its ``PYTHONPATH``.
BASELINE = os.environ.get("HTTP_BASELINE", "")


def wait_postings(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while httpx.get(f"{url}/memory/status", timeout=10).json()["bm25"]["engine"] != "postings":
        if time.monotonic() > deadline:
            raise RuntimeError(f"BM25 postings not built within {timeout:g} s")
        time.sleep(0.05)


def typical_answer(url: str, queries: list[str]) -> bytes:
    """The sidecar's answer of median size over ``queries`` (limit 10, as the load sends)."""
    with httpx.Client(timeout=10) as client:
        answers = [client.post(f"{url}/memory/search", json={"query": q, "limit": 10}).content for q in queries]
    return sorted(answers, key=len)[len(answers) // 2]


def idle_cpu_share(pid: int, seconds: float = 3.0) -> float:
    before = server_cpu_s(pid)
    time.sleep(seconds)
    return (server_cpu_s(pid) - before) / seconds


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _rounds(values: list[float], fmt: str) -> str:
    return ", ".join(format(v, fmt) for v in values)


NAMES = {
    "bare": "bare aiohttp route",
    "search": "bare aiohttp route + the same search",
    "service": "bare aiohttp route + the sidecar's search service",
    "sidecar": "sidecar POST /memory/search",
}


def _rotate(
    targets: dict[str, tuple[str, int]],
    runs: dict[str, list[Run]],
    names: dict[str, str],
    queries: list[str],
    base: Path,
    wrk: str | None,
) -> None:
    """``ROUNDS`` rounds of the same load on every target, the order rotated each round."""
    order = list(targets)
    for r in range(ROUNDS):
        for name in order[r % len(order) :] + order[: r % len(order)]:
            url, pid = targets[name]
            run = drive(
                url,
                pid,
                seconds=SECONDS,
                warmup=WARMUP,
                connections=CONNECTIONS,
                writers=0,
                queries=queries,
                work=base / f"gen-{name}",
                wrk=wrk,
            )
            bad = {k: n for k, n in run.statuses().items() if k[1] != 200}
            if bad or run.transport_errors:
                raise RuntimeError(f"{name}: non-200 answers {bad}, {run.transport_errors} transport errors")
            runs[name].append(run)
            print(
                f"# round {r + 1} {names[name]}: {run.rate():.0f} req/s, "
                f"{run.cpu_per_request_ms():.3f} ms CPU/request, {run.server_cpu / run.seconds:.2f} cores",
                flush=True,
            )


def _baseline(root: Path) -> SidecarProcess | None:
    """The baseline tree's sidecar over ``root`` (``HTTP_BASELINE``), once its postings are built
    and its graph has read every file; None without a baseline."""
    if not BASELINE:
        return None
    side = start_sidecar(root, env={**STEADY, "PYTHONPATH": str(Path(BASELINE).resolve())}, wait=300)
    try:
        wait_postings(side.url)
        wait_logged(side.log, "kg.backfilled")
    except BaseException:
        side.stop()
        raise
    return side


def _baseline_rows(part: str, cpu: dict[str, list[float]], rate: dict[str, list[float]]) -> None:
    """This tree's sidecar against the baseline's, round by round (``HTTP_BASELINE``)."""
    if not BASELINE:
        return
    report(
        f"{part}: baseline sidecar ({BASELINE}), server CPU per request",
        f"median {_median(cpu['baseline']):.3f} ms (rounds: {_rounds(cpu['baseline'], '.3f')})",
    )
    ratios = [s / b for s, b in zip(cpu["sidecar"], cpu["baseline"], strict=True)]
    report(
        f"{part}: sidecar / baseline sidecar, CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
    )
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["baseline"], strict=True)]
    report(
        f"{part}: sidecar / baseline sidecar, requests/s", f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})"
    )


def main() -> None:
    if BASELINE and (Path.cwd() / "sidecar").is_dir():
        raise SystemExit("HTTP_BASELINE: run from a directory without a sidecar package (PYTHONPATH=this tree)")
    wrk, generator = pick_generator()
    print(f"# load generator: {generator}", flush=True)
    if "route" in PARTS:
        route(wrk, generator)
    if "matching" in PARTS:
        matching(wrk)
    if "split" in PARTS:
        asyncio.run(split())
    if "profile" in PARTS:
        asyncio.run(profile())
    if "standing" in PARTS:
        standing_inside()
    if "answers" in PARTS:
        answers()


def route(wrk: str | None, generator: str) -> None:
    """The search route beside the bare routes, and the idle RSS (the module docstring)."""
    reference_before = cpu_reference()
    base = Path(tempfile.mkdtemp(prefix="bench-http-"))
    root = base / "memory"
    corpus_bytes = make_corpus(root, CHUNKS)
    make_corpus(base / "memory-copy", CHUNKS)  # the same files (same seed), for the bare search's own index
    queries = make_queries(2_000)
    side = start_sidecar(root, env=STEADY, wait=300)
    bares = []
    names = {**NAMES, "baseline": f"baseline sidecar ({BASELINE})"} if BASELINE else NAMES
    runs: dict[str, list[Run]] = {name: [] for name in names}
    baseline = None
    try:
        if BASELINE:
            make_corpus(base / "memory-baseline", CHUNKS)
            baseline = _baseline(base / "memory-baseline")
        wait_postings(side.url)
        wait_logged(side.log, "kg.backfilled")
        time.sleep(2.0)  # idle: the postings build's transient heap handed back
        idle_cpu = idle_cpu_share(side.proc.pid)
        rss_idle, hwm_idle = rss_kb(side.proc.pid), rss_kb(side.proc.pid, "VmHWM")
        answer = typical_answer(side.url, queries[:200])
        bares.append(bare := start_bare(base / "bare", free_port(), body=answer))
        bares.append(searching := start_bare(base / "bare", free_port(), memory_dir=base / "memory-copy"))
        make_corpus(base / "memory-service", CHUNKS)  # the service's own copy: it keeps its index there
        bares.append(
            serving := start_bare(
                base / "bare", free_port(), memory_dir=base / "memory-service", service=True, wait=600
            )
        )
        time.sleep(1.0)
        rss_bare = rss_kb(bare.proc.pid)
        search_answer = typical_answer(searching.url, queries[:200])
        targets = {
            "bare": (bare.url, bare.proc.pid),
            "search": (searching.url, searching.proc.pid),
            "service": (serving.url, serving.proc.pid),
            "sidecar": (side.url, side.proc.pid),
        }
        if baseline is not None:
            targets["baseline"] = (baseline.url, baseline.proc.pid)
        _rotate(targets, runs, names, queries, base, wrk)
    finally:
        for one in bares:
            one.stop()
        side.stop()
        if baseline is not None:
            baseline.stop()
        shutil.rmtree(base, ignore_errors=True)

    print(
        f"# {os.cpu_count()} cores shared by the servers, the generator and other tenants; {CONNECTIONS} connections "
        f"searching, {ROUNDS} rounds of {WARMUP:g} s warm-up + {SECONDS:g} s measured per server, rotated; "
        f"corpus {CHUNKS} chunks ({corpus_bytes / 1e6:.1f} MB)",
        flush=True,
    )
    report(
        "http: host speed (5M-step Python loop, before / after)",
        f"{reference_before:.0f} / {cpu_reference():.0f} ms (a shared host: figures scale with it)",
    )
    report("http: generator", generator.split(" (", maxsplit=1)[0])
    report(
        "http: answer size, median",
        f"sidecar {len(answer)} bytes (served as-is by the bare route); bare + search {len(search_answer)} bytes",
    )
    rate = {k: [r.rate() for r in v] for k, v in runs.items()}
    cpu = {k: [r.cpu_per_request_ms() for r in v] for k, v in runs.items()}
    cores = {k: [r.server_cpu / r.seconds for r in v] for k, v in runs.items()}
    for name, label in NAMES.items():
        report(
            f"http: {label}, requests/s", f"median {_median(rate[name]):.0f}/s (rounds: {_rounds(rate[name], '.0f')})"
        )
        report(
            f"http: {label}, server CPU per request",
            f"median {_median(cpu[name]):.3f} ms (rounds: {_rounds(cpu[name], '.3f')}); "
            f"{_median(cores[name]):.2f} cores",
        )
        lat = [ms for r in runs[name] for ms in r.latencies_ms("search")]
        report(
            f"http: {label}, latency", f"p50 {pct(lat, 50):.2f} ms  p99 {pct(lat, 99):.2f} ms  max {max(lat):.0f} ms"
        )
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["bare"], strict=True)]
    report(
        "http: sidecar / bare route, requests/s",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.6x",
    )
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["search"], strict=True)]
    report(
        "http: sidecar / bare route + search, requests/s",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x",
    )
    ratios = [b / s for s, b in zip(cpu["sidecar"], cpu["search"], strict=True)]
    report(
        "http: bare route + search / sidecar, CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x (the route's own work <= 25% of the search's)",
    )
    bare_ms, search_ms, side_ms = (_median(cpu[k]) for k in ("bare", "search", "sidecar"))
    report(
        "http: sidecar CPU per request = aiohttp + search + rest",
        f"{side_ms:.3f} = {bare_ms:.3f} + {search_ms - bare_ms:.3f} + {side_ms - search_ms:.3f} ms",
    )
    # The route's own work alone: the same search service in a bare route, against the sidecar's route.
    ratios = [s / b for s, b in zip(rate["sidecar"], rate["service"], strict=True)]
    report(
        "http: sidecar / bare route + the sidecar's search service, requests/s",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x",
    )
    ratios = [b / s for s, b in zip(cpu["sidecar"], cpu["service"], strict=True)]
    report(
        "http: bare route + the sidecar's search service / sidecar, CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        ">= 0.8x (the route's own work <= 25% of the search's)",
    )
    service_ms = _median(cpu["service"])
    report(
        "http: sidecar CPU per request = aiohttp + the search service + the route's own work",
        f"{side_ms:.3f} = {bare_ms:.3f} + {service_ms - bare_ms:.3f} + {side_ms - service_ms:.3f} ms",
        f"the route's own work <= {service_ms / 4:.3f} ms (25% of the service's route, for 0.8x)",
    )
    gen = [r.generator_cpu_per_request_ms() for v in runs.values() for r in v]
    report("http: generator CPU per request", f"median {_median(gen):.3f} ms")
    report(
        "http: idle RSS, sidecar BM25 only, 10k chunks",
        f"{rss_idle / 1024:.1f} MB (VmHWM {hwm_idle / 1024:.1f} MB)",
        f"<= the bare route's + {IDLE_RSS_OVER_BARE_MB} MB = {rss_bare / 1024 + IDLE_RSS_OVER_BARE_MB:.1f} MB",
    )
    report(
        "http: idle RSS, bare aiohttp route",
        f"{rss_bare / 1024:.1f} MB",
        f"the sidecar holds {(rss_idle - rss_bare) / 1024:.1f} MB more",
    )
    report("http: idle CPU, sidecar (3 s with no requests)", f"{idle_cpu * 100:.2f}% of a core")
    _baseline_rows("http", cpu, rate)


if __name__ == "__main__":
    main()


MATCHING = {
    "first": "bare route + the same search, windows at the first matching word",
    "search": "bare route + the same search",
    "sidecar": "sidecar POST /memory/search",
}


def make_matching(root: Path, files: int, seed: int = 5) -> int:
    """``files`` daily notes of repetitive sections, every paragraph holding every one of
    ``MATCHING_WORDS`` (some several times) and a name or two; return the bytes written."""
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        day = dt.date(2025, 1, 1) + dt.timedelta(days=n)
        lines = [f"# {day:%Y-%m-%d}"]
        for section in range(4):
            lines.append(f"\n## {rng.choice(MATCHING_NAMES)} {section + 1}")
            for _ in range(2):
                words = [*MATCHING_WORDS, *rng.choices(MATCHING_WORDS, k=8)]
                rng.shuffle(words)
                sentences = [
                    f"{rng.choice(MATCHING_NAMES)} checked the {' '.join(words[i : i + 4])} notes."
                    for i in range(0, len(words), 4)
                ]
                lines.append("\n" + " ".join(sentences))
        path = root / "daily" / f"{day:%Y-%m-%d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines) + "\n"
        path.write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def matching_queries(n: int, seed: int = 9) -> list[str]:
    """Two or three of ``MATCHING_WORDS``, a name with every other query (the graph's lift)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.sample(MATCHING_WORDS, rng.randint(2, 3))
        out.append(" ".join([rng.choice(MATCHING_NAMES), *words] if i % 2 else words))
    return out


def matching(wrk: str | None) -> None:
    """A tier where every chunk matches every query (the worst case for snippet windows, which find
    and weigh every match, and for the graph's lift): the sidecar beside bare routes running the
    same BM25 search with the sidecar's windows, and with a window at the first matching word."""
    base = Path(tempfile.mkdtemp(prefix="bench-http-matching-"))
    root = base / "memory"
    size = make_matching(root, MATCHING_FILES)
    make_matching(base / "memory-copy", MATCHING_FILES)
    queries = matching_queries(500)
    side = start_sidecar(root, env=STEADY, wait=300)
    bares = []
    names = {**MATCHING, "baseline": f"baseline sidecar ({BASELINE})"} if BASELINE else MATCHING
    runs: dict[str, list[Run]] = {name: [] for name in names}
    baseline = None
    try:
        if BASELINE:
            make_matching(base / "memory-baseline", MATCHING_FILES)
            baseline = _baseline(base / "memory-baseline")
        wait_postings(side.url)
        wait_logged(side.log, "kg.backfilled")
        bares.append(first := start_bare(base / "bare", free_port(), memory_dir=base / "memory-copy", first=True))
        bares.append(searching := start_bare(base / "bare", free_port(), memory_dir=base / "memory-copy"))
        targets = {
            "first": (first.url, first.proc.pid),
            "search": (searching.url, searching.proc.pid),
            "sidecar": (side.url, side.proc.pid),
        }
        if baseline is not None:
            targets["baseline"] = (baseline.url, baseline.proc.pid)
        _rotate(targets, runs, names, queries, base, wrk)
    finally:
        for one in bares:
            one.stop()
        side.stop()
        if baseline is not None:
            baseline.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(
        f"# every chunk matches: {MATCHING_FILES} files ({size / 1e6:.1f} MB), {CONNECTIONS} connections, "
        f"{ROUNDS} rounds rotated; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    cpu = {k: [r.cpu_per_request_ms() for r in v] for k, v in runs.items()}
    for name, label in MATCHING.items():
        report(
            f"matching: {label}, server CPU per request",
            f"median {_median(cpu[name]):.3f} ms (rounds: {_rounds(cpu[name], '.3f')})",
        )
    ratios = [s / f for s, f in zip(cpu["sidecar"], cpu["first"], strict=True)]
    report(
        "matching: sidecar / bare route with first-word windows, CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
        f"<= {MATCHING_TARGET}x",
    )
    ratios = [s / f for s, f in zip(cpu["search"], cpu["first"], strict=True)]
    report(
        "matching: the sidecar's windows / first-word windows (bare routes), CPU per request",
        f"{_median(ratios):.2f}x (rounds: {_rounds(ratios, '.2f')})",
    )
    _baseline_rows("matching", cpu, {k: [r.rate() for r in v] for k, v in runs.items()})


def _split_tiers(prefix: str) -> tuple[Path, dict[str, tuple[Path, list[str]]]]:
    """The two tiers the split and standing parts read, built in a new temporary dir (returned, for
    the caller to remove): the 10k-chunk tier and the every-chunk-matches tier, each with its
    ``SPLIT_QUERIES`` queries."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    tiers = {
        "10k chunks": (base / "corpus", make_queries(SPLIT_QUERIES)),
        "every chunk matches": (base / "matching", matching_queries(SPLIT_QUERIES)),
    }
    make_corpus(tiers["10k chunks"][0], CHUNKS)
    make_matching(tiers["every chunk matches"][0], MATCHING_FILES)
    return base, tiers


async def split() -> None:
    """Where the search operation's CPU goes, per query, on both tiers (the module docstring)."""
    from sidecar.contract import SearchRequest
    from sidecar.logs import configure_logging
    from sidecar.ops.search import search
    from sidecar.retrieval.standing import SLACK, by_standing
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings

    configure_logging("console", "warning")
    base, tiers = _split_tiers("bench-http-split-")
    try:
        for name, (root, queries) in tiers.items():
            settings = load_settings({"memory_dir": root}, environ=STEADY)
            async with open_sidecar(settings) as sidecar:
                tier = sidecar.tiers["agent"]
                tier.start_postings()
                await settled(sidecar, root)
                index, limit = tier.index, 10
                spent = dict.fromkeys(SPLIT_PARTS, 0.0)
                for q in queries[:20]:  # warm: the standing cache, the flags of the hits' files
                    await search(sidecar, SearchRequest.from_json({"query": q, "limit": limit}))
                for q in queries:
                    cpu0 = time.thread_time()
                    [hit.as_json("agent") for hit in index.search(q, limit)]
                    cpu1 = time.thread_time()
                    hits = index.search(q, limit + SLACK)
                    cpu2 = time.thread_time()
                    by_standing(hits)
                    cpu3 = time.thread_time()
                    await sidecar.search.search(SearchRequest.from_json({"query": q, "limit": limit}), fallback=False)
                    cpu4 = time.thread_time()
                    await search(sidecar, SearchRequest.from_json({"query": q, "limit": limit}))
                    cpu5 = time.thread_time()
                    hits = index.search(q, limit)
                    cpu6 = time.thread_time()
                    by_standing(hits)
                    cpu7 = time.thread_time()
                    for part, took in zip(
                        SPLIT_PARTS,
                        (cpu1 - cpu0, cpu2 - cpu1, cpu3 - cpu2, cpu4 - cpu3, cpu5 - cpu4, cpu6 - cpu5, cpu7 - cpu6),
                        strict=True,
                    ):
                        spent[part] += took
            report(
                f"split, {name}: CPU per query, in process (load average {os.getloadavg()[0]:.1f})",
                ", ".join(f"{part} {took * 1000 / len(queries):.3f} ms" for part, took in spent.items()),
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


async def settled(sidecar: Sidecar, root: Path) -> None:
    """Until the agent tier's postings are built and the graph has read every file of ``root``, as
    the route's rounds wait for (the lift weighs the hits of a query naming an entity only once the
    graph knows it)."""
    postings = sidecar.tiers["agent"].index.bm25.postings
    await async_wait_until(lambda: postings.snapshot is not None, timeout=300, interval=0.1)
    files = sum(1 for _ in root.rglob("*.md"))
    await async_wait_until(lambda: sidecar.kg.ingest.files_read >= files, timeout=600, interval=0.2)


#: The parts ``split`` times, in its order.
SPLIT_PARTS = (
    "the bare route's search (BM25 top 10 and their answers)",
    "BM25 top limit + SLACK (20)",
    "by_standing over them",
    "the search service's answer",
    "the search operation's (ops.search)",
    "BM25 top limit (10), as a search reading no spare hits would",
    "by_standing over those 10",
)


#: The client of ``profile``: one keep-alive connection, the queries in turn (argv: port, count, a
#: JSON file of queries), every answer read and checked.
_PROFILE_CLIENT = """
import http.client, json, sys
port, count, queries = int(sys.argv[1]), int(sys.argv[2]), json.load(open(sys.argv[3]))
conn = http.client.HTTPConnection("127.0.0.1", port)
for n in range(count):
    body = json.dumps({"query": queries[n % len(queries)], "limit": 10})
    conn.request("POST", "/memory/search", body, {"Content-Type": "application/json"})
    answer = conn.getresponse()
    data = answer.read()
    if answer.status != 200:
        raise SystemExit(f"{answer.status}: {data[:200]!r}")
"""


async def profile() -> None:
    """Where a search request's CPU goes on the event loop's thread (the module docstring)."""
    import cProfile
    import io
    import json
    import pstats
    import sys

    from aiohttp import web

    from sidecar.http.state import SIDECAR
    from sidecar.logs import configure_logging
    from sidecar.server.app import create_app
    from sidecar.settings import load_settings

    configure_logging("console", "warning")
    base = Path(tempfile.mkdtemp(prefix="bench-http-profile-"))
    root = base / "memory"
    make_corpus(root, CHUNKS)
    queries_file = base / "queries.json"
    queries_file.write_text(json.dumps(make_queries(2_000)))
    port = free_port()
    settings = load_settings({"memory_dir": root, "port": str(port)}, environ=STEADY)
    runner = web.AppRunner(create_app(settings), access_log=None)

    async def client(count: int) -> None:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _PROFILE_CLIENT, str(port), str(count), str(queries_file)
        )
        if await proc.wait() != 0:
            raise RuntimeError("the profile's client failed")

    try:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        sidecar = runner.app[SIDECAR]
        sidecar.tiers["agent"].start_postings()
        await settled(sidecar, root)
        await client(300)  # warm: the standing cache, the flags of the hits' files
        cpu0 = time.thread_time()
        await client(PROFILE_REQUESTS)
        bare_ms = (time.thread_time() - cpu0) * 1000 / PROFILE_REQUESTS
        profiler = cProfile.Profile(time.thread_time)
        profiler.enable()
        await client(PROFILE_REQUESTS)
        profiler.disable()
    finally:
        await runner.cleanup()
        shutil.rmtree(base, ignore_errors=True)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats(PROFILE_SORT).print_stats(30 if PROFILE_SORT == "tottime" else 60)
    print(out.getvalue(), flush=True)
    report(
        f"profile: the event loop's CPU per search request, one connection (load average {os.getloadavg()[0]:.1f})",
        f"{bare_ms:.3f} ms without the profiler; {PROFILE_REQUESTS} requests profiled above (their times inflated by it)",
    )


def standing_inside() -> None:
    """How far the answers would move if the index ranked by score times standing itself and read
    only the limit, with no spare hits (``HTTP_PARTS=standing``; the module docstring)."""
    from datetime import UTC, datetime

    from sidecar.index.tier_index import TierIndex
    from sidecar.retrieval.standing import SLACK, by_standing, more_terms_first, restated_first, standing

    today = datetime.now(UTC).date()
    limit = 10
    base, tiers = _split_tiers("bench-http-standing-")
    try:
        for name, (root, queries) in tiers.items():
            index = TierIndex(root)
            index.open()
            index.enable_postings()
            same_order = same_set = 0
            kept: list[float] = []
            for q in queries:
                shown = [hit.id for hit, _, _ in by_standing(index.search(q, limit + SLACK), today)][:limit]
                every = index.search(q, 1_000_000)  # every hit, best BM25 first
                weighed = sorted(
                    ((hit, factor := standing(hit.path, hit.heading, today), hit.score * factor) for hit in every),
                    key=lambda item: -item[2],
                )[:limit]
                if weighed:
                    terms = weighed[0][0].terms
                    weighed = more_terms_first(weighed, terms, today)
                    weighed = restated_first(weighed, lambda item: (item[0].path, item[0].heading, item[0].text), terms)
                inside = [hit.id for hit, _, _ in weighed]
                same_order += inside == shown
                same_set += set(inside) == set(shown)
                kept.append(len(set(inside) & set(shown)) / max(len(shown), 1))
            index.close()
            report(
                f"standing inside the index, {name}: answers of {limit} against today's ({len(queries)} queries, "
                f"load average {os.getloadavg()[0]:.1f})",
                f"same hits in the same order {same_order}, the same hits {same_set}; "
                f"mean share of today's hits kept {statistics.mean(kept):.3f}",
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def answer_bodies(queries: list[str]) -> list[dict[str, object]]:
    """The search bodies ``answers`` sends: each query at the load's limit, and some with
    ``explain``, markdown highlights, a wider limit and whole sections."""
    return [
        *({"query": q, "limit": 10} for q in queries),
        *({"query": q, "limit": 5, "explain": True} for q in queries[:100]),
        *({"query": q, "limit": 20, "highlight": "markdown"} for q in queries[100:200]),
        *({"query": q, "limit": 3, "context": "section"} for q in queries[200:250]),
    ]


async def _answers() -> dict[str, list[dict[str, object]]]:
    """The search operation's answers (``ops.search``, in process, as ``split`` opens the sidecar)
    on both tiers, without what moves between runs (``took_ms``, the index state)."""
    from sidecar.contract import SearchRequest
    from sidecar.logs import configure_logging
    from sidecar.ops.search import search
    from sidecar.server.compose import open_sidecar
    from sidecar.settings import load_settings

    configure_logging("console", "warning")
    base, tiers = _split_tiers("bench-http-answers-")
    got: dict[str, list[dict[str, object]]] = {}
    try:
        for name, (root, queries) in tiers.items():
            settings = load_settings({"memory_dir": root}, environ=STEADY)
            async with open_sidecar(settings) as sidecar:
                sidecar.tiers["agent"].start_postings()
                await settled(sidecar, root)
                rows = []
                for body in answer_bodies(queries):
                    answer: dict[str, object] = dict(await search(sidecar, SearchRequest.from_json(body)))
                    answer.pop("took_ms", None)
                    answer.pop("index", None)
                    rows.append(answer)
                got[name] = rows
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return got


def answers() -> None:
    """``HTTP_PARTS=answers``: the search operation's answers on both tiers (``_answers``), written
    to ``HTTP_ANSWERS`` if set; with ``HTTP_ANSWERS_BASELINE=DIR`` (another checkout of the
    project), the same answers from that tree's ``sidecar`` package (and this bench), in a process
    of its own, compared one by one:
    a change that only makes search cheaper leaves every answer identical."""
    import json
    import subprocess
    import sys

    got = asyncio.run(_answers())
    out = os.environ.get("HTTP_ANSWERS")
    if out:
        Path(out).write_text(json.dumps(got, sort_keys=True))
    baseline = os.environ.get("HTTP_ANSWERS_BASELINE")
    if not baseline:
        return
    with tempfile.TemporaryDirectory(prefix="bench-http-baseline-") as tmp:
        # The baseline's code with this bench (the baseline may predate this part).
        tree = Path(tmp) / "tree"
        tree.mkdir()
        (tree / "sidecar").symlink_to(Path(baseline).resolve() / "sidecar")
        (tree / "tests").symlink_to(Path(__file__).resolve().parents[1])
        theirs_file = Path(tmp) / "answers.json"
        env = {**os.environ, "HTTP_PARTS": "answers", "HTTP_ANSWERS": str(theirs_file), "PYTHONPATH": str(tree)}
        env.pop("HTTP_ANSWERS_BASELINE")
        subprocess.run([sys.executable, "-m", "tests.bench", "http"], cwd=tree, env=env, check=True)
        theirs = json.loads(theirs_file.read_text())
    mine = json.loads(json.dumps(got, sort_keys=True))  # as written: tuples as lists
    for name, rows in mine.items():
        same = sum(a == b for a, b in zip(rows, theirs[name], strict=True))
        report(
            f"answers, {name}: this tree against {baseline} ({len(rows)} searches)",
            f"{same} identical (hits, order, scores, snippets, highlights)",
            "all identical",
        )
