"""Background embedding: queries never queue behind a backlog batch, and its progress shows.

Against the real int8 MiniLM model. Timing thresholds would flake on a shared machine, so the tests
assert on the structure of what ran: which thread ran each model run, at which priority, and
whether the backlog batch was still in flight when the query's answer came back.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from sidecar.retrieval.embed import OnnxEmbedder, Vectors, embed_in_background
from sidecar.retrieval.embed.progress import Progress
from tests.support.corpus import make_corpus
from tests.support.embedding import needs_model
from tests.support.memory import ClientFactory
from tests.support.waiting import async_wait_until

pytestmark = needs_model

# ~256 tokens each: one chunk a run (TOKENS_PER_RUN), so a batch of them is many runs.
LONG = [
    f"note {i}: " + "the deploy pipeline waits for the smoke tests, then migrates postgres. " * 30 for i in range(16)
]


@dataclass(frozen=True)
class Run:
    thread: str
    nice: int
    rows: int
    started: float
    ended: float


class Recording:
    """The real session, with each run's thread, priority and span noted."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.runs: list[Run] = []
        self.started: list[str] = []  # thread names, as each run starts

    def get_inputs(self) -> Any:
        return self.real.get_inputs()

    def run(self, names: Any, feeds: dict[str, np.ndarray]) -> Any:
        thread = threading.current_thread().name
        nice = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        self.started.append(thread)
        started = time.monotonic()
        out = self.real.run(names, feeds)
        self.runs.append(Run(thread, nice, int(feeds["input_ids"].shape[0]), started, time.monotonic()))
        return out


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[OnnxEmbedder, Recording]]:
    embedder = OnnxEmbedder()
    recording = Recording(embedder._session)
    embedder._session = recording
    yield embedder, recording


@pytest.mark.slow
async def test_a_query_is_embedded_while_a_backlog_batch_is_in_flight(
    recorded: tuple[OnnxEmbedder, Recording],
) -> None:
    embedder, recording = recorded
    recording.runs.clear()
    recording.started.clear()
    batch = asyncio.create_task(embedder.embed_background(LONG))
    await async_wait_until(lambda: any(t.startswith("embed-backlog") for t in recording.started), timeout=60)
    query = await embedder.embed(["when do the smoke tests run"])
    assert not batch.done(), "the query's answer waited for the whole backlog batch"
    vectors = await batch
    background = [r for r in recording.runs if r.thread.startswith("embed-backlog")]
    (asked,) = [r for r in recording.runs if not r.thread.startswith("embed-backlog")]
    assert asked.rows == 1 and sum(r.rows for r in background) == len(LONG) and len(background) > 2
    assert len({r.thread for r in background}) == 1, "one backlog thread, one run after another"
    assert min(r.started for r in background) < asked.started and asked.ended < max(r.ended for r in background)
    if sys.platform.startswith("linux"):
        # Above the query's, or both at the ceiling where the whole run is niced to it (``nice -n 19``).
        lower = [r.nice > asked.nice or r.nice == asked.nice == 19 for r in background]
        assert all(lower), (asked.nice, {r.nice for r in background})
    assert np.allclose(query, embedder.embed_sync(["when do the smoke tests run"]), atol=1e-5)
    assert np.allclose(vectors[:2], embedder.embed_sync(LONG[:2]), atol=1e-5)


@pytest.mark.slow
async def test_backlog_calls_queue_on_one_thread_and_queries_do_not(recorded: tuple[OnnxEmbedder, Recording]) -> None:
    embedder, recording = recorded
    recording.runs.clear()
    first, second = await asyncio.gather(embedder.embed_background(LONG[:4]), embedder.embed_background(LONG[4:8]))
    background = recording.runs
    assert len({r.thread for r in background}) == 1
    assert all(a.ended <= b.started for a, b in itertools.pairwise(background)), "never two at once"
    assert first.shape == second.shape == (4, 384)
    recording.runs.clear()
    await asyncio.gather(*(embedder.embed([f"query {i}"]) for i in range(4)))
    assert not any(r.thread.startswith("embed-backlog") for r in recording.runs)


async def test_several_texts_asked_for_now_run_on_two_cores(recorded: tuple[OnnxEmbedder, Recording]) -> None:
    embedder, recording = recorded
    recording.runs.clear()
    sentences = [f"Sentence {i} says the smoke tests gate every deploy of the billing service." for i in range(8)]
    vectors = await embedder.embed(sentences)
    assert sorted(r.rows for r in recording.runs) == [4, 4], "one run of 8 halved"
    assert len({r.thread for r in recording.runs}) == 2 and any(
        r.thread.startswith("embed-now") for r in recording.runs
    )
    assert np.allclose(vectors, embedder.embed_sync(sentences), atol=1e-5)


class ForegroundOnly:
    """An embedder with no background path (as a remote one): a backlog goes through ``embed``."""

    model_id = "foreground-only"
    dim = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)

    async def aclose(self) -> None:
        return None


async def test_an_embedder_without_a_background_path_embeds_backlogs_with_embed() -> None:
    plain = ForegroundOnly()
    assert (await embed_in_background(plain, ["a", "b"])).shape == (2, 3)
    assert plain.calls == [["a", "b"]]


def test_progress_rate_follows_the_last_window() -> None:
    now = [100.0]
    progress = Progress(window_s=10, clock=lambda: now[0])
    assert progress.rate() is None and progress.eta_s(50) is None and progress.eta_s(0) == 0.0
    for _ in range(10):  # 10 chunks/s for 10 s
        now[0] += 1
        progress.add(10)
    assert progress.rate() == pytest.approx(10) and progress.eta_s(50) == pytest.approx(5)
    for _ in range(10):  # then 2 chunks/s: the window forgets the fast start
        now[0] += 1
        progress.add(2)
    assert progress.rate() == pytest.approx(2) and progress.done == 120 and progress.elapsed_s == 20
    now[0] += 10  # nothing stored for a while: the rate falls
    assert progress.rate() == pytest.approx(1)


@pytest.mark.slow  # a 64-note backlog embedded by the real model: ~3.6 s of CPU
async def test_status_shows_the_backlog_progress_moving(sidecar_client: ClientFactory, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    make_corpus(root, 64, para_chars=150, seed=5)
    # The index is built first, by a sidecar without the model: the backlog is then every chunk from
    # the first snapshot. Built beside the embedding (on a loaded host the start-up scan still adds
    # files while the first batches run), the total grows with the index, and is not what is tested.
    files = len(list(root.rglob("*.md")))
    indexer = await sidecar_client(memory_dir=str(root))

    async def indexed() -> bool:
        status = await (await indexer.get("/memory/status")).json()
        return bool(status["files"] == files and status["queue"]["depth"] == 0)

    await async_wait_until(indexed, timeout=120, message=f"the index of the {files} notes")
    await indexer.close()
    client = await sidecar_client(embedder="onnx", memory_dir=str(root))
    seen: list[dict[str, Any]] = []

    async def drained() -> bool:
        embedder = (await (await client.get("/memory/status")).json())["embedder"]
        if "progress" in embedder:
            seen.append({**embedder["progress"], "backlog": embedder["backlog"]})
        return bool(embedder["backlog"] == 0 and embedder["vectors"] > 0)

    await async_wait_until(drained, timeout=120, interval=0.01)
    status = (await (await client.get("/memory/status")).json())["embedder"]
    chunks = status["vectors"]
    assert "progress" not in status, "no progress once the backlog is done"
    assert len({s["done"] for s in seen}) >= 2, seen
    assert all(s["total"] == chunks for s in seen), seen
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)
    moving = [s for s in seen if s["done"]]
    assert moving and all(s["chunks_per_s"] > 0 and s["eta_s"] >= 0 for s in moving), seen
