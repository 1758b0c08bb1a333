"""Read workers: processes that answer agent-tier searches on the sidecar's port next to it.

The replica's postings follow the primary's commits through ``chunk_log`` and stay equal to FTS5
(same chunks, order and scores, bit for bit); where the log cannot say (a rebuild, a gap, the file
replaced) it rebuilds. The shared queue state is never read torn. With real processes: the port
answers the same from either process, writes sent to a worker land, the edge guards hold in both,
a killed worker is restarted, and no worker outlives its primary.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from hypothesis import given
from hypothesis import strategies as st

from sidecar.embed import OnnxEmbedder
from sidecar.index import TierIndex
from sidecar.query import terms
from sidecar.read_worker import PRIMARY_SOCKET, QUEUE_STATE, create_worker_app
from sidecar.replica import ReplicaIndex
from sidecar.settings import Settings
from sidecar.shared_state import QueueStateFile, SharedRecord
from tests.bench.corpus import VOCAB, make_corpus, make_queries
from tests.conftest import write
from tests.procs import free_port, process_tree, start_sidecar
from tests.test_properties import FTS_BITS, PROPERTY, TEXT, send


def _run_now(fn: Callable[[], None]) -> None:
    fn()


def wait_for(check: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def corpus_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replica") / "memory"
    make_corpus(root, 600, seed=11)
    return root


@pytest.fixture
def corpus(corpus_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(corpus_template, tmp_path / "memory"))


@pytest.fixture
def pair(corpus: Path) -> Iterator[tuple[TierIndex, ReplicaIndex]]:
    primary = TierIndex(corpus)
    primary.open(postings=True)
    primary.schedule = _run_now
    replica = ReplicaIndex(corpus)
    replica.start()
    wait_for(lambda: replica._postings is not None, what="the replica's first build")
    try:
        yield primary, replica
    finally:
        replica.stop()
        primary.close()


def assert_replica_answers_like_fts(primary: TierIndex, replica: ReplicaIndex, queries: list[str]) -> None:
    """Every query: the replica answers from its postings (no fallback), equal to FTS5 on the file."""
    for q in queries:
        mine = replica.search_fast(q, 10)
        assert mine is not None, f"the replica could not answer {q!r} from its postings"
        theirs = primary._search_fts(q, 10, raw_fts=False) if terms(q) else []
        assert [(h.id, h.score, h.snippet) for h in mine] == [(h.id, h.score, h.snippet) for h in theirs], q


def _one_word_queries(rng: random.Random, n: int) -> list[str]:
    # Words of one token each: the event loop's fast path (several-token words go to FTS5).
    return [" ".join(rng.choices(VOCAB[:300], k=rng.randint(1, 4))) for _ in range(n)] + make_queries(n, seed=3)


def test_replica_follows_commits_by_delta_and_equals_fts5(pair: tuple[TierIndex, ReplicaIndex], corpus: Path) -> None:
    primary, replica = pair
    rng = random.Random(7)
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))
    builds = replica.builds
    for step in range(40):
        rel = rng.choice(files)
        action = rng.random()
        if action < 0.15:
            (corpus / rel).unlink()
            files.remove(rel)
        elif action < 0.35:
            rel = f"topics/new-{step}.md"
            write(corpus, rel, "# Fresh\n\n" + " ".join(rng.choices(VOCAB[:500], k=80)) + "\n")
            files.append(rel)
        else:
            with (corpus / rel).open("a") as f:
                f.write("\n" + " ".join(rng.choices(VOCAB[:500], k=40)) + "\n")
        primary.apply_paths([rel])
        if step % 3 == 0:  # sometimes several commits pile up before the replica looks
            assert_replica_answers_like_fts(primary, replica, _one_word_queries(rng, 8))
    assert_replica_answers_like_fts(primary, replica, _one_word_queries(rng, 30))
    assert replica.builds == builds, "the replica rebuilt instead of following the log"
    assert replica.catch_ups >= 10


def test_a_primary_rebuild_or_a_gap_in_the_log_makes_the_replica_rebuild(
    pair: tuple[TierIndex, ReplicaIndex], corpus: Path
) -> None:
    primary, replica = pair
    rng = random.Random(8)
    builds = replica.builds
    primary.rebuild()  # one transaction that empties and refills the index: no log row
    assert replica.search_fast("deploy", 10) is None  # cannot follow: FTS5 answers meanwhile
    assert [h.id for h in replica.search("deploy", 10)] == [
        h.id for h in primary._search_fts("deploy", 10, raw_fts=False)
    ]
    wait_for(lambda: replica.builds > builds, what="a rebuild after the primary's rebuild")
    assert_replica_answers_like_fts(primary, replica, _one_word_queries(rng, 10))

    builds = replica.builds
    write(corpus, "topics/gap.md", "# Gap\n\nzyzzyva marker\n")
    primary.apply_paths(["topics/gap.md"])
    with sqlite3.connect(primary.path) as conn:  # a generation the log lost (pruned, say)
        conn.execute("DELETE FROM chunk_log WHERE gen = (SELECT MAX(gen) FROM chunk_log)")
    assert replica.search_fast("zyzzyva", 10) is None
    wait_for(lambda: replica.builds > builds, what="a rebuild after a gap in the log")
    hits = replica.search_fast("zyzzyva", 10)
    assert hits is not None and [h.path for h in hits] == ["topics/gap.md"]


def test_the_index_file_replaced_under_the_replica(pair: tuple[TierIndex, ReplicaIndex], corpus: Path) -> None:
    primary, replica = pair
    rng = random.Random(9)
    primary.path.unlink()
    assert primary.recover_if_lost()  # the primary builds a new file from the markdown
    write(corpus, "topics/after.md", "# After\n\nquokka after the rebuild\n")
    primary.apply_paths(["topics/after.md"])
    # The old file, still open, would answer without quokka; the replica notices the new inode.
    wait_for(lambda: replica.search_fast("quokka", 10) or None, what="the replica reading the new file")
    assert_replica_answers_like_fts(primary, replica, _one_word_queries(rng, 10))


def test_a_big_reindex_is_left_to_a_rebuild(pair: tuple[TierIndex, ReplicaIndex], corpus: Path) -> None:
    primary, replica = pair
    for i in range(12):
        write(corpus, f"topics/bulk-{i}.md", "".join(f"# H{j}\n\nwombat {i} {j} body text\n\n" for j in range(50)))
    primary.apply_paths([f"topics/bulk-{i}.md" for i in range(12)])  # 600 chunks in one commit
    builds = replica.builds
    assert replica.search_fast("wombat", 10) is None
    wait_for(lambda: replica.builds > builds, what="a rebuild after a commit too big to follow")
    assert_replica_answers_like_fts(primary, replica, ["wombat", "wombat body"])


def _publisher(path: str, rounds: int) -> None:
    state = QueueStateFile(Path(path))
    for n in range(rounds):
        state.publish(2 * n + 1, 2 * n, float(n))  # every state: latest = indexed + 1 = 2 * oldest + 1


def test_queue_state_is_never_read_torn(tmp_path: Path) -> None:
    path = tmp_path / QUEUE_STATE
    reader = QueueStateFile(path, create=True)
    reader.publish(1, 0, None)
    assert reader.state() == {"indexed_seq": 0, "pending": 1, "lag_ms": 0.0}
    proc = multiprocessing.get_context("spawn").Process(target=_publisher, args=(str(path), 500_000))
    proc.start()
    seen = set()
    while proc.is_alive():
        for _ in range(1000):
            latest, indexed, oldest = reader.queue()
            assert latest == indexed + 1 and latest == 2 * (oldest or 0.0) + 1, (latest, indexed, oldest)
            seen.add(latest)
    proc.join()
    assert proc.exitcode == 0
    assert len(seen) > 20  # the reads really overlapped the writes
    with pytest.raises(RuntimeError, match="no consistent record"):
        SharedRecord(tmp_path / "never-written", struct.Struct("<Q"), create=True).read()
    monotonic = time.monotonic()
    reader.publish(5, 3, monotonic - 0.25)
    state = reader.state()
    assert state["indexed_seq"] == 3 and state["pending"] == 2 and 250 <= state["lag_ms"] < 5000


async def test_a_worker_whose_primary_is_gone_answers_503(tmp_path: Path, corpus: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    QueueStateFile(runtime / QUEUE_STATE, create=True).publish(0, 0, None)
    index = TierIndex(corpus)
    index.open()  # an index for the replica to read; no primary process behind it
    index.close()
    port = free_port()
    app = create_worker_app(Settings(memory_dir=corpus, port=port), runtime)
    async with TestClient(TestServer(app, port=port)) as client:
        headers = {"Host": f"127.0.0.1:{port}"}
        resp = await client.post("/memory/write", json={"path": "a.md", "content": "x"}, headers=headers)
        assert resp.status == 503
        assert (await resp.json())["error"]["code"] == "primary_unavailable"
        # A search it can answer itself still works, and a client mistake is a 400 from the worker.
        resp = await client.post("/memory/search", json={"query": "deploy"}, headers=headers)
        assert resp.status == 200 and (await resp.json())["scope"] == "agent"
        resp = await client.post("/memory/search", json={"query": ""}, headers=headers)
        assert resp.status == 400
        resp = await client.post("/memory/search", json={"query": "x"}, headers={"Host": f"evil.example:{port}"})
        assert resp.status == 421


# -- real processes --------------------------------------------------------------------------------
def _fresh(url: str, method: str, path: str, **kw: Any) -> httpx.Response:
    """One request on a new connection (the kernel picks the process per connection)."""
    with httpx.Client(base_url=url, timeout=10) as client:
        return client.request(method, path, **kw)


def _workers(pid: int) -> list[int]:
    return [p for p in process_tree(pid) if p != pid]


@pytest.fixture
def sidecar_with_worker(corpus: Path) -> Iterator[Any]:
    side = start_sidecar(corpus, "--read-workers", "1")
    wait_for(lambda: "replica.postings_built" in side.log_text(), what="the worker's postings")
    try:
        yield side
    finally:
        side.stop()


def test_both_processes_answer_the_port_the_same(sidecar_with_worker: Any) -> None:
    side = sidecar_with_worker
    by_worker = 0
    for q in make_queries(60, seed=5):
        mine = _fresh(side.url, "POST", "/memory/search", json={"query": q})
        assert mine.status_code == 200
        by_worker += mine.headers.get("X-Served-By") == "read-worker"
        # after_seq 0 is always met, and only the primary answers after_seq: the reference.
        ref = _fresh(side.url, "POST", "/memory/search", json={"query": q, "after_seq": 0})
        assert ref.status_code == 200 and "X-Served-By" not in ref.headers
        assert mine.json()["results"] == ref.json()["results"], q
        assert set(mine.json()["index"]) == {"indexed_seq", "pending", "lag_ms"}
    assert by_worker >= 5, "the worker answered (almost) nothing"
    # Its searches are in the metrics (whichever process the scrape lands on: a worker forwards it).
    metrics = _fresh(side.url, "GET", "/metrics").text
    count = re.search(r'memory_sidecar_read_worker_search_seconds_count\{worker="0"\} (\S+)', metrics)
    assert count is not None and float(count.group(1)) >= by_worker, metrics
    assert "memory_sidecar_read_workers_running 1.0" in metrics


def test_writes_through_either_process_land_and_are_searchable(sidecar_with_worker: Any, corpus: Path) -> None:
    side = sidecar_with_worker
    seqs = []
    for i in range(30):
        resp = _fresh(side.url, "POST", "/memory/write", json={"path": "topics/rw.md", "content": f"- okapi{i}x\n"})
        assert resp.status_code == 201, resp.text
        seqs.append(resp.json()["seq"])
    assert seqs == sorted(seqs) and len(set(seqs)) == 30
    text = (corpus / "topics/rw.md").read_text()
    assert all(f"okapi{i}x" in text for i in range(30))
    resp = _fresh(side.url, "POST", "/memory/search", json={"query": "okapi29x", "after_seq": seqs[-1]})
    assert resp.json()["index"]["after_seq_met"] is True
    # Without after_seq, every answer (from either process) that says the write is indexed has it.
    for _ in range(30):
        out = _fresh(side.url, "POST", "/memory/search", json={"query": "okapi29x"}).json()
        if out["index"]["indexed_seq"] >= seqs[-1]:
            assert [r["path"] for r in out["results"]] == ["topics/rw.md"]


def test_edge_guards_hold_on_every_connection(sidecar_with_worker: Any) -> None:
    side = sidecar_with_worker
    for _ in range(20):
        resp = _fresh(side.url, "POST", "/memory/search", json={"query": "x"}, headers={"Host": "evil.example"})
        assert resp.status_code == 421
        resp = _fresh(
            side.url, "POST", "/memory/search", json={"query": "x"}, headers={"Origin": "https://evil.example"}
        )
        assert resp.status_code == 403
        resp = _fresh(side.url, "POST", "/memory/search", content=b"{" + b" " * (3 * 1024 * 1024) + b"}")
        assert resp.status_code == 413


def test_a_killed_worker_is_restarted_and_the_port_keeps_answering(sidecar_with_worker: Any) -> None:
    side = sidecar_with_worker
    (first,) = _workers(side.proc.pid)
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:  # meanwhile the primary alone answers
        assert _fresh(side.url, "POST", "/memory/search", json={"query": "deploy"}).status_code == 200
    (_second,) = wait_for(lambda: [p for p in _workers(side.proc.pid) if p != first], what="a restarted worker")
    wait_for(lambda: side.log_text().count("read_worker.ready") >= 2, what="the new worker to listen")
    assert "read_worker.exited" in side.log_text()
    served = {
        _fresh(side.url, "POST", "/memory/search", json={"query": "deploy"}).headers.get("X-Served-By")
        for _ in range(40)
    }
    assert "read-worker" in served


def test_no_worker_outlives_its_primary(corpus: Path) -> None:
    side = start_sidecar(corpus, "--read-workers", "2")
    workers = wait_for(lambda: len(_workers(side.proc.pid)) == 2 and _workers(side.proc.pid), what="two workers")
    side.proc.send_signal(signal.SIGTERM)
    assert side.proc.wait(timeout=20) == 0
    assert not [p for p in workers if _alive(p)]
    runtime = re.search(r'"runtime": ?"([^"]+)"', side.log_text())  # orjson writes no space
    assert runtime is not None and not Path(runtime.group(1)).exists()  # its socket and state are gone

    side = start_sidecar(corpus, "--read-workers", "1")
    (worker,) = wait_for(lambda: _workers(side.proc.pid), what="a worker")
    side.proc.kill()  # no chance to stop it: the worker notices its parent is gone
    side.proc.wait()
    wait_for(lambda: not _alive(worker), timeout=5, what="the orphaned worker to exit")
    with socket.socket() as s:  # and nothing listens on the port any more
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", side.port))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"


def _client_on_worker(url: str) -> httpx.Client:
    """A keep-alive client whose connection the kernel gave to the worker."""
    for _ in range(200):
        client = httpx.Client(base_url=url, timeout=10)
        if client.post("/memory/search", json={"query": "deploy"}).headers.get("X-Served-By") == "read-worker":
            return client
        client.close()
    raise AssertionError("no connection landed on the worker in 200 tries")


def test_hostile_queries_answer_the_same_from_the_worker_and_the_primary(sidecar_with_worker: Any) -> None:
    """Differential: whatever the query (control characters, lone surrogates, FTS5 syntax, words of
    several tokens, stems), the worker's answer (or error) is the primary's."""
    side = sidecar_with_worker
    worker = _client_on_worker(side.url)
    primary = httpx.Client(base_url=side.url, timeout=10)
    words = st.sampled_from([*VOCAB[:200], "multi-agent", "2025-03-04", "deployments", "don't", "Café"])
    query = st.lists(st.one_of(TEXT, FTS_BITS, words, words), max_size=6).map(" ".join)
    answered = Counter[int]()

    @PROPERTY
    @given(q=query, limit=st.integers(1, 60))
    def prop(q: str, limit: int) -> None:
        mine = send(worker, "POST", "/memory/search", {"query": q, "limit": limit})
        ref = send(primary, "POST", "/memory/search", {"query": q, "limit": limit, "after_seq": 0})
        assert mine.status_code == ref.status_code, (q, mine.text, ref.text)
        answered[mine.status_code] += 1
        if mine.status_code == 200:
            assert mine.json()["results"] == ref.json()["results"], q
        else:
            assert mine.json() == ref.json(), q

    try:
        prop()
    finally:
        worker.close()
        primary.close()
    assert answered[200] >= 50, answered


def test_words_of_several_tokens_go_to_fts5_without_a_catch_up(pair: tuple[TierIndex, ReplicaIndex]) -> None:
    primary, replica = pair
    catch_ups = replica.catch_ups
    for q in ("multi-agent deploy", "2025-03-04", "agreed-deployments"):
        assert replica.search_fast(q, 10) is None  # FTS5 scores such words: a reader thread's job
        assert [(h.id, h.score) for h in replica.search(q, 10)] == [
            (h.id, h.score) for h in primary._search_fts(q, 10, raw_fts=False)
        ]
    assert replica.catch_ups == catch_ups  # the postings were current: nothing to catch up on


def test_a_port_already_served_is_refused_not_shared(corpus: Path, tmp_path: Path) -> None:
    """SO_REUSEPORT would let a second sidecar of the same user bind a port one already serves (the
    kernel would split connections between two memories): it refuses to start instead."""
    first = start_sidecar(corpus, "--read-workers", "1")
    try:
        other = tmp_path / "other"
        other.mkdir()
        argv = [sys.executable, "-m", "sidecar", "serve", "--memory-dir", str(other), "--port", str(first.port)]
        env = {**os.environ, "MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_READ_WORKERS": "1"}
        out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 1, out.stdout + out.stderr
        assert f"port {first.port} on 127.0.0.1 is taken" in out.stdout + out.stderr
        # The first one still answers every connection, from its own memory.
        for _ in range(10):
            assert _fresh(first.url, "POST", "/memory/search", json={"query": "deploy"}).status_code == 200
    finally:
        first.stop()


def _rpc_body(resp: httpx.Response) -> Any:
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in resp.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return resp.json()


def test_mcp_through_a_worker_connection(sidecar_with_worker: Any) -> None:
    """A session opened, used and closed over a connection the worker holds: every MCP request is
    forwarded to the primary (which keeps the sessions), answers streamed back unchanged."""
    side = sidecar_with_worker
    worker = _client_on_worker(side.url)
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    try:
        resp = worker.post("/mcp", json=init, headers=headers)
        assert resp.status_code == 200, resp.text
        sid = resp.headers["Mcp-Session-Id"]
        assert _rpc_body(resp)["result"]["serverInfo"]
        headers["Mcp-Session-Id"] = sid
        note = worker.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        assert note.status_code == 202
        listed = _rpc_body(
            worker.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
        )
        names = {tool["name"] for tool in listed["result"]["tools"]}
        assert "memory.search" in names, names
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory.search", "arguments": {"query": "deploy"}},
        }
        result = _rpc_body(worker.post("/mcp", json=call, headers=headers))["result"]
        assert not result.get("isError") and result["content"][0]["text"]
        assert worker.delete("/mcp", headers={"Mcp-Session-Id": sid}).status_code in (200, 204)
        gone = worker.post("/mcp", json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, headers=headers)
        assert gone.status_code == 404
    finally:
        worker.close()


async def test_a_primary_dying_mid_answer_cuts_the_connection(tmp_path: Path, corpus: Path) -> None:
    """A stand-in primary on the worker's Unix socket starts a streamed answer and drops the
    connection half way: the client must not receive what looks like a whole answer, and the
    worker goes on serving."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    QueueStateFile(runtime / QUEUE_STATE, create=True).publish(0, 0, None)
    index = TierIndex(corpus)
    index.open()
    index.close()

    async def half_then_gone(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b"data: first\\n\\n")
        assert request.transport is not None
        request.transport.abort()
        return resp

    async def write(request: web.Request) -> web.Response:
        return web.json_response({"ok": True}, status=201)

    fake = web.Application()
    fake.router.add_get("/mcp", half_then_gone)
    fake.router.add_post("/memory/write", write)
    runner = web.AppRunner(fake)
    await runner.setup()
    await web.UnixSite(runner, str(runtime / PRIMARY_SOCKET)).start()
    port = free_port()
    app = create_worker_app(Settings(memory_dir=corpus, port=port), runtime)
    try:
        async with TestClient(TestServer(app, port=port)) as client:
            headers = {"Host": f"127.0.0.1:{port}"}
            resp = await client.get("/mcp", headers=headers)
            assert resp.status == 200
            with pytest.raises(aiohttp.ClientPayloadError):
                async with asyncio.timeout(10):  # before the fix the client waited here forever
                    await resp.read()  # the chunked body never ends properly
            resp = await client.post("/memory/write", json={}, headers=headers)
            assert resp.status == 201 and await resp.json() == {"ok": True}
    finally:
        await runner.cleanup()


@pytest.mark.skipif(not OnnxEmbedder.available(), reason="the [embed] extra is not installed")
def test_no_workers_and_no_shared_port_when_searches_are_hybrid(corpus: Path) -> None:
    """With an embedder every search embeds its query in the sidecar: no worker is started, and the
    port is not opened to sharing (a plain listener: another process cannot bind it)."""
    side = start_sidecar(corpus, "--read-workers", "1", env={"MEMORY_SIDECAR_EMBEDDER": "onnx"}, wait=120)
    try:
        wait_for(lambda: "read_workers.off" in side.log_text(), what="the read_workers.off warning")
        assert _workers(side.proc.pid) == []
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            with pytest.raises(OSError):
                s.bind(("127.0.0.1", side.port))
        assert _fresh(side.url, "POST", "/memory/search", json={"query": "deploy"}).status_code == 200
    finally:
        side.stop()
