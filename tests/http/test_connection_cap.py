"""The agent API's connection cap on a real ``serve`` process with 1,024 file descriptors: 1,100
idle sockets used to take every descriptor the process had (a write then timed out after it had
landed). Past ``max_connections`` (512 by default) a connection is answered 503
``too_many_connections`` at once and closed, so the process keeps descriptors to spare and every
request gets a clear answer."""

from __future__ import annotations

import contextlib
import os
import resource
import socket
from pathlib import Path

import httpx

from tests.support.lag import PathStopwatch
from tests.support.memory import write
from tests.support.procs import start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

IDLE = 1100


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_1100_idle_sockets_at_1024_descriptors_get_a_clear_refusal(tmp_path: Path) -> None:
    write(tmp_path / "memory", "AGENT.md", "# Agent\n")
    proc = start_sidecar(tmp_path / "memory", "--watch", "false", "--embedder", "none")
    pid = proc.proc.pid
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (1024, 1024))
    idle: list[socket.socket] = []
    try:
        for _ in range(IDLE):
            with contextlib.suppress(OSError):  # the listen backlog may be full for a moment
                idle.append(socket.create_connection(("127.0.0.1", proc.port), timeout=5))
        answers: dict[socket.socket, bytes] = {}
        wait_until(
            lambda: refused(idle, answers) >= len(idle) - 512, interval=0.1, message="connections past the cap refused"
        )  # a hang guard
        assert open_fds(pid) < 700, open_fds(pid)
        # A write now: refused at once and clearly, nothing written (not landed and left unanswered).
        # At once: within 5 s of the path's own time (less what the host kept this thread and the
        # sidecar's loop from a CPU); the request's own limit is a hang guard.
        watch = PathStopwatch(pid)
        resp = httpx.post(
            f"{proc.url}/memory/write",
            json={"tier": "agent", "path": "notes.md", "content": "# Notes\nx\n"},
            timeout=HANG_GUARD_S,
        )
        assert watch.own() < 5, (watch.own(), watch.wall())
        assert resp.status_code == 503, resp.text
        assert resp.json()["error"]["code"] == "too_many_connections"
        assert not (tmp_path / "memory" / "notes.md").exists()
    finally:
        for sock in idle:
            sock.close()
    try:

        def written() -> bool:
            body = {"tier": "agent", "path": "notes.md", "content": "# Notes\nx\n"}
            return httpx.post(f"{proc.url}/memory/write", json=body, timeout=HANG_GUARD_S).status_code == 201

        wait_until(written, interval=0.1, ignore=(httpx.HTTPError,), message="a write once the idle sockets closed")
        assert (tmp_path / "memory" / "notes.md").exists()
        assert "Traceback" not in proc.log_text()
    finally:
        proc.kill()


def refused(socks: list[socket.socket], answers: dict[socket.socket, bytes]) -> int:
    """How many of ``socks`` the server answered 503 (what has arrived is read into ``answers``,
    without waiting)."""
    for sock in socks:
        if sock in answers:
            continue
        sock.setblocking(False)
        try:
            data = sock.recv(64)
        except BlockingIOError:
            continue
        except OSError:
            data = b""
        if data:
            answers[sock] = data
    return sum(1 for data in answers.values() if data.startswith(b"HTTP/1.1 503"))
