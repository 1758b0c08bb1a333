"""The crew's knowledge graph at the lead, with real processes: the crew tier's files feed the crew
scope, apart from the lead's own facts; the crew listener answers it with the crew's token; a solo
sidecar has no crew scope and a member is sent to its lead."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.memory import write
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

TOKEN = "crew-kg-token"
QUICK = ("--watch", "false", "--reconcile-interval", "0", "--crew-reindex-interval", "0")


@pytest.fixture
def lead(tmp_path: Path) -> Iterator[tuple[SidecarProcess, int]]:
    write(tmp_path / "crew", "CREW.md", "# Conventions\nThe billing service uses PostgreSQL.\n")
    write(tmp_path / "lead", "AGENT.md", "# Lead\nThe billing service uses MySQL.\n")
    port = free_port()
    proc = start_sidecar(
        tmp_path / "lead", "--role", "lead", "--crew-dir", str(tmp_path / "crew"),
        "--crew-listen", f"127.0.0.1:{port}", "--crew-token", TOKEN, *QUICK,
    )  # fmt: skip
    try:
        yield proc, port
    finally:
        proc.kill()


def kg(url: str, op: str, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{url}/{op}", json=body, headers=headers or {}, timeout=HANG_GUARD_S)


def objects(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [f["object"] for f in resp.json()["facts"]]


def test_the_crews_graph_is_at_the_lead(lead: tuple[SidecarProcess, int]) -> None:
    proc, port = lead
    api = f"{proc.url}/kg"
    # Both tiers' files are read at start: each into its own scope.
    wait_until(lambda: kg(api, "query", {"entity": "billing service", "scope": "crew"}).status_code == 200, 60)
    assert objects(kg(api, "query", {"entity": "billing service", "scope": "crew"})) == ["PostgreSQL"]
    wait_until(lambda: kg(api, "query", {"entity": "billing service"}).status_code == 200, 60)
    assert objects(kg(api, "query", {"entity": "billing service"})) == ["MySQL"]
    # The crew listener serves the crew's graph (always the crew scope) to holders of the token.
    listener = f"http://127.0.0.1:{port}/crew/kg"
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert kg(listener, "query", {"entity": "billing service"}).status_code == 401
    assert objects(kg(listener, "query", {"entity": "billing service"}, auth)) == ["PostgreSQL"]
    added = kg(listener, "add", {"subject": "billing service", "predicate": "uses", "object": "CockroachDB"}, auth)
    assert added.status_code == 201, added.text
    assert objects(kg(api, "query", {"entity": "billing service", "scope": "crew"})) == ["CockroachDB"]
    assert objects(kg(api, "query", {"entity": "billing service"})) == ["MySQL"]  # the lead's own: untouched
    assert kg(listener, "nonsense", {}, auth).status_code == 404


@pytest.mark.slow  # real sidecar processes: ~2 s of CPU
def test_member_and_solo_crew_scope(tmp_path: Path) -> None:
    solo = start_sidecar(tmp_path / "solo", *QUICK)
    member = start_sidecar(
        tmp_path / "member", "--role", "member", "--lead-url", "http://127.0.0.1:9", "--crew-token", TOKEN,
        "--crew-dir", str(tmp_path / "crew"), *QUICK,
    )  # fmt: skip
    try:
        refused = kg(f"{solo.url}/kg", "tunnels", {"scope": "crew"})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "invalid_scope"
        sent = kg(f"{member.url}/kg", "tunnels", {"scope": "crew"})
        assert sent.status_code == 503 and sent.json()["error"]["code"] == "crew_unavailable"
        assert kg(f"{member.url}/kg", "tunnels", {}).status_code == 200  # its own graph is here
    finally:
        solo.kill()
        member.kill()


@pytest.mark.slow  # real sidecar processes: ~2.5 s of CPU
def test_a_members_crew_graph_requests_are_answered_by_its_lead(
    lead: tuple[SidecarProcess, int], tmp_path: Path
) -> None:
    proc, port = lead
    member = start_sidecar(
        tmp_path / "member", "--role", "member", "--lead-url", f"http://127.0.0.1:{port}", "--crew-token", TOKEN,
        "--crew-dir", str(tmp_path / "member-crew"), *QUICK,
    )  # fmt: skip
    try:
        api = f"{member.url}/kg"
        wait_until(lambda: kg(api, "query", {"entity": "billing service", "scope": "crew"}).status_code == 200, 60)
        assert objects(kg(api, "query", {"entity": "billing service", "scope": "crew"})) == ["PostgreSQL"]
        added = kg(
            api, "add", {"subject": "billing service", "predicate": "uses", "object": "CockroachDB", "scope": "crew"}
        )
        assert added.status_code == 201, added.text
        lead_view = kg(f"{proc.url}/kg", "query", {"entity": "billing service", "scope": "crew"})
        assert objects(lead_view) == ["CockroachDB"]  # the fact is in the lead's crew graph
        own = kg(api, "query", {"entity": "billing service"})  # the member's own graph never heard of it
        assert own.status_code == 404, own.text
        bad = kg(api, "query", {"scope": "crew"})  # no entity: refused by the member, never sent
        assert bad.status_code == 400, bad.text
        timeline = kg(api, "timeline", {"entity": "billing service", "scope": "crew"})
        assert timeline.status_code == 200 and len(timeline.json()["facts"]) >= 2
        proc.kill()
        down = kg(api, "query", {"entity": "billing service", "scope": "crew"})
        assert down.status_code == 503 and down.json()["error"]["code"] == "crew_unavailable"
    finally:
        member.kill()
