"""The crew tier across real sidecar processes on loopback: a lead and two members."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web

from tests.support.memory import write
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import wait_until

TOKEN = "crew-secret-token"


@dataclass
class Crew:
    root: Path
    crew_dir: Path
    listen_port: int
    lead: SidecarProcess
    members: list[SidecarProcess]

    def start_lead(self) -> SidecarProcess:
        self.lead = start_lead(self.root, self.crew_dir, self.listen_port)
        return self.lead


def start_lead(root: Path, crew_dir: Path, listen_port: int, *, ready: bool = True) -> SidecarProcess:
    write(root / "lead", "AGENT.md", "# Lead\nI keep the crew conventions.\n")
    return start_sidecar(
        root / "lead", "--role", "lead", "--crew-dir", str(crew_dir),
        "--crew-listen", f"127.0.0.1:{listen_port}", "--crew-token", TOKEN, log_dir=root, ready=ready,
    )


def start_member(
    root: Path, name: str, crew_dir: Path, lead_url: str, *extra: str, ready: bool = True
) -> SidecarProcess:
    write(root / name, "AGENT.md", f"# {name}\nI am {name}; my private note mentions tailwind migration plans.\n")
    return start_sidecar(
        root / name, "--role", "member", "--crew-dir", str(crew_dir), "--lead-url", lead_url,
        "--crew-token", TOKEN, "--proxy-read-timeout", "1", "--proxy-connect-timeout", "0.5", *extra, log_dir=root,
        ready=ready,
    )


@pytest.fixture
def crew(tmp_path: Path) -> Iterator[Crew]:
    """A lead and two members, three real processes: about 2 s to start, so the tests that take
    it are marked slow (test_lead_answering_garbage_is_503 keeps the proxy in the quick run)."""
    crew_dir = tmp_path / "crew"
    write(crew_dir, "CREW.md", "# Conventions\nWe always use Tailwind, never inline styles.\n")
    write(crew_dir, "topics/deploy.md", "# Deployment\nProduction deploys need a green canary for 30 minutes.\n")
    port = free_port()
    # The three start side by side (a member does not reach for the lead until a crew search).
    lead = start_lead(tmp_path, crew_dir, port, ready=False)
    url = f"http://127.0.0.1:{port}"
    members = [start_member(tmp_path, n, crew_dir, url, ready=False) for n in ("m1", "m2")]
    c = Crew(tmp_path, crew_dir, port, lead, members)
    try:
        for proc in [lead, *members]:
            proc.wait_ready()
        yield c
    finally:
        for proc in [c.lead, *c.members]:
            proc.kill()


def search(side: SidecarProcess, query: str, scope: str, **extra: Any) -> httpx.Response:
    return httpx.post(f"{side.url}/memory/search", json={"query": query, "scope": scope, **extra}, timeout=10)


def sources(resp: httpx.Response) -> list[tuple[str, str]]:
    return [(r["source"], r["path"]) for r in resp.json()["results"]]


@pytest.mark.slow
def test_members_search_the_leads_crew_tier(crew: Crew) -> None:
    for member in crew.members:
        assert sources(search(member, "tailwind inline", "crew")) == [("crew", "CREW.md")]
        assert sources(search(member, "canary", "crew")) == [("crew", "topics/deploy.md")]
        hit = search(member, "canary", "crew").json()["results"][0]
        assert [hit["snippet"][a:b].lower() for a, b in hit["highlights"]] == ["canary"]
    status = httpx.get(f"{crew.members[0].url}/memory/status", params={"scope": "crew"}).json()
    assert status["files"] == 2 and status["tier"] == "crew"


@pytest.mark.slow
def test_scope_both_fuses_agent_and_crew_and_keeps_sources(crew: Crew) -> None:
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
    wait_until(lambda: sources(search(crew.members[0], "invoices", "crew")) == [("crew", "topics/billing.md")], 1.0, 0.02)
    # A plain shell append on the lead's crew dir, no API involved.
    subprocess.run(["sh", "-c", f"echo 'Rollbacks use the wombat runbook.' >> {crew.crew_dir / 'CREW.md'}"], check=True)
    wait_until(lambda: sources(search(crew.members[1], "wombat", "crew")) == [("crew", "CREW.md")], 1.0, 0.02)


@pytest.mark.slow
def test_member_crew_write_is_403_and_member_crew_reindex_is_refused(crew: Crew) -> None:
    member = crew.members[0]
    resp = httpx.post(f"{member.url}/memory/write", json={"tier": "crew", "path": "CREW.md", "content": "x"})
    assert resp.status_code == 403 and resp.json()["error"]["code"] == "crew_write_forbidden"
    resp = httpx.post(f"{member.url}/memory/reindex", params={"scope": "crew"})
    assert resp.status_code == 403 and "lead" in resp.json()["error"]["message"]
    assert httpx.post(f"{crew.lead.url}/memory/reindex", params={"scope": "crew"}).json()["files"] == 2


@pytest.mark.slow
def test_crew_listener_needs_the_token_and_has_no_write_routes(crew: Crew) -> None:
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
def test_lead_down_then_back(crew: Crew) -> None:
    member = crew.members[0]
    crew.lead.stop(signal.SIGKILL)
    started = time.monotonic()
    resp = search(member, "tailwind", "crew")
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "crew_unavailable"
    assert time.monotonic() - started < 2.0
    assert sources(search(member, "tailwind", "agent")) == [("agent", "AGENT.md")]
    both = search(member, "tailwind", "both")
    assert both.status_code == 200 and both.json()["degraded"] == ["crew"]
    assert sources(both) == [("agent", "AGENT.md")]
    crew.start_lead()  # same listener port; the members are not restarted
    assert sources(search(member, "tailwind", "crew")) == [("crew", "CREW.md")]


@pytest.mark.slow
def test_hung_lead_gives_503_within_the_timeout(crew: Crew) -> None:
    member = crew.members[1]
    os.kill(crew.lead.proc.pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        resp = search(member, "tailwind", "crew")
        took = time.monotonic() - started
        assert resp.status_code == 503 and resp.json()["error"]["code"] == "crew_unavailable"
        # The read timeout is 1 s for these members: one wait, not two.
        assert took < 1.9
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
        async with httpx.AsyncClient(base_url=member.url, timeout=10) as client:
            for kind in ("notjson", "shape", "huge", "502"):
                resp = await client.post("/memory/search", json={"query": kind, "scope": "crew"})
                assert resp.status_code == 503, kind
                assert resp.json()["error"]["code"] == "crew_unavailable"
            resp = await client.post("/memory/search", json={"query": "tailwind", "scope": "agent"})
            assert resp.status_code == 200
    finally:
        member.kill()


@pytest.mark.slow
def test_lead_logs_are_json_with_stable_events(crew: Crew) -> None:
    crew.lead.stop()
    events = [json.loads(line)["event"] for line in crew.lead.log_text().splitlines() if line.startswith("{")]
    assert "crew.listening" in events and "sidecar.ready" in events and "sidecar.stopped" in events
