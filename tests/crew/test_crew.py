"""The crew tier across real sidecar processes on loopback: a lead and two members, once with the
embedded crew store (members reach the crew through the lead) and once with PostgreSQL (the lead
copies its crew index there; members, each with an empty crew dir of its own, search it directly)."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from tests.support.lag import PathStopwatch
from tests.support.memory import write
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

TOKEN = "crew-secret-token"
_CREW_IDS = itertools.count(1)


@dataclass
class Crew:
    root: Path
    crew_dir: Path
    listen_port: int
    lead: SidecarProcess
    members: list[SidecarProcess]
    store: tuple[str, ...] = ()  # the crew store flags: none for the embedded store

    @property
    def postgres(self) -> bool:
        return bool(self.store)

    def start_lead(self) -> SidecarProcess:
        self.lead = start_lead(self.root, self.crew_dir, self.listen_port, *self.store)
        return self.lead


def store_flags(crew_store: str) -> tuple[str, ...]:
    """The flags that put a crew in ``crew_store``: a PostgreSQL crew gets a crew id of its own."""
    if crew_store == "sqlite":
        return ()
    return ("--crew-store", crew_store, "--crew-id", f"crew-{next(_CREW_IDS)}")


def start_lead(root: Path, crew_dir: Path, listen_port: int, *store: str, ready: bool = True) -> SidecarProcess:
    write(root / "lead", "AGENT.md", "# Lead\nI keep the crew conventions.\n")
    return start_sidecar(
        root / "lead",
        "--role",
        "lead",
        "--crew-dir",
        str(crew_dir),
        "--crew-listen",
        f"127.0.0.1:{listen_port}",
        "--crew-token",
        TOKEN,
        *store,
        log_dir=root,
        ready=ready,
    )


def start_member(
    root: Path, name: str, crew_dir: Path, lead_url: str, *extra: str, ready: bool = True
) -> SidecarProcess:
    write(root / name, "AGENT.md", f"# {name}\nI am {name}; my private note mentions tailwind migration plans.\n")
    return start_sidecar(
        root / name,
        "--role",
        "member",
        "--crew-dir",
        str(crew_dir),
        "--lead-url",
        lead_url,
        "--crew-token",
        TOKEN,
        # A lead that answers at all answers within this on a loaded host too; the hung-lead test
        # starts a member of its own with a short one.
        "--proxy-read-timeout",
        "10",
        "--proxy-connect-timeout",
        "0.5",
        *extra,
        log_dir=root,
        ready=ready,
    )


@contextlib.contextmanager
def running_crew(
    root: Path, crew_store: str, names: tuple[str, ...] = ("m1", "m2"), *member_args: str
) -> Iterator[Crew]:
    """A lead and its members (``names``; two by default), real processes over ``root``. With
    PostgreSQL, each member has an empty crew dir of its own: nothing is shared on disk."""
    crew_dir = root / "crew"
    write(crew_dir, "CREW.md", "# Conventions\nWe always use Tailwind, never inline styles.\n")
    write(crew_dir, "topics/deploy.md", "# Deployment\nProduction deploys need a green canary for 30 minutes.\n")
    port = free_port()
    store = store_flags(crew_store)
    # The three start side by side (a member does not reach for the lead until a crew search).
    lead = start_lead(root, crew_dir, port, *store, ready=False)
    url = f"http://127.0.0.1:{port}"
    member_dirs = {n: (root / f"{n}-crew" if store else crew_dir) for n in names}
    for path in member_dirs.values():
        path.mkdir(exist_ok=True)
    members = [start_member(root, n, d, url, *store, *member_args, ready=False) for n, d in member_dirs.items()]
    c = Crew(root, crew_dir, port, lead, members, store)
    try:
        for proc in [lead, *members]:
            proc.wait_ready()
        if store and members:  # the lead's first copy into the store
            wait_until(lambda: crew_files(members[0]) == 2, 60, 0.05)
        yield c
    finally:
        for proc in [c.lead, *c.members]:
            proc.kill()


@pytest.fixture
def crew(tmp_path: Path, crew_store: str) -> Iterator[Crew]:
    """A crew of its own for a test that changes it (writes, a lead stopped, killed or hung): three
    processes, a few seconds of CPU, so the tests that take it are marked slow
    (test_lead_answering_garbage_is_503 keeps the proxy in the quick run)."""
    with running_crew(tmp_path, crew_store) as c:
        yield c


@pytest.fixture
def crew_of_one(tmp_path: Path, crew_store: str) -> Iterator[Crew]:
    """A lead and one member, for a test that changes the crew and reads it from one member."""
    with running_crew(tmp_path, crew_store, ("m1",)) as c:
        yield c


@pytest.fixture
def crew_of_one_with_a_short_timeout(tmp_path: Path, crew_store: str) -> Iterator[Crew]:
    """A lead and one member whose read timeout (3 s) is long beside what a loaded host adds to a
    request, so one wait and two waits (6 s) are told apart by the clock at any load."""
    with running_crew(tmp_path, crew_store, ("m1",), "--proxy-read-timeout", "3") as c:
        yield c


@pytest.fixture
def lone_lead(tmp_path: Path, crew_store: str) -> Iterator[Crew]:
    """A lead and no member: for what the lead does on its own."""
    with running_crew(tmp_path, crew_store, ()) as c:
        yield c


@pytest.fixture(scope="module")
def read_only_crew(tmp_path_factory: pytest.TempPathFactory, crew_store: str) -> Iterator[Crew]:
    """One crew per store for the tests that only read it (searches, status, the refusals, a
    reindex of the same two files): none of them changes what another one reads."""
    with running_crew(tmp_path_factory.mktemp("crew"), crew_store) as c:
        yield c


def crew_files(side: SidecarProcess) -> int | None:
    resp = httpx.get(f"{side.url}/memory/status", params={"scope": "crew"}, timeout=HANG_GUARD_S)
    return int(resp.json()["files"]) if resp.status_code == 200 else None


def last_reindex(side: SidecarProcess) -> Any:
    return httpx.get(f"{side.url}/memory/status", params={"scope": "crew"}, timeout=HANG_GUARD_S).json()["last_reindex"]


def search(side: SidecarProcess, query: str, scope: str, **extra: Any) -> httpx.Response:
    return httpx.post(f"{side.url}/memory/search", json={"query": query, "scope": scope, **extra}, timeout=HANG_GUARD_S)


def sources(resp: httpx.Response) -> list[tuple[str, str]]:
    return [(r["source"], r["path"]) for r in resp.json()["results"]]


@pytest.mark.slow
def test_members_search_the_leads_crew_tier(read_only_crew: Crew) -> None:
    crew = read_only_crew
    for member in crew.members:
        assert sources(search(member, "tailwind inline", "crew")) == [("crew", "CREW.md")]
        assert sources(search(member, "canary", "crew")) == [("crew", "topics/deploy.md")]
        hit = search(member, "canary", "crew").json()["results"][0]
        assert [hit["snippet"][a:b].lower() for a, b in hit["highlights"]] == ["canary"]
    status = httpx.get(f"{crew.members[0].url}/memory/status", params={"scope": "crew"}).json()
    assert status["files"] == 2 and status["tier"] == "crew"


@pytest.mark.slow
def test_scope_both_fuses_agent_and_crew_and_keeps_sources(read_only_crew: Crew) -> None:
    crew = read_only_crew
    resp = search(crew.members[0], "tailwind", "both")
    assert resp.status_code == 200
    got = sources(resp)
    assert set(got) == {("agent", "AGENT.md"), ("crew", "CREW.md")}
    assert "degraded" not in resp.json()
    # Each member sees its own agent tier, never the other's.
    assert ("agent", "AGENT.md") in sources(search(crew.members[1], "m2", "both"))
    assert sources(search(crew.members[1], "m1", "both")) == []


@pytest.mark.slow
def test_lead_writes_are_searchable_from_members_within_a_second(crew: Crew) -> None:
    resp = httpx.post(
        f"{crew.lead.url}/memory/write",
        json={"tier": "crew", "path": "topics/billing.md", "content": "# Billing\nInvoices close on the 28th."},
    )
    assert resp.status_code == 201
    reindexed = last_reindex(crew.lead)
    # Within a second of the path's own time (less what the host kept the two sidecars' loops
    # waiting for a CPU, except while they answered the polls "not yet", and the test for the poll
    # that found it); the waits are hang guards.
    watch = PathStopwatch(crew.lead.proc.pid, crew.members[0].proc.pid)
    watch.wait_until(
        lambda: sources(search(crew.members[0], "invoices", "crew")) == [("crew", "topics/billing.md")], interval=0.02
    )
    assert watch.own() < 1.0, (watch.own(), watch.wall())
    # A plain shell append on the lead's crew dir, no API involved.
    subprocess.run(["sh", "-c", f"echo 'Rollbacks use the wombat runbook.' >> {crew.crew_dir / 'CREW.md'}"], check=True)
    watch = PathStopwatch(crew.lead.proc.pid, crew.members[1].proc.pid)
    watch.wait_until(lambda: sources(search(crew.members[1], "wombat", "crew")) == [("crew", "CREW.md")], interval=0.02)
    assert watch.own() < 1.0, (watch.own(), watch.wall())
    # The write's queue and the watcher brought both, not the crew tier's periodic reindex (60 s),
    # on however busy a host: that reindex stamps the tier when it finds a change.
    assert last_reindex(crew.lead) == reindexed


@pytest.mark.slow
def test_member_crew_write_is_403_and_member_crew_reindex_is_refused(read_only_crew: Crew) -> None:
    crew = read_only_crew
    member = crew.members[0]
    resp = httpx.post(f"{member.url}/memory/write", json={"tier": "crew", "path": "CREW.md", "content": "x"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "crew_write_forbidden"
    resp = httpx.post(f"{member.url}/memory/reindex", params={"scope": "crew"})
    assert resp.status_code == 403 and "lead" in resp.json()["error"]["message"]
    assert httpx.post(f"{crew.lead.url}/memory/reindex", params={"scope": "crew"}).json()["files"] == 2


@pytest.mark.slow
def test_crew_listener_needs_the_token_and_has_no_write_routes(read_only_crew: Crew) -> None:
    crew = read_only_crew
    url = f"http://127.0.0.1:{crew.listen_port}"
    body = {"query": "tailwind"}
    assert httpx.post(f"{url}/crew/search", json=body).status_code == 401
    wrong = httpx.post(f"{url}/crew/search", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthorized"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.post(f"{url}/crew/search", json=body, headers=auth).status_code == 200
    for path in ("/memory/write", "/crew/write", "/memory/reindex"):
        assert httpx.post(f"{url}{path}", json={}, headers=auth).status_code in (404, 405)


@pytest.mark.slow
def test_lead_down_then_back(crew_of_one: Crew) -> None:
    crew = crew_of_one
    (member,) = crew.members
    crew.lead.stop(signal.SIGKILL)
    if crew.postgres:
        # The crew is in PostgreSQL: a lead that is down costs members' crew search nothing
        # (tests/store/test_crew_across_hosts.py kills PostgreSQL instead).
        assert sources(search(member, "tailwind", "crew")) == [("crew", "CREW.md")]
        assert "degraded" not in search(member, "tailwind", "both").json()
        return
    watch = PathStopwatch(member.proc.pid)
    resp = search(member, "tailwind", "crew")
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "crew_unavailable"
    assert "cannot reach the lead" in resp.json()["error"]["message"]  # refused, no timeout waited out
    assert watch.own() < 2.0, (watch.own(), watch.wall())
    assert sources(search(member, "tailwind", "agent")) == [("agent", "AGENT.md")]
    both = search(member, "tailwind", "both")
    assert both.status_code == 200 and both.json()["degraded"] == ["crew"]
    assert sources(both) == [("agent", "AGENT.md")]
    crew.start_lead()  # same listener port; the members are not restarted
    assert sources(search(member, "tailwind", "crew")) == [("crew", "CREW.md")]


@pytest.mark.slow
def test_hung_lead_gives_503_within_the_timeout(crew_of_one_with_a_short_timeout: Crew) -> None:
    crew = crew_of_one_with_a_short_timeout
    (member,) = crew.members
    os.kill(crew.lead.proc.pid, signal.SIGSTOP)
    try:
        # Timed from here to the answer, less the time the host kept this thread and the member's
        # loop from a CPU (the lower bound is the wall clock's: a loaded host only adds to it).
        watch = PathStopwatch(member.proc.pid)
        if crew.postgres:  # no hop through the hung lead
            assert sources(search(member, "tailwind", "crew")) == [("crew", "CREW.md")]
            assert watch.own() < 1.0, (watch.own(), watch.wall())
            return
        resp = search(member, "tailwind", "crew")
        took, own = watch.wall(), watch.own()
        assert resp.status_code == 503 and resp.json()["error"]["code"] == "crew_unavailable"
        assert "did not answer in time" in resp.json()["error"]["message"]
        # One wait for the hung lead, not two (nor an answer before the timeout).
        assert took >= 3.0 and own < 5.5, (took, own)
        assert search(member, "tailwind", "agent").status_code == 200
    finally:
        os.kill(crew.lead.proc.pid, signal.SIGCONT)


async def test_lead_answering_garbage_is_503(tmp_path: Path, aiohttp_server: Any) -> None:
    async def garbage(request: web.Request) -> web.Response:
        kind = (await request.json())["query"]
        if kind == "notjson":
            return web.Response(text="<html>proxy error</html>")
        if kind == "shape":
            return web.json_response({"results": [{"path": 5}]})
        if kind == "huge":
            return web.json_response({"results": [], "pad": "x" * 200_000})
        return web.Response(status=502, text="bad gateway")

    app = web.Application()
    app.router.add_post("/crew/search", garbage)
    server = await aiohttp_server(app)
    member = start_member(tmp_path, "m9", tmp_path / "crew", str(server.make_url("")), "--proxy-max-bytes", "65536")
    try:
        async with httpx.AsyncClient(base_url=member.url, timeout=HANG_GUARD_S) as client:
            for kind in ("notjson", "shape", "huge", "502"):
                resp = await client.post("/memory/search", json={"query": kind, "scope": "crew"})
                assert resp.status_code == 503, kind
                assert resp.json()["error"]["code"] == "crew_unavailable"
            resp = await client.post("/memory/search", json={"query": "tailwind", "scope": "agent"})
            assert resp.status_code == 200
    finally:
        member.kill()


@pytest.mark.slow
def test_lead_logs_are_json_with_stable_events(lone_lead: Crew) -> None:
    crew = lone_lead
    crew.lead.stop()
    events = [json.loads(line)["event"] for line in crew.lead.log_text().splitlines() if line.startswith("{")]
    assert "crew.listening" in events and "sidecar.ready" in events and "sidecar.stopped" in events
