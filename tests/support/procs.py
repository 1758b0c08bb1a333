"""Real sidecar processes for tests and benchmarks: start on a free loopback port, wait, stop."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.support.waiting import HANG_GUARD_S, wait_until
from tests.support.zygote import Forked, fork_sidecar, forkable

__all__ = [
    "SidecarProcess",
    "cpu_s",
    "free_port",
    "probe",
    "process_tree",
    "rss_kb",
    "run_sidecar",
    "start_sidecar",
    "tree_rss_kb",
]


#: Whether ``start_sidecar`` forks its sidecars when not told (tests/conftest.py turns it on).
FORK = {"tests": False}
#: How the sidecars of this process were started (``tests/support/cpu_times.py`` prints it).
STARTS: Counter[str] = Counter()

#: Where free_port looks: under the usual ephemeral range (ip_local_port_range, 32768-60999).
_LISTEN_PORTS = (20000, 32000)
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A port no process listens on now, below the kernel's ephemeral range (an ephemeral port
    could be taken as the source port of an outgoing connection before the server binds it) and
    never the same one twice in a test run."""
    low, high = _LISTEN_PORTS
    for _ in range(1000):
        port = random.randrange(low, high)
        if port in _HANDED_OUT:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free port in {low}-{high}")


def probe(script: str, *args: str, env: dict[str, str] | None = None) -> Any:
    """What ``script`` prints as JSON, run in a fresh interpreter from the repository's root (the
    package as the tests import it) with ``args``; ``env`` in place of this process's environment,
    ``ORT_DISABLE_TELEMETRY`` set either way."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env={**(os.environ if env is None else env), "ORT_DISABLE_TELEMETRY": "1"},
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    return json.loads(done.stdout)


def numpy_mapped(pid: int) -> bool:
    """Whether numpy's compiled core is mapped into process ``pid`` (it was imported there)."""
    return "_multiarray_umath" in Path(f"/proc/{pid}/maps").read_text()


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of /proc/PID/status in kB: resident now (VmRSS) or at peak (VmHWM)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except FileNotFoundError:  # exited meanwhile
        return 0
    for line in lines:
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    return 0


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a sidecar and anything it started), from /proc."""
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                todo += [int(child) for child in task.read_text().split()]
            except FileNotFoundError:
                continue
    return out


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system, every thread) process ``pid`` has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_rss_kb(pid: int, field: str = "VmRSS") -> int:
    """``rss_kb`` of ``pid`` and its descendants together."""
    return sum(rss_kb(p, field) for p in process_tree(pid))


@dataclass
class SidecarProcess:
    proc: subprocess.Popen[bytes] | Forked
    port: int
    log: Path
    args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        """Send ``sig`` and wait for the exit status. A sidecar still running ``timeout`` seconds
        later is killed, and the test fails with the end of its log (what it was doing)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            tail = "\n".join(self.log_text().splitlines()[-40:])
            raise AssertionError(
                f"the sidecar did not exit within {timeout:g} s of signal {sig}; its log ends:\n{tail}"
            ) from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def wait_ready(self, wait: float = HANG_GUARD_S) -> SidecarProcess:
        """Wait until /healthz answers 200; if the process exits or ``wait`` (a hang guard: a busy
        host starts a process many times slower) passes first, kill it and raise RuntimeError with
        its log."""

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sidecar exited with {self.proc.returncode}:\n{self.log_text()}")
            return http.get(f"{self.url}/healthz").status_code == 200

        # One client for every poll: ``httpx.get`` builds a client (and its transport) each call, about
        # 1 ms of CPU against 0.2 ms for a refused connection of a kept one, and a start on a loaded
        # host is polled hundreds of times.
        # A refused connection (not listening yet) is answered at once; an answer is waited for, as
        # a loop busy starting answers late, and a poll cut off would only be asked again.
        with httpx.Client(timeout=httpx.Timeout(10.0, connect=0.5)) as http:
            try:
                wait_until(
                    ready, timeout=wait, interval=0.02, ignore=(httpx.HTTPError,), message="/healthz to answer 200"
                )
            except AssertionError as exc:
                self.kill()
                raise RuntimeError(f"sidecar not ready: {exc}\n{self.log_text()}") from None
        return self


def start_sidecar(
    memory_dir: Path,
    *args: str,
    port: int | None = None,
    env: dict[str, str] | None = None,
    log_dir: Path | None = None,
    wait: float = HANG_GUARD_S,
    ready: bool = True,
    fork: bool | None = None,
) -> SidecarProcess:
    """Start ``memory-sidecar serve`` as a real process and wait until /healthz answers
    (``ready=False``: return at once; several can then start side by side, see ``wait_ready``).

    In the test suite (``FORK["tests"]``, set by tests/conftest.py) the process is forked from one
    that has imported the server already (``tests/support/zygote.py``: some 0.7 s of CPU less a
    start); ``fork=False`` starts a new interpreter, for a test about what the process does before
    it serves (its imports, its CPU or memory at start). Benchmarks start new interpreters: they
    measure the sidecar as it runs."""
    port = port or free_port()
    log = (log_dir or memory_dir.parent) / f"sidecar-{port}.log"
    # A search's wait for a write (``after_seq``) is a hang guard here: a busy host can take over the
    # shipped 1 s to index a write without anything being wrong (a test of the limit names its own).
    full_env = {
        **os.environ,
        "ORT_DISABLE_TELEMETRY": "1",
        "MEMORY_SIDECAR_EMBEDDER": "none",
        "MEMORY_SIDECAR_AFTER_SEQ_TIMEOUT": str(HANG_GUARD_S),
        **(env or {}),
    }
    argv = [
        sys.executable,
        "-m",
        "sidecar",
        "serve",
        "--memory-dir",
        str(memory_dir),
        "--port",
        str(port),
        "--log-format",
        "json",
        *args,
    ]
    proc: subprocess.Popen[bytes] | Forked | None = None
    if (FORK["tests"] if fork is None else fork) and forkable(full_env):
        proc = fork_sidecar(argv[3:], full_env, log)
    if proc is not None:
        STARTS["forked"] += 1
    else:
        STARTS["new interpreter"] += 1
        with log.open("ab") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    sidecar = SidecarProcess(proc, port, log, argv)
    return sidecar.wait_ready(wait) if ready else sidecar


def run_sidecar(
    *argv: str, env: dict[str, str] | None = None, timeout: float = HANG_GUARD_S, fork: bool | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m sidecar ARGV`` as a real process run to its end, as ``subprocess.run(...,
    capture_output=True, text=True)`` runs it: its exit status, stdout and stderr (each a file of
    its own, neither a terminal, as a pipe is not one); its stdin is /dev/null. ``env`` is the
    process's whole environment (this process's when not given).

    In the test suite the process is forked from the zygote as ``start_sidecar``'s sidecars are
    (``tests/support/zygote.py``: the server's imports, some 0.5 s of CPU a run, made once a
    worker) when its environment allows it; ``fork=False`` runs a new interpreter, for a test about
    what a command imports or does before it runs. A process still running after ``timeout``
    seconds is killed and ``subprocess.TimeoutExpired`` raised, as ``subprocess.run`` does."""
    full_env = dict(os.environ if env is None else env)
    args = [sys.executable, "-m", "sidecar", *argv]
    if (FORK["tests"] if fork is None else fork) and forkable(full_env):
        with tempfile.TemporaryDirectory(prefix="sidecar-run-") as scratch:
            out, err = Path(scratch) / "stdout", Path(scratch) / "stderr"
            proc = fork_sidecar(list(argv), full_env, out, err=err)
            if proc is not None:
                STARTS["forked"] += 1
                try:
                    code = proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
                    raise
                said = [path.read_text() if path.exists() else "" for path in (out, err)]
                return subprocess.CompletedProcess(args, code, *said)
    STARTS["new interpreter"] += 1
    return subprocess.run(args, capture_output=True, text=True, env=full_env, timeout=timeout)
