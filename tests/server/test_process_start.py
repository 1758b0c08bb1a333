"""What every sidecar process sets up as it starts, checked in real processes started the way a user
starts them (``sidecar.cli.main``), each asked through a probe installed before the command runs.

numpy's OpenBLAS runs on one thread in every sidecar process (``sidecar/__init__.py`` sets
``OPENBLAS_NUM_THREADS`` before anything imports numpy), unless the environment says otherwise: a
search's products are one query vector against a tier's vectors, where the extra threads spin after
every product and cost several times the CPU they save. Checked in the running server, the MCP
stdio server and a journal command, asking OpenBLAS itself, through the library the process loaded,
how many threads it runs.

No command loads rich (structlog would, for console tracebacks no command renders). The server
freezes what its start-up made once it is ready (``gc.freeze``), so full collections do
not walk the modules and the app again each time, on the event loop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.procs import SidecarProcess, free_port
from tests.support.waiting import wait_until

#: The real command line, plus a probe (on SIGUSR1 and at exit) that writes whether the command
#: loaded numpy and OpenBLAS's own thread count, read through the library this process mapped. The
#: probe imports numpy only after the command ran, when the command did not (a sidecar with no
#: embedder loads it only for what needs it): the count is then what the command's first use of
#: numpy would get.
_PROBE = """
import atexit, ctypes, gc, json, signal, sys
from pathlib import Path

def blas_threads():
    libs = {line.split()[-1] for line in open("/proc/self/maps") if "openblas" in line.lower()}
    for path in libs:
        lib = ctypes.CDLL(path)
        for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
            if hasattr(lib, name):
                return int(getattr(lib, name)())
    return None

def dump(*_):
    loaded = "numpy" in sys.modules  # by the command itself
    if not loaded:  # loaded now, in the environment the command left: what its first use would get
        import numpy
    found = {"numpy": loaded, "threads": blas_threads(), "frozen": gc.get_freeze_count()}
    found["rich"] = sys.modules.get("rich") is not None
    Path(sys.argv[1]).write_text(json.dumps(found))

signal.signal(signal.SIGUSR1, dump)
atexit.register(dump)
from sidecar.cli import main
sys.exit(main(sys.argv[2:]))
"""

_BLAS_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _BLAS_VARS}
    return {**env, "ORT_DISABLE_TELEMETRY": "1", "MEMORY_SIDECAR_EMBEDDER": "none", **extra}


def _read(probe: Path) -> dict[str, object]:
    wait_until(lambda: probe.exists() and probe.read_text().endswith("}"), timeout=60, message="the probe's answer")
    return dict(json.loads(probe.read_text()))


def _serving(memory_dir: Path, tmp_path: Path, env: dict[str, str]) -> dict[str, object]:
    port, probe, log = free_port(), tmp_path / "blas.json", tmp_path / "sidecar.log"
    argv = [sys.executable, "-c", _PROBE, str(probe), "serve", "--memory-dir", str(memory_dir)]
    argv += ["--port", str(port), "--watch", "false", "--log-format", "json"]
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    side = SidecarProcess(proc, port, log, argv).wait_ready()
    try:
        # probed once the BM25 postings answer (built on a thread after ready); a small tier's are held
        # in arrays, so the probe itself imports numpy, in the environment the server left
        status = f"http://127.0.0.1:{port}/memory/status"
        wait_until(lambda: httpx.get(status).json()["bm25"]["engine"] == "postings", timeout=60)
        side.proc.send_signal(signal.SIGUSR1)
        return _read(probe)
    finally:
        side.stop()


@pytest.mark.parametrize(("setting", "threads"), [(None, 1), ("2", 2)])
def test_the_running_server_multiplies_on_one_blas_thread_unless_told(
    memory_dir: Path, tmp_path: Path, setting: str | None, threads: int
) -> None:
    env = _env() if setting is None else _env(OPENBLAS_NUM_THREADS=setting)
    found = _serving(memory_dir, tmp_path, env)
    assert (found["numpy"], found["threads"]) == (False, threads)


def test_the_ready_server_has_frozen_what_its_start_up_made(memory_dir: Path, tmp_path: Path) -> None:
    frozen = _serving(memory_dir, tmp_path, _env())["frozen"]
    assert isinstance(frozen, int) and frozen > 20_000  # the modules, classes and app: ~60k objects


@pytest.mark.slow
def test_the_mcp_stdio_server_and_a_journal_command_run_one_blas_thread(memory_dir: Path, tmp_path: Path) -> None:
    probe = tmp_path / "mcp.json"
    argv = [sys.executable, "-c", _PROBE, str(probe), "mcp", "--memory-dir", str(memory_dir)]
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(), text=True
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(hello) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving: its tools are built
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    found = _read(probe)
    assert found["threads"] == 1

    probe = tmp_path / "recall.json"
    argv = [sys.executable, "-c", _PROBE, str(probe), "recall", "deploy", "--memory-dir", str(memory_dir)]
    done = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr  # 1: nothing recalled, which is still a run
    found = _read(probe)
    assert found["threads"] == 1
    assert found["rich"] is False  # structlog's optional tracebacks: no command renders them
