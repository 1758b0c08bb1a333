"""What a serving sidecar leaves unimported: code that only other configurations, other commands or
one rare route need is imported when first used, so an idle sidecar does not hold it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.procs import SidecarProcess, free_port
from tests.support.waiting import HANG_GUARD_S, wait_until

#: The real ``memory-sidecar serve``, plus a SIGUSR1 handler that writes the loaded modules' names
#: and, after them, the names of the server's own modules that hold numpy (imported at their top).
_SERVE = """
import json, signal, sys, types
from pathlib import Path

def dump(signum, frame):
    loaded = sorted(name for name, module in sys.modules.items() if module is not None)
    numpy = sys.modules.get("numpy")
    held = sorted(
        name for name, module in list(sys.modules.items())
        if name.startswith("sidecar") and isinstance(module, types.ModuleType) and numpy is not None
        and any(value is numpy for value in list(vars(module).values()))
    )
    Path(sys.argv[1]).write_text(json.dumps(loaded + ["--numpy-held-by--"] + held))

signal.signal(signal.SIGUSR1, dump)
from sidecar.cli import main
sys.exit(main(sys.argv[2:]))
"""

#: Not needed to serve searches on a sidecar with no embedder, no server crew store, no file
#: watcher and no request for the OpenAPI document. Each is held by every idle sidecar that
#: imports it (its code, and what it imports), so one imported again at start is caught here.
_LAZY = (
    "rich",  # structlog's optional console tracebacks
    "pygments",
    "watchfiles",  # --watch false
    "sidecar.http.openapi",  # GET /openapi.json only
    "sidecar.kg.pg_mirror",  # a lead with a PostgreSQL crew store only
    "sidecar.store.postgres",
    "asyncpg",
    "sidecar.store.migrate",  # the store migrate command
    "sidecar.store.copy",
    "onnxruntime",  # the in-process model (embedder onnx or auto)
    "tokenizers",
    "sidecar.retrieval.embed.ollama",  # the remote embedders
    "sidecar.retrieval.embed.openai",
    "httpx",
    "sidecar.scanner.semantic",  # the scanner's model-based layers
    "sidecar.scanner.head",
    "mcp",  # the MCP SDK: memory-sidecar mcp over stdio only
    "sidecar.mcp.stdio",
    "sidecar.retrieval.offline",  # the command line's own search
    "sidecar.loopback",
    "sidecar.kg.cli",
    "statistics",  # with the decimal and fractions it imports (1.7 MB): the journal's health takes one median
    "decimal",
    "fractions",
)


#: What a sidecar with no embedder and a tier of at most ``SMALL_CHUNKS`` chunks never imports,
#: idle or searched: numpy (10-15 MB of an idle sidecar), which its BM25 postings, held in ``array``s
#: and scored in Python, do not need. ``_numpy_held_by`` names a server module that holds it anyway.
_NOT_FOR_A_SMALL_TIER = ("numpy", "sidecar.index.postings_numpy")


def _dump(side: SidecarProcess, dump: Path) -> list[str]:
    dump.unlink(missing_ok=True)
    side.proc.send_signal(signal.SIGUSR1)
    wait_until(dump.exists, timeout=60, message="the module list")
    wait_until(lambda: dump.read_text().endswith("]"), timeout=60, message="the whole module list")
    listed: list[str] = json.loads(dump.read_text())
    return listed


def _loaded(side: SidecarProcess, dump: Path) -> set[str]:
    listed = _dump(side, dump)
    return set(listed[: listed.index("--numpy-held-by--")])


def _numpy_held_by(side: SidecarProcess, dump: Path) -> list[str]:
    listed = _dump(side, dump)
    return listed[listed.index("--numpy-held-by--") + 1 :]


def test_serving_searches_imports_none_of_the_lazy_modules(memory_dir: Path, tmp_path: Path) -> None:
    port, dump, log = free_port(), tmp_path / "modules.json", tmp_path / "sidecar.log"
    argv = [sys.executable, "-c", _SERVE, str(dump), "serve", "--memory-dir", str(memory_dir)]
    argv += ["--port", str(port), "--watch", "false", "--log-format", "json"]
    env = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "MEMORY_SIDECAR_EMBEDDER": "none"}
    with log.open("ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    side = SidecarProcess(proc, port, log, argv).wait_ready()
    try:
        with httpx.Client(base_url=side.url, timeout=HANG_GUARD_S) as client:
            wait_until(lambda: client.get("/memory/status").json()["bm25"]["engine"] == "postings", timeout=60)
            assert _numpy_held_by(side, dump) == []
            assert not _loaded(side, dump).intersection(_NOT_FOR_A_SMALL_TIER)
            for query in ("PostgreSQL database", "dark mode screenshot"):
                found = client.post("/memory/search", json={"query": query})
                assert found.status_code == 200, found.text
                assert found.json()["results"], query
            assert client.get("/memory/status").status_code == 200
            serving = _loaded(side, dump)
            assert "sidecar.http.search" in serving  # the list is the server's own
            assert not serving.intersection(_LAZY)
            assert not serving.intersection(_NOT_FOR_A_SMALL_TIER)  # nor does a search, for the postings or dense code
            document = client.get("/openapi.json")
            assert document.status_code == 200
            assert "/memory/search" in document.json()["paths"]
        assert "sidecar.http.openapi" in _loaded(side, dump)  # imported by its route, when asked
    finally:
        assert side.stop() == 0


def test_the_command_line_parser_imports_no_server_code() -> None:
    """``serve`` starts opening the tiers before it imports the HTTP stack (sidecar.server.serve),
    so building the parser, which every command does first, must not import it."""
    probe = (
        "import json, sys\n"
        "from sidecar.cli import build_parser\n"
        "build_parser().parse_args(['serve'])\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(json.loads(done.stdout))
    assert "sidecar.cli" in loaded
    assert not loaded.intersection({"aiohttp", "numpy", "structlog", "sidecar.kg.graph", "sidecar.kg.lifecycle"})


def test_every_lazy_module_of_the_package_exists() -> None:
    """A renamed or moved module would make its line above guard nothing."""
    import importlib.util

    ours = [name for name in _LAZY if name.startswith("sidecar.")]
    assert ours and [name for name in ours if importlib.util.find_spec(name) is None] == []
