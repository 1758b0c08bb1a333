"""The graph's rules (``sidecar.kg.extract``, whose patterns compile on import) are not imported
before the sidecar answers: what ``serve`` imports to start leaves them to the graph's first reading."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
sys.modules.setdefault("rich", None)
import sidecar.cli, sidecar.server.serve, sidecar.server.app, sidecar.server.compose
print("sidecar.kg.extract" in sys.modules, "sidecar.kg.ingest" in sys.modules)
from sidecar.kg.extract import extract
print(extract("We moved from Postgres to SQLite on 2026-03-01.")[0].object)
"""


def test_starting_the_server_leaves_the_rules_to_the_first_reading() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120)
    before, fact = done.stdout.splitlines()
    assert before == "False True"  # the graph's reader is there, its rules are not
    assert fact == "SQLite"
