"""What a sidecar process imports before it serves, checked in real processes started the way a
user starts them (``sidecar.cli.main``), each writing the modules it loaded as it exits.

Every process pays for its imports in CPU and memory before it answers anything, so a process
imports only what it runs: ``memory-sidecar mcp --url`` forwards each request to a running
sidecar and loads neither the application, the operations nor the journal; one refused at start
(the dir's lock held by a sidecar that does not answer) loads not even the MCP SDK's server side.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.procs import free_port
from tests.support.served import ServedApp, served_app

#: The real command line, and the names of the modules loaded when it exits, written to argv[1].
_PROBE = """
import atexit, json, sys
from pathlib import Path

def dump():
    Path(sys.argv[1]).write_text(json.dumps(sorted(n for n, m in sys.modules.items() if m is not None)))

atexit.register(dump)
from sidecar.cli import main
sys.exit(main(sys.argv[2:]))
"""

ENV = {**os.environ, "MEMORY_SIDECAR_EMBEDDER": "none", "MEMORY_SIDECAR_WATCH": "false", "ORT_DISABLE_TELEMETRY": "1"}
#: What answers a request itself: the application, the operations, the journal, the MCP methods.
APPLICATION = ("sidecar.server.app", "sidecar.ops", "sidecar.episodic", "sidecar.mcp.methods", "sidecar.index")
#: The MCP SDK's server side and the protocol's models it validates against.
SDK_SERVER = ("mcp.server", "mcp_types", "pydantic")


def _run(dump: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", _PROBE, str(dump), *args]
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, env=ENV, timeout=120)


def _under(loaded: set[str], packages: tuple[str, ...]) -> set[str]:
    return {name for name in loaded if any(name == p or name.startswith(p + ".") for p in packages)}


def _rpc(msg_id: int | None, method: str, params: dict[str, object] | None = None) -> str:
    message: dict[str, object] = {"jsonrpc": "2.0", "method": method}
    if msg_id is not None:
        message["id"] = msg_id
    if params is not None:
        message["params"] = params
    return json.dumps(message) + "\n"


@pytest.fixture
def sidecar(memory_dir: Path) -> Iterator[ServedApp]:
    """The sidecar the forwarding process talks to: the application served from this process (the
    process whose imports are checked is the forwarder, not this one)."""
    with served_app(memory_dir, watch=False) as side:
        yield side


@pytest.mark.slow
def test_forwarding_over_stdio_loads_no_application(sidecar: ServedApp, tmp_path: Path) -> None:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    dump = tmp_path / "modules.json"
    argv = [sys.executable, "-c", _PROBE, str(dump), "mcp", "--url", sidecar.url]
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV, text=True
    ) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_rpc(1, "initialize", hello))
        proc.stdin.flush()
        assert "result" in json.loads(proc.stdout.readline())
        proc.stdin.write(_rpc(None, "notifications/initialized") + _rpc(2, "tools/list", {}))
        proc.stdin.flush()
        listed = json.loads(proc.stdout.readline())
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    assert listed["id"] == 2, listed
    assert "memory_search" in {tool["name"] for tool in listed["result"]["tools"]}  # the sidecar's, forwarded
    loaded = set(json.loads(dump.read_text()))
    assert "mcp.server.lowlevel" in loaded  # it served stdio with the SDK
    assert _under(loaded, APPLICATION) == set()
    assert "numpy" not in loaded


def test_a_refused_stdio_server_loads_neither_the_application_nor_the_sdk_server(
    memory_dir: Path, tmp_path: Path
) -> None:
    memory_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(memory_dir / ".sidecar.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held as a running sidecar holds it
        dump = tmp_path / "modules.json"
        done = _run(dump, "mcp", "--memory-dir", str(memory_dir), "--port", str(free_port()))
    finally:
        os.close(fd)
    assert done.returncode == 1
    assert "already serves" in done.stderr and "memory-sidecar mcp --url http://" in done.stderr
    loaded = set(json.loads(dump.read_text()))
    assert "sidecar.mcp.stdio" in loaded  # the list is the stdio command's own
    assert _under(loaded, APPLICATION + SDK_SERVER) == set()
    assert "numpy" not in loaded


def test_json_answers_load_numpy_only_in_a_process_that_holds_arrays() -> None:
    """The HTTP answers' encoder turns numpy scalars into their values, without importing numpy
    itself: a process that never loads it (an MCP server forwarding) holds no numpy for it."""
    probe = (
        "import json, sys\n"
        "from sidecar.http.jsonio import json_bytes\n"
        "plain = json_bytes({'score': 0.5, 'hits': [1, 2]})\n"
        "before = 'numpy' in sys.modules\n"
        "import numpy as np\n"
        "scalars = json_bytes({'score': np.float32(0.5), 'n': np.int64(3), 'ok': np.bool_(True)})\n"
        "try:\n"
        "    json_bytes({'x': object()})\n"
        "    refused = False\n"
        "except TypeError:\n"
        "    refused = True\n"
        "print(json.dumps([before, plain.decode(), scalars.decode(), refused]))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=ENV, timeout=60)
    assert done.returncode == 0, done.stderr
    before, plain, scalars, refused = json.loads(done.stdout)
    assert before is False
    assert json.loads(plain) == {"score": 0.5, "hits": [1, 2]}
    assert json.loads(scalars) == {"score": 0.5, "n": 3, "ok": True}
    assert refused is True
