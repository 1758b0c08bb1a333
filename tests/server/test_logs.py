"""The sidecar's log lines: one JSON object per line on stderr, whatever a field holds."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import structlog
from sidecar.logs import configure_logging

configure_logging("json", "info")
log = structlog.get_logger("t")
log.info("plain.event", path="topics/a.md", seq=7, ratio=0.5, nested={"k": [1, 2]}, word="caf\u00e9")
log.info("odd.values", path="daily/\udcff.md", big=2**70, keys={1: "int key"})
log.debug("hidden.event")
try:
    raise ValueError("boom")
except ValueError:
    log.exception("failed.event", tier="agent")
"""


def test_log_lines_are_json_objects_even_for_values_the_fast_encoder_refuses() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, check=True, timeout=60)
    lines = [json.loads(line) for line in run.stderr.decode("utf-8").splitlines()]
    assert [line["event"] for line in lines] == ["plain.event", "odd.values", "failed.event"]
    plain, odd, failed = lines
    assert {k: plain[k] for k in ("path", "seq", "ratio", "nested", "word", "level")} == {
        "path": "topics/a.md",
        "seq": 7,
        "ratio": 0.5,
        "nested": {"k": [1, 2]},
        "word": "café",
        "level": "info",
    }
    assert plain["timestamp"].endswith("Z")
    # A file name that is not UTF-8 (a surrogate escape) and an integer over 64 bits: still a line.
    assert odd["path"] == "daily/\udcff.md" and odd["big"] == 2**70 and odd["keys"] == {"1": "int key"}
    assert failed["level"] == "error" and "ValueError: boom" in failed["exception"]
