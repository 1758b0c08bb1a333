"""A client in a process of its own that asks ``/healthz`` of several servers by turns.

What an operator's health check sees while the sidecar works (a consolidation run, a backlog),
and beside it the same request to a bare aiohttp process on the same host: the part of a slow
answer the host's own load explains. Every ``EVERY_S`` it asks each URL once, in an order that
alternates, over a kept-alive connection of its own, until SIGTERM; then it writes each URL's
answer times (seconds) to OUT as JSON.

    python -m tests.bench.ping_beside OUT URL [URL ...]     (benches use ``PingBeside``)
"""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["PingBeside"]

EVERY_S = 0.02


def _connection(url: str) -> http.client.HTTPConnection:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80, timeout=60)


def _ask(conn: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    conn.request("GET", path)
    resp = conn.getresponse()
    resp.read()
    if resp.status != 200:
        raise RuntimeError(f"/healthz answered {resp.status}")
    return time.perf_counter() - started


def main(argv: list[str]) -> None:
    out, urls = Path(argv[0]), argv[1:]
    stop = False

    def on_term(signum: int, frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    conns = {url: _connection(url) for url in urls}
    times: dict[str, list[float]] = {url: [] for url in urls}
    turn = 0
    while not stop:
        order = urls if turn % 2 == 0 else urls[::-1]
        for url in order:
            times[url].append(_ask(conns[url], urlsplit(url).path or "/healthz"))
        turn += 1
        time.sleep(EVERY_S)
    out.write_text(json.dumps(times))


class PingBeside:
    """Start the pinging process; ``stop()`` ends it and returns each URL's answer times."""

    def __init__(self, out: Path, urls: list[str]) -> None:
        self.out, self.urls = out, urls
        out.unlink(missing_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.bench.ping_beside", str(out), *urls])

    def stop(self) -> dict[str, list[float]]:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)
        if self.proc.returncode != 0:
            raise RuntimeError(f"ping_beside exited with {self.proc.returncode}")
        times: dict[str, list[float]] = json.loads(self.out.read_text())
        return times


if __name__ == "__main__":
    main(sys.argv[1:])
