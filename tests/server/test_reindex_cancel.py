"""A reindex stops when its client goes away, on the real server (``memory-sidecar serve``), and
that is never a server error: the previous index stays in service."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx
import pytest

from tests.support.memory import write
from tests.support.procs import start_sidecar
from tests.support.waiting import wait_until

FILES = 2000


def _big_tier(root: Path) -> None:
    for n in range(FILES):
        lines = "\n".join(f"Note {n} line {i}: the deploy of service {n % 97} moved to region {i}." for i in range(40))
        write(root, f"topics/t{n:05d}.md", f"# Topic {n}\n\n{lines}\n")


def _events(log: Path, name: str) -> list[dict[str, object]]:
    found = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == name:
            found.append(event)
    return found


@pytest.mark.slow  # a tier of 2,000 files indexed at start, then again
def test_a_client_that_closes_its_connection_normally_stops_the_reindex(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    _big_tier(memory)
    side = start_sidecar(memory, wait=120)
    try:
        before = httpx.get(f"{side.url}/memory/status", timeout=30).json()
        sock = socket.create_connection(("127.0.0.1", side.port))
        sock.sendall(
            f"POST /memory/reindex HTTP/1.1\r\nHost: 127.0.0.1:{side.port}\r\nContent-Length: 0\r\n\r\n".encode()
        )
        time.sleep(0.05)
        sock.close()  # a normal close (FIN), not a reset
        wait_until(
            lambda: _events(side.log, "index.reindex_cancelled") or _events(side.log, "index.rebuilt"),
            timeout=60,
            interval=0.05,
            message="the reindex to end",
        )
        assert _events(side.log, "index.reindex_cancelled"), "the reindex ran to its end for nobody"
        assert not _events(side.log, "index.rebuilt")
        assert _events(side.log, "index.reindex_cancelled")[0]["reason"] == "client gone"
        assert not _events(side.log, "http.unhandled") and not _events(side.log, "http.error")
        after = httpx.get(f"{side.url}/memory/status", timeout=30).json()
        assert after["files"] == before["files"] == FILES  # the previous index stays in service
        hits = httpx.post(f"{side.url}/memory/search", json={"query": "region"}, timeout=30).json()["results"]
        assert hits
    finally:
        side.stop()
