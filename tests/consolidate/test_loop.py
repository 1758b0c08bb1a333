"""A run over a full week of large notes leaves the event loop free: ``/healthz`` answers within
100 ms throughout (the clustering, the changed-value search and the scans run on threads, and
scale with the lines, not their pairs), and no step the run takes on the loop holds it long: the
loop thread's CPU time in each callback is measured (``asyncio.Handle._run`` wrapped while the run
lasts, instrumentation only), a bound that waiting for a busy host's cores does not move;
``consolidate run`` merges typed memories like the route."""

from __future__ import annotations

import asyncio
import gc
import io
import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from sidecar.cli import main
from sidecar.clock import utcnow
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.lag import Stopwatch

Client = TestClient[Any, Any]
WORDS = str.split(
    "the service is now on port host cache queue billing ledger search auth deploy build test release "
    "config value owner moved from to with for and runs at version team on-call schedule backup job"
)


def _big_week(root: Path, note_bytes: int = 48 * 1024) -> None:
    """Seven notes of ``note_bytes`` (half the daily cap) of lines sharing common words, some long."""
    rng = random.Random(5)
    monday = utcnow().date() - timedelta(days=21 + utcnow().date().weekday())
    for n in range(7):
        lines: list[str] = []
        while sum(len(ln) + 3 for ln in lines) < note_bytes:
            size = rng.choice([8, 12, 16, 90])
            words = [rng.choice(WORDS) for _ in range(size)] + [str(rng.randint(1, 10**6))]
            lines.append(" ".join(words).capitalize() + ".")
        note = root / "daily" / f"{(monday + timedelta(days=n)).isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("## Log\n" + "".join(f"- {ln}\n" for ln in lines))


#: A week of small notes: what the tests below need is a run (any run lasting longer than a poll; each
#: starts a process of its own), not a run over large notes, which costs some 7 s of CPU in the run's
#: process. The test about the loop during a run over large notes keeps ``_big_week``'s default.
SMALL_NOTE_BYTES = 4 * 1024

#: The most CPU time one callback of the run may hold the loop thread for. Its steps take under
#: 10 ms on this host; a step that did the run's work on the loop would take seconds.
MAX_STEP_CPU_S = 0.1


class Steps(list[float]):
    """The loop thread's CPU time in each callback, and the slowest callback's name and the CPU
    the garbage collector took inside it (so a failure says what held the loop)."""

    worst: float = 0.0
    slowest: str = ""
    slowest_gc_s: float = 0.0


@contextmanager
def loop_steps() -> Iterator[Steps]:
    """The loop thread's CPU time in each callback it runs meanwhile (``time.thread_time``).

    The heap the test process built before is frozen first, as ``serve`` freezes what start-up
    made: a collection then walks what the sidecar allocates, not every earlier test's objects."""
    gc.collect()
    gc.freeze()
    steps = Steps()
    loop_thread = threading.get_ident()
    run = asyncio.Handle._run
    in_gc = [0.0, 0.0]  # when the current collection on the loop thread started; CPU in them this step

    def collecting(phase: str, info: dict[str, int]) -> None:
        if threading.get_ident() != loop_thread:
            return
        if phase == "start":
            in_gc[0] = time.thread_time()
        else:
            in_gc[1] += time.thread_time() - in_gc[0]

    def timed(handle: asyncio.Handle) -> None:
        if threading.get_ident() != loop_thread:
            run(handle)
            return
        in_gc[1] = 0.0
        started = time.thread_time()
        run(handle)
        took = time.thread_time() - started
        if took >= steps.worst:
            steps.worst, steps.slowest, steps.slowest_gc_s = took, repr(handle)[:300], in_gc[1]
        steps.append(took)

    asyncio.Handle._run = timed  # type: ignore[method-assign,assignment]
    gc.callbacks.append(collecting)
    try:
        yield steps
    finally:
        asyncio.Handle._run = run  # type: ignore[method-assign]
        gc.callbacks.remove(collecting)
        gc.unfreeze()


@pytest.mark.slow  # behaviour at scale: the loop during a run over a week of large notes (~10 s of CPU)
async def test_healthz_answers_within_100_ms_during_a_run_over_large_notes(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    _big_week(memory_dir)
    client: Client = await aiohttp_client(create_app(make_settings()))
    assert (await client.get("/healthz")).status in (200, 503)  # the connection is open before the run
    lags: list[float] = []
    with loop_steps() as steps:
        run = asyncio.ensure_future(client.post("/memory/consolidate", json={}))
        while not run.done():
            asked = Stopwatch()
            assert (await client.get("/healthz")).status in (200, 503)
            lags.append(asked.own())
            await asyncio.sleep(0.01)
        answer = await (await run).json()
    assert len(steps) > 100 and max(steps) < MAX_STEP_CPU_S, (sorted(steps)[-5:], steps.slowest, steps.slowest_gc_s)
    assert len(answer["archived"]) >= 7
    # Every callback of the run on the loop is short, and each probe's time less what the host kept
    # the process's threads waiting for a CPU is too (a freeze of the loop, or a thread holding the
    # GIL while it computes, would fail both bounds by seconds).
    lags.sort()
    assert len(lags) > 5 and lags[int(len(lags) * 0.95)] < 0.1 and lags[-1] < 0.5, (len(lags), lags[-5:])


def test_consolidate_run_merges_typed_memories_like_the_route(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    async def remember() -> None:
        app = create_app(make_settings())
        client: Client = TestClient(__import__("aiohttp").test_utils.TestServer(app))
        await client.start_server()
        try:
            for content in (
                "Deploys go through make ship on the bastion host",
                "deploys go through make ship on the bastion host.",
            ):
                resp = await client.post("/memory/remember", json={"content": content, "memory_type": "fact"})
                assert resp.status == 201, await resp.json()
        finally:
            await client.close()

    asyncio.run(remember())
    out, err = io.StringIO(), io.StringIO()
    code = main(["consolidate", "run", "--memory-dir", str(memory_dir), "--format", "json"], out=out, err=err)
    assert code == 0, err.getvalue()
    merged = json.loads(out.getvalue())["memories_merged"]
    assert len(merged) == 1 and len(merged[0]["merged"]) == 1


def _long_line_week(root: Path, note_bytes: int = 48 * 1024) -> list[tuple[str, str]]:
    """Seven notes of ``note_bytes`` of long lines (ninety words of ``WORDS``, each frequent in the
    week), as ``_big_week`` writes them; the week's (source, text) pairs."""
    rng = random.Random(7)
    monday = utcnow().date() - timedelta(days=21 + utcnow().date().weekday())
    pairs: list[tuple[str, str]] = []
    for n in range(7):
        lines: list[str] = []
        while sum(len(ln) + 3 for ln in lines) < note_bytes:
            words = [rng.choice(WORDS) for _ in range(90)] + [str(rng.randint(1, 10**6))]
            lines.append(" ".join(words).capitalize() + ".")
        name = f"daily/{(monday + timedelta(days=n)).isoformat()}.md"
        note = root / name
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("## Log\n" + "".join(f"- {ln}\n" for ln in lines))
        pairs.extend((name, ln) for ln in lines)
    return pairs


def test_routine_frames_of_long_lines_cost_little_cpu(memory_dir: Path) -> None:
    """A line's frames are made of its few most frequent words: a week of ninety-word lines costs
    the routine test under a tenth of a second of CPU on this host (its every triple, over a
    second and millions of frames, built and freed while holding the GIL)."""
    from sidecar.consolidate.routine import routine

    week = _long_line_week(memory_dir)
    started = time.thread_time()
    flags = routine(week)
    assert time.thread_time() - started < 0.5
    assert len(flags) == len(week) > 500


@pytest.mark.slow
async def test_a_run_leaves_the_heap_a_server_froze_frozen(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """``serve`` freezes what start-up made once it is ready; a run leaves that alone: in a process
    with a frozen heap, the heap stays frozen after the run (unfreezing is all or nothing and would
    hand start-up's objects back to the collector); in one without, nothing is frozen after it."""
    _big_week(memory_dir, SMALL_NOTE_BYTES)
    client: Client = await aiohttp_client(create_app(make_settings()))
    gc.unfreeze()  # a test worker's heap may be frozen by an earlier test's in-process serve
    assert gc.get_freeze_count() == 0
    resp = await client.post("/memory/consolidate", json={})
    assert resp.status == 200
    assert gc.get_freeze_count() == 0  # nothing was frozen before, nothing after
    started_with = [[] for _ in range(1000)]  # start-up's objects, frozen as serve freezes them
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        (memory_dir / "daily").mkdir(exist_ok=True)
        resp = await client.post("/memory/consolidate", json={})
        assert resp.status == 200
        # what it held stays frozen (less what reference counting freed meanwhile), not 0
        assert gc.get_freeze_count() > frozen // 2
        assert not any(obj is started_with for obj in gc.get_objects(generation=2))
    finally:
        gc.unfreeze()
        del started_with


@pytest.mark.slow
async def test_the_collector_does_not_run_on_its_own_during_a_run_and_does_after(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """A full collection set off by the run's allocations holds the GIL for as long as it walks the
    run's live objects, on whichever thread allocated, the loop's too: while a run lasts only
    reference counting frees memory; the collector is back when the run ends."""
    _big_week(memory_dir, SMALL_NOTE_BYTES)
    client: Client = await aiohttp_client(create_app(make_settings()))
    assert gc.isenabled()
    seen: list[bool] = []
    run = asyncio.ensure_future(client.post("/memory/consolidate", json={}))
    while not run.done():
        seen.append(gc.isenabled())
        await asyncio.sleep(0.005)
    assert (await run).status == 200
    assert seen and False in seen, seen[:10]
    assert gc.isenabled()
