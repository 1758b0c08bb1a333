"""A consolidation runs in a process of its own (``consolidate/child.py``): its CPU is spent outside
the sidecar's process, so it never holds the interpreter lock the event loop needs; a child killed
at any point leaves whole files and a run the next one finishes to the same bytes; a cancelled run
(the sidecar stopping) and a killed sidecar leave no child behind."""

from __future__ import annotations

import asyncio
import os
import random
import resource
import shutil
import signal
import threading
import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest

from sidecar.clock import utcnow
from sidecar.consolidate.runner import run_consolidation
from sidecar.retrieval.embed.base import EmbedderUnavailable
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.procs import process_tree, start_sidecar
from tests.support.waiting import wait_until

WORDS = str.split(
    "the service is now on port host cache queue billing ledger search auth deploy build test release "
    "config value owner moved from to with for and runs at version team on-call schedule backup job"
)
_TEMP = ".tmp"
# Each test runs whole consolidations of weeks of notes in child processes, some killed and run again
# (some 25 s of CPU together): in `make test`, not in `make test-fast`.
pytestmark = pytest.mark.slow


def _weeks(root: Path, weeks: int = 3, note_bytes: int = 24 * 1024) -> None:
    """``weeks`` old weeks of daily notes of ``note_bytes`` each, lines sharing common words."""
    rng = random.Random(55)
    monday = utcnow().date() - timedelta(days=7 * (weeks + 2) + utcnow().date().weekday())
    for n in range(7 * weeks):
        lines: list[str] = []
        while sum(len(ln) + 3 for ln in lines) < note_bytes:
            words = [rng.choice(WORDS) for _ in range(rng.choice([8, 12, 16, 40]))] + [str(rng.randint(1, 10**6))]
            lines.append(" ".join(words).capitalize() + ".")
        note = root / "daily" / f"{(monday + timedelta(days=n)).isoformat()}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text("## Log\n" + "".join(f"- {ln}\n" for ln in lines))


def _children(pid: int) -> list[int]:
    """The consolidation processes ``pid`` started that are alive (not yet reaped: zombies too)."""
    found = []
    for child in process_tree(pid)[1:]:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except FileNotFoundError:
            continue
        if b"sidecar.consolidate.child" in cmdline:
            found.append(child)
    return found


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the tier but the record of the last run's time and the temp files a killed
    write leaves (hidden, never indexed, swept when a sidecar starts)."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(_TEMP) and p.name != "last_run.json"
    }


async def test_a_runs_cpu_is_spent_outside_the_sidecars_process(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    # Notes of 12 KiB, not 24: the child's run is still seconds of CPU (some 4.5 s, 6 to 12 times this
    # process's; 10.5 s and 6 to 15 times with 24 KiB), for half of the CPU.
    _weeks(memory_dir, note_bytes=12 * 1024)
    client = await aiohttp_client(create_app(make_settings()))
    own, children = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
    resp = await client.post("/memory/consolidate", json={})
    assert resp.status == 200 and len((await resp.json())["archived"]) >= 21
    own = time.process_time() - own
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    theirs = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    # the job's clustering, change search and scans: seconds of CPU, all of it in the child
    assert theirs > 2 * own, (own, theirs)
    assert _children(os.getpid()) == []  # the run's process ended with it


async def test_a_killed_child_leaves_whole_files_and_the_next_run_finishes_the_same(
    make_settings: Callable[..., Settings], memory_dir: Path, tmp_path: Path
) -> None:
    from sidecar.consolidate.child import ChildEnded

    # Notes of 12 KiB, not 24: a run is a third of the CPU (3 runs here) and the kill still lands
    # seconds before the run's end (the first week's summary is written some 3 s before it on a busy
    # host; it is polled every 2 ms).
    _weeks(memory_dir, note_bytes=12 * 1024)
    whole = tmp_path / "whole"
    shutil.copytree(memory_dir, whole)
    await run_consolidation(make_settings(memory_dir=str(whole)), "agent")  # never interrupted

    settings = make_settings()
    run = asyncio.ensure_future(run_consolidation(settings, "agent"))
    summaries = memory_dir / "daily" / "summaries"
    while not run.done():  # no event tells when a file of the other process is written: polled
        if summaries.is_dir() and any(summaries.glob("*.md")):
            break
        await asyncio.sleep(0.002)
    (child,) = _children(os.getpid())
    os.kill(child, signal.SIGKILL)  # mid-run: the first week is written, the others not yet
    with pytest.raises(ChildEnded):
        await run
    assert (memory_dir / ".consolidate" / "state.json").is_file()  # the plan, left for the next run
    for path, data in _files(memory_dir).items():  # each file as some step wrote it whole, or untouched
        if path.endswith(".md"):
            assert data.decode("utf-8").endswith("\n"), path
    await run_consolidation(settings, "agent")
    assert _files(memory_dir) == _files(whole)
    assert not (memory_dir / ".consolidate" / "state.json").exists()


async def test_a_cancelled_run_kills_and_reaps_its_child(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    _weeks(memory_dir)
    run = asyncio.ensure_future(run_consolidation(make_settings(), "agent"))
    while not _children(os.getpid()):
        assert not run.done()
        await asyncio.sleep(0.002)
    (child,) = _children(os.getpid())
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert not Path(f"/proc/{child}").exists()  # killed and reaped, not left running or a zombie


def test_a_killed_sidecar_takes_its_run_with_it_and_the_next_sidecar_finishes_it(memory_dir: Path) -> None:
    # Notes of 12 KiB, not 24: the next sidecar's whole run is a third of the CPU, and the sidecar is
    # still killed as its run's process starts, seconds before that run could answer.
    _weeks(memory_dir, note_bytes=12 * 1024)
    sidecar = start_sidecar(memory_dir, "--consolidate-interval", "0")
    cut: list[BaseException] = []

    def ask() -> None:
        try:
            httpx.post(f"{sidecar.url}/memory/consolidate", json={}, timeout=None)
        except httpx.HTTPError as exc:  # the sidecar is killed under it
            cut.append(exc)

    asked = threading.Thread(target=ask, daemon=True)
    try:
        asked.start()
        child = wait_until(lambda: next(iter(_children(sidecar.proc.pid)), 0), message="the run's process to start")
        sidecar.kill()
        wait_until(lambda: not _running(child), message="the run's process to end with its sidecar")
    finally:
        sidecar.kill()
    asked.join(timeout=60)
    assert cut  # the run never answered: it ended with its sidecar
    again = start_sidecar(memory_dir, "--consolidate-interval", "0")
    try:
        resp = httpx.post(f"{again.url}/memory/consolidate", json={}, timeout=None)
        assert resp.status_code == 200, resp.text
        assert not (memory_dir / ".consolidate" / "state.json").exists()
        assert not list((memory_dir / "daily").glob("????-??-??.md"))  # every old note archived
    finally:
        again.stop()


class OneMeaning:
    """A stand-in embedding model (the real one is too slow to load for this) that reads every
    text as meaning the same: the change search by meaning then reads changes the lines' words do
    not, so a run with it writes other summaries than a run without. It counts the texts it is
    asked for; ``broken`` makes every call fail, as an unreachable model does."""

    model_id = "one-meaning"
    dim = 8

    def __init__(self, *, broken: bool = False) -> None:
        self.asked = 0
        self.broken = broken

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.broken:
            raise EmbedderUnavailable("the model is down")
        self.asked += len(texts)
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows[:, 0] = 1.0
        return rows

    async def aclose(self) -> None:
        return None


async def test_the_childs_run_reads_changes_by_the_sidecars_model_as_a_run_here_does(
    make_settings: Callable[..., Settings], memory_dir: Path, tmp_path: Path
) -> None:
    """The run's process asks the sidecar's model for its vectors: its tier is byte for byte the
    tier ``job.consolidate`` writes in this process with the same model; with the model down, the
    run goes on by the lines' words, as a run here without a model does."""
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import ExtractiveSummariser

    _weeks(memory_dir, weeks=2, note_bytes=6 * 1024)
    tiers = {name: tmp_path / name for name in ("child_down", "here", "here_without")}
    for tier in tiers.values():
        shutil.copytree(memory_dir, tier)
    model, down, local = OneMeaning(), OneMeaning(broken=True), OneMeaning()
    await run_consolidation(make_settings(), "agent", embedder=model)
    await run_consolidation(make_settings(memory_dir=str(tiers["child_down"])), "agent", embedder=down)
    for name, embed in (("here", local.embed), ("here_without", None)):
        await consolidate(
            tiers[name],
            since=None,
            until=utcnow().date(),
            summariser=ExtractiveSummariser(),
            dry_run=False,
            evergreen_cap_bytes=make_settings().evergreen_cap_bytes,
            embed=embed,
            archive_cap_bytes=make_settings().tier_cap_bytes,
        )
    assert model.asked == local.asked > 0
    assert _files(memory_dir) == _files(tiers["here"])
    assert _files(tiers["child_down"]) == _files(tiers["here_without"])
    assert _files(memory_dir) != _files(tiers["here_without"])  # the model's vectors made the difference
