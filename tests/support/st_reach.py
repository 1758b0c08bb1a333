"""Which of the API's answers a schemathesis run reaches, and what it costs: the run that
tests/http/test_openapi.py makes (the same flags and checks, against the same application served in
this process: a lead over a tier holding AGENT.md), with other counts of examples per operation or
other seeds, to weigh a cheaper run against what it still reaches.

    python -m tests.support.st_reach [EXAMPLES:SEED ...]      (default: 30:1 15:1)

For each run: ``st``'s CPU and the application's (this process), the requests answered, the
(method, route, status) triples answered, and ``st``'s own verdict (complete, failures). Then the
triples each later run did not draw that the first did, and the other way round.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import tempfile
from collections import Counter
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestServer

from sidecar.server.app import create_app
from tests.support.memory import AGENT_MD, settings_in, write
from tests.support.st_run import st_argv, st_env

Triple = tuple[str, str, int]


def _cpu(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


async def reach(examples: int, seed: int, base: Path) -> Counter[Triple]:
    """The triples one ``st run`` drew from the application, counted; its figures printed."""
    import json

    base.mkdir(parents=True)
    write(base / "memory", "AGENT.md", AGENT_MD)
    app = create_app(settings_in(base, role="lead"))  # the test's make_settings(role="lead")
    drawn: Counter[Triple] = Counter()

    async def answered(request: web.Request, response: web.StreamResponse) -> None:
        resource_ = request.match_info.route.resource
        drawn[(request.method, resource_.canonical if resource_ is not None else "(no route)", response.status)] += 1

    app.on_response_prepare.append(answered)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    report = base / "st-report.json"
    own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    try:
        argv = st_argv(str(server.make_url("/openapi.json")), report, max_examples=examples, seed=seed)
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=base, env=st_env(), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await proc.wait()
    finally:
        await server.close()
    result = json.loads(report.read_text())
    failures = sorted({(f["code"], op) for f in result["failures"] for op in f["operations"]})
    print(
        f"{examples} examples, seed {seed}: st {_cpu(resource.RUSAGE_CHILDREN) - children:.1f} s of CPU, "
        f"the application {_cpu(resource.RUSAGE_SELF) - own:.1f} s; {sum(drawn.values())} requests, "
        f"{len(drawn)} triples; operations tested {result['operations']['tested']}, complete "
        f"{result['complete']}, failures {failures}; load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return drawn


async def main(runs: list[tuple[int, int]]) -> None:
    with tempfile.TemporaryDirectory(prefix="st-reach-") as tmp:
        drawn = [await reach(n, seed, Path(tmp) / f"{n}-{seed}") for n, seed in runs]
    (n0, s0), first = runs[0], drawn[0]
    for (n, seed), other in zip(runs[1:], drawn[1:], strict=True):
        print(f"drawn by {n0}:{s0}, not by {n}:{seed}: {sorted(set(first) - set(other))}")
        print(f"drawn by {n}:{seed}, not by {n0}:{s0}: {sorted(set(other) - set(first))}")


if __name__ == "__main__":
    specs = sys.argv[1:] or ["30:1", "15:1"]
    asyncio.run(main([(int(n), int(seed)) for n, seed in (spec.split(":") for spec in specs)]))
