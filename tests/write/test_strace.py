"""System-call order of acknowledged writes, seen by strace on a real sidecar process:
fsync of the temp file, then the rename over the target, then fsync of the directory."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.procs import free_port
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed (apt-get install strace)")

SYSCALL = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+)")


def parse(trace: str) -> list[tuple[str, str, int]]:
    """(call, args, result) in order, resumed calls joined back together."""
    out: list[tuple[str, str, int]] = []
    pending: dict[str, str] = {}
    for line in trace.splitlines():
        if "<unfinished ...>" in line:
            pid = line.split()[0]
            pending[pid] = line.split("<unfinished ...>")[0]
            continue
        m = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)", line)
        if m:
            line = pending.pop(m.group(1), m.group(1) + " ") + m.group(2)
        m = SYSCALL.match(line)
        if m:
            out.append((m.group(2), m.group(3), int(m.group(4))))
    return out


@pytest.mark.slow
def test_every_acknowledged_write_fsyncs_file_then_renames_then_fsyncs_dir(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    port = free_port()
    trace_file = tmp_path / "trace.txt"
    env = {**os.environ, "MEMORY_SIDECAR_EMBEDDER": "none"}
    proc = subprocess.Popen(
        [
            "strace",
            "-f",
            "-qq",
            "-o",
            str(trace_file),
            "-e",
            "trace=openat,fsync,fdatasync,rename,renameat,renameat2,close",
            sys.executable,
            "-m",
            "sidecar",
            "serve",
            "--memory-dir",
            str(memory),
            "--port",
            str(port),
            "--watch",
            "false",
            "--log-format",
            "json",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(
            lambda: (
                proc.poll() is None and httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
            ),
            timeout=60,
            interval=0.05,
            ignore=(httpx.HTTPError,),
            message="the traced sidecar to answer /healthz",
        )
        writes = [("AGENT.md", "append"), ("daily/2026-03-01.md", "append"), ("AGENT.md", "replace")]
        for path, mode in writes:
            r = httpx.post(f"http://127.0.0.1:{port}/memory/write", json={"path": path, "content": "x", "mode": mode})
            assert r.status_code == 201
    finally:
        # SIGTERM goes to the traced sidecar, not to strace (which would detach and leave it running).
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        for pid in children:
            os.kill(int(pid), signal.SIGTERM)
        proc.wait(timeout=60)
    checked = check_order(parse(trace_file.read_text()))
    assert checked == len(writes)


def check_order(calls: list[tuple[str, str, int]]) -> int:
    """Walk the calls in order, tracking what each fd is at that moment (fds are reused)."""
    fd_names: dict[int, str] = {}
    synced_tmp: set[str] = set()
    awaiting_dir_fsync: str | None = None
    renames = 0
    for call, args, result in calls:
        if call == "openat" and result >= 0:
            fd_names[result] = args
        elif call == "fsync":
            name = fd_names.get(int(args), "")
            if awaiting_dir_fsync is not None:
                assert "O_DIRECTORY" in name, f"after renaming {awaiting_dir_fsync} the next fsync was {name}"
                awaiting_dir_fsync = None
            tmp = re.search(r'"(\.[^"]+\.tmp)"', name)
            if tmp:
                synced_tmp.add(tmp.group(1))
        elif call in ("rename", "renameat", "renameat2"):
            tmp = re.search(r'"(\.[^"]+\.tmp)"', args)
            if tmp:
                assert tmp.group(1) in synced_tmp, f"{tmp.group(1)} renamed before it was fsynced"
                assert awaiting_dir_fsync is None
                awaiting_dir_fsync = tmp.group(1)
                renames += 1
    assert awaiting_dir_fsync is None, "the last rename was never followed by a directory fsync"
    return renames
