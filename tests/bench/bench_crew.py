"""Crew benchmarks on real processes: lead write -> searchable from a member, and the crew search
round trip through the member's proxy.

    python -m tests.bench crew
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import httpx

from tests.bench.util import ms, report
from tests.support.corpus import make_corpus, make_queries
from tests.support.procs import free_port, start_sidecar

TOKEN = "bench-token"


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="bench-crew-"))
    crew_dir = base / "crew"
    make_corpus(crew_dir, 2_000)
    port = free_port()
    lead = start_sidecar(
        base / "lead",
        "--role",
        "lead",
        "--crew-dir",
        str(crew_dir),
        "--crew-listen",
        f"127.0.0.1:{port}",
        "--crew-token",
        TOKEN,
    )
    member = start_sidecar(
        base / "member",
        "--role",
        "member",
        "--crew-dir",
        str(crew_dir),
        "--lead-url",
        f"http://127.0.0.1:{port}",
        "--crew-token",
        TOKEN,
    )
    try:
        with httpx.Client(timeout=10) as client:
            visible = []
            for i in range(100):
                t0 = time.perf_counter()
                r = client.post(
                    f"{lead.url}/memory/write",
                    json={"tier": "crew", "path": f"topics/b{i % 10}.md", "content": f"- crewtok{i}z"},
                )
                assert r.status_code == 201
                while not client.post(
                    f"{member.url}/memory/search", json={"query": f"crewtok{i}z", "scope": "crew"}
                ).json()["results"]:
                    time.sleep(0.002)
                visible.append(time.perf_counter() - t0)
            report("lead write -> searchable from a member", ms(visible), "p99 <= 1 s")
            rtt = []
            for q in make_queries(1000, seed=5):
                t0 = time.perf_counter()
                client.post(f"{member.url}/memory/search", json={"query": q, "scope": "crew"})
                rtt.append(time.perf_counter() - t0)
            report("crew search round trip via member proxy, 2k chunks", ms(rtt), "")
    finally:
        member.stop()
        lead.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
