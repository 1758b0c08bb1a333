"""The lead's crew listener keeps its slots for members: a stranger holding more idle sockets
than the listener has slots (re-opening each one the lead closes) no longer turns every member's
crew search into a 503. A real lead and a real member process; the stranger connects from another
loopback address (127.0.0.2), as another host would."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from sidecar.crew.listener import MAX_CONNECTIONS
from tests.support.memory import write
from tests.support.procs import SidecarProcess, free_port, start_sidecar
from tests.support.waiting import HANG_GUARD_S, wait_until

TOKEN = "crew-slots-token"


@dataclass
class Crew:
    lead: SidecarProcess
    member: SidecarProcess
    listen: int


@pytest.fixture
def crew(tmp_path: Path) -> Iterator[Crew]:
    write(tmp_path / "crew", "CREW.md", "# Deploys\nProduction deploys need a green canary.\n")
    write(tmp_path / "lead", "AGENT.md", "# Lead\n")
    write(tmp_path / "member", "AGENT.md", "# Member\n")
    listen = free_port()
    lead = start_sidecar(
        tmp_path / "lead", "--role", "lead", "--crew-dir", str(tmp_path / "crew"),
        "--crew-listen", f"127.0.0.1:{listen}", "--crew-token", TOKEN, "--watch", "false", ready=False,
    )  # fmt: skip
    member = start_sidecar(
        tmp_path / "member", "--role", "member", "--crew-dir", str(tmp_path / "crew"),
        "--lead-url", f"http://127.0.0.1:{listen}", "--crew-token", TOKEN, "--watch", "false", ready=False,
    )  # fmt: skip
    try:
        lead.wait_ready()
        member.wait_ready()
        yield Crew(lead, member, listen)
    finally:
        member.kill()
        lead.kill()


class Stranger:
    """``count`` sockets from 127.0.0.2 that never send a byte; each one the lead closes is
    opened again at once (a thread, until ``stop``)."""

    def __init__(self, port: int, count: int) -> None:
        self.port = port
        self.count = count
        self.opened = 0
        self.sockets: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5, source_address=("127.0.0.2", 0))
        sock.setblocking(False)
        self.opened += 1
        return sock

    def _run(self) -> None:
        while not self._stop.is_set():
            for i, sock in enumerate(self.sockets):
                if _closed(sock):
                    sock.close()
                    with contextlib.suppress(OSError):
                        self.sockets[i] = self._open()
            self._stop.wait(0.05)

    def __enter__(self) -> Stranger:
        self.sockets = [self._open() for _ in range(self.count)]
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        for sock in self.sockets:
            sock.close()


def _closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def crew_search(member: SidecarProcess) -> httpx.Response:
    return httpx.post(f"{member.url}/memory/search", json={"query": "canary", "scope": "crew"}, timeout=HANG_GUARD_S)


@pytest.mark.slow  # a lead and a member as processes: ~2.9 s of CPU
def test_a_members_crew_search_answers_while_a_stranger_holds_more_sockets_than_there_are_slots(crew: Crew) -> None:
    first = crew_search(crew.member)
    assert first.status_code == 200, first.text
    with Stranger(crew.listen, MAX_CONNECTIONS + 16) as stranger:
        # The lead closes the stranger's sockets past its share, and the stranger opens them again.
        wait_until(lambda: stranger.opened >= 2 * (MAX_CONNECTIONS + 16), 60, 0.05, message="the stranger re-opening")
        for _ in range(20):
            resp = crew_search(crew.member)
            assert resp.status_code == 200, resp.text
            assert [hit["path"] for hit in resp.json()["results"]] == ["CREW.md"]
        # A member's own request straight to the listener, on a new connection each time, too.
        for _ in range(10):
            direct = httpx.post(
                f"http://127.0.0.1:{crew.listen}/crew/search",
                json={"query": "canary"},
                headers={"Authorization": f"Bearer {TOKEN}", "Connection": "close"},
                timeout=10,
            )
            assert direct.status_code == 200, direct.text
    assert "Traceback" not in crew.lead.log_text()
