"""The load benchmark's probes of write -> searchable, its query seeds and its raw limit's chunk texts.

Not part of ``make test`` (tests/bench is not collected): ``pytest tests/bench/test_load.py``. The
wrk cases run where wrk is installed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from sidecar.index.chunker import chunk_markdown
from tests.bench.load import written_chunks
from tests.bench.loadgen import Run, drive
from tests.support.procs import free_port

FOUND_AFTER = 2  # the fake index shows a write to the second search that asks for it


class FakeSidecar:
    """/memory/write answers a seq; /memory/search shows a written token from the FOUND_AFTER-th
    search that names it on, and records every search's body."""

    def __init__(self) -> None:
        self.seq = 0
        self.asked: dict[str, int] = {}
        self.searches: list[dict[str, object]] = []
        self.tokens: dict[str, str] = {}

    async def write(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.seq += 1
        token = str(body["content"]).split()[1]
        self.tokens[token] = body["path"]
        return web.json_response({"seq": self.seq}, status=201)

    async def search(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.searches.append(body)
        query = str(body["query"])
        results = []
        if query in self.tokens:
            self.asked[query] = self.asked.get(query, 0) + 1
            if self.asked[query] >= FOUND_AFTER:
                results = [{"path": self.tokens[query], "snippet": f"- {query} noted"}]
        return web.json_response({"results": results})


@pytest.fixture
def fake() -> Iterator[tuple[str, FakeSidecar]]:
    state = FakeSidecar()
    app = web.Application()
    app.router.add_post("/memory/write", state.write)
    app.router.add_post("/memory/search", state.search)
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    try:
        yield f"http://127.0.0.1:{port}", state
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


GENERATORS = ["python", pytest.param("wrk", marks=pytest.mark.skipif(not shutil.which("wrk"), reason="no wrk"))]


def _drive(url: str, generator: str, tmp_path: Path, *, probe: bool, writers: int = 1) -> Run:
    return drive(
        url,
        os.getpid(),
        seconds=1.0,
        warmup=0.0,
        connections=writers + 1,
        writers=writers,
        queries=["alpha beta", "gamma delta", "epsilon zeta"],
        work=tmp_path / generator,
        wrk=shutil.which("wrk") if generator == "wrk" else None,
        probe=probe,
    )


@pytest.mark.parametrize("generator", GENERATORS)
def test_a_probed_write_is_searched_for_until_an_answer_shows_it(
    fake: tuple[str, FakeSidecar], generator: str, tmp_path: Path
) -> None:
    url, state = fake
    run = _drive(url, generator, tmp_path, probe=True)
    found = [s for s in run.searchable if s[2] > 0]
    assert found and all(polls == FOUND_AFTER for _, _, polls, _ in found)
    assert sum(r[0] == "probe" for r in run.responses) >= len(found) * FOUND_AFTER
    probes = [s for s in state.searches if s["query"] in state.tokens]
    # The first search for a write waits for its seq; the polls after it are plain searches.
    for token in {str(s["query"]) for s in probes}:
        asked = [s for s in probes if s["query"] == token]
        assert "after_seq" in asked[0] and all("after_seq" not in s for s in asked[1:])
    # A probed write -> searchable spans its write and its searches: longer than any one of them.
    assert min(run.searchable_ms()) > 0


@pytest.mark.parametrize("generator", GENERATORS)
def test_without_probes_writers_only_write(fake: tuple[str, FakeSidecar], generator: str, tmp_path: Path) -> None:
    url, state = fake
    run = _drive(url, generator, tmp_path, probe=False)
    assert run.acked and not run.searchable and not any(r[0] == "probe" for r in run.responses)
    assert not [s for s in state.searches if s["query"] in state.tokens]


@pytest.mark.parametrize("generator", GENERATORS)
def test_each_run_draws_its_own_queries(fake: tuple[str, FakeSidecar], generator: str, tmp_path: Path) -> None:
    """A search connection replaying the queries it drew in an earlier run would find every query's
    vector cached: two runs of one process draw different sequences."""
    url, state = fake
    firsts = []
    for n in range(2):
        state.searches.clear()
        _drive(url, generator, tmp_path / str(n), probe=False, writers=0)
        firsts.append([s["query"] for s in state.searches[:12]])
    assert firsts[0] != firsts[1]


def test_the_written_chunks_are_every_state_of_the_written_files(tmp_path: Path) -> None:
    path = "topics/load-00.md"
    (tmp_path / "topics").mkdir()
    lines = [f"- loadw0n{i}x noted during the load run" for i in range(40)]
    (tmp_path / path).write_text("\n".join(lines))
    acked = [(path, f"loadw0n{i}x", i + 1) for i in range(40)]
    texts = written_chunks(tmp_path, acked)
    for end in (1, 17, 40):  # the chunk holding each append, as the file was after it
        last = chunk_markdown("\n".join(lines[:end]))[-1]
        assert last.hash in texts and f"loadw0n{end - 1}x" in texts[last.hash]
