"""The lead's crew listener faces the network: a stranger costs it next to nothing.

The quick tests run the real app in process (the lead's crew listener is a real aiohttp server on
a loopback port) and talk to it over raw sockets; the memory test starts a real lead process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from sidecar.crew.listener import MAX_BODY_BYTES, MAX_CONNECTIONS, TRUST
from tests.support.lag import PathStopwatch
from tests.support.memory import ClientFactory, write
from tests.support.procs import free_port, rss_kb, start_sidecar
from tests.support.sockets import open_received
from tests.support.waiting import HANG_GUARD_S, async_wait_until

TOKEN = "crew-secret-token"
SEARCH = b'{"query": "canary"}'


@pytest.fixture
async def listener(sidecar_client: ClientFactory, tmp_path: Path) -> AsyncIterator[int]:
    """A lead in process with its crew listener on a free loopback port; yields that port."""
    write(tmp_path / "crew", "CREW.md", "# Deploys\nProduction deploys need a green canary.\n")
    port = free_port()
    await sidecar_client(role="lead", crew_listen=f"127.0.0.1:{port}", crew_token=TOKEN)
    yield port


def request(path: str, auth: str | None, body: bytes = SEARCH, length: int | None = None) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: lead\r\nContent-Type: application/json\r\n"
    if auth is not None:
        head += f"Authorization: {auth}\r\n"
    head += f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    return head.encode() + body


async def answer(port: int, data: bytes, *, closes: bool = False, wait: float = 60.0) -> tuple[int, dict[str, Any]]:
    """Send ``data``; (status, JSON body). ``closes``: also check the server closes the connection.
    ``wait`` bounds each read as a hang guard: the server runs on this test's loop, and on a loaded
    host with many sockets open its answer takes seconds; a test that times the answer says so.
    A server that answers before it has read the whole body (a 413) may reset the connection:
    the answer is what it sent before, and the reset is the close (tests/support/sockets.py)."""
    reader, writer = await open_received(port)
    try:
        writer.write(data)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), wait)
        await asyncio.wait_for(reader.readexactly(_length(head)), wait)
        if closes:
            assert await asyncio.wait_for(reader.read(1), wait) == b"", "the server closes the connection"
    except ConnectionError:
        pass  # reset by the server: its answer is what arrived before
    finally:
        writer.close()
    head, _, rest = bytes(reader.received).partition(b"\r\n\r\n")
    assert head, f"no answer before the connection was reset: {bytes(reader.received)!r}"
    body = rest[: _length(head)]
    assert len(body) == _length(head), f"the answer was cut short: {bytes(reader.received)!r}"
    return int(head.split()[1]), json.loads(body)


def _length(head: bytes) -> int:
    return int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])


async def test_a_wrong_token_is_401_before_any_of_the_body_is_sent(listener: int) -> None:
    """Headers announcing a 1 MB body, and no body: the answer must not wait for it (the body
    deadline is 10 s). Timed less the time the host kept this loop, which runs the lead too, from a CPU."""
    for auth in ("Bearer wrong-token", None, "Basic Y3JldzpzZWNyZXQ=", f"Token {TOKEN}", "Bearer"):
        watch = PathStopwatch()
        status, body = await answer(listener, request("/crew/search", auth, b"", length=1_000_000))
        assert status == 401 and body["error"]["code"] == "unauthorized", auth
        assert watch.own() < 1.0, (auth, watch.own(), watch.wall())


async def test_the_bearer_scheme_is_case_insensitive(listener: int) -> None:
    for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
        status, body = await answer(listener, request("/crew/search", f"{scheme} {TOKEN}"))
        assert status == 200, (scheme, body)
        assert [hit["path"] for hit in body["results"]] == ["CREW.md"]


async def test_a_crew_body_over_64_kb_is_413(listener: int) -> None:
    big = json.dumps({"query": "canary", "pad": "x" * MAX_BODY_BYTES}).encode()
    status, body = await answer(listener, request("/crew/search", f"Bearer {TOKEN}", big))
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    status, _ = await answer(listener, request("/crew/search", f"Bearer {TOKEN}"))
    assert status == 200


async def keep_alive(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection that has made one authenticated search and stays open (keep-alive)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request("/crew/search", f"Bearer {TOKEN}"))
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)  # a hang guard
    assert head.split()[1] == b"200", head
    length = int(next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")).split(b":")[1])
    await reader.readexactly(length)
    return reader, writer


async def test_connections_past_the_cap_are_answered_503_and_closed(listener: int) -> None:
    """Every slot held by a peer with the token: a newcomer is refused, and served once two close."""
    held = [await keep_alive(listener) for _ in range(MAX_CONNECTIONS)]
    try:
        status, body = await answer(listener, request("/crew/search", f"Bearer {TOKEN}"), closes=True)
        assert status == 503 and body["error"]["code"] == "too_many_connections"
        for _, writer in held[:2]:
            writer.close()

        async def served() -> bool:
            return (await answer(listener, request("/crew/search", f"Bearer {TOKEN}")))[0] == 200

        await async_wait_until(served, timeout=60, message="a request once two connections closed")  # a hang guard
    finally:
        for _, writer in held:
            writer.close()


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), 0.01) == b""
    except TimeoutError:
        return False
    except ConnectionError:
        return True


async def test_idle_strangers_give_way_to_a_member(listener: int) -> None:
    """More idle sockets than the listener has slots (they used to fill all 64, and every member's
    search was 503): a peer with the token is still served, and of the strangers' sockets from one
    address at most ``TRUST.per_peer`` are kept."""
    idle = [await asyncio.open_connection("127.0.0.1", listener) for _ in range(MAX_CONNECTIONS + 16)]
    try:
        for _ in range(3):
            status, body = await answer(listener, request("/crew/search", f"Bearer {TOKEN}"))
            assert status == 200, body
            assert [hit["path"] for hit in body["results"]] == ["CREW.md"]

        async def strangers_closed() -> bool:
            kept = [not await closed_by_server(reader) for reader, _ in idle]
            return sum(kept) <= TRUST.per_peer

        await async_wait_until(
            strangers_closed, timeout=60, message="the strangers' sockets past their share closed"
        )  # a hang guard: a wait for a state, not a latency
    finally:
        for _, writer in idle:
            writer.close()


async def test_a_connection_that_shows_no_token_within_the_deadline_is_closed(listener: int) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", listener)
    try:
        writer.write(b"POST /crew/search HTTP/1.1\r\nHost: lead\r\n")  # and never the rest
        await writer.drain()
        # Closed at the trust deadline (3 s), well before the header timeout (10 s): read on the
        # path's own time (this loop serves the lead too); the wait itself is a hang guard.
        watch = PathStopwatch()
        assert await asyncio.wait_for(reader.read(), HANG_GUARD_S) == b""
        assert watch.own() < TRUST.deadline + 5, (watch.own(), watch.wall())
    finally:
        writer.close()


@pytest.fixture
def lead(tmp_path: Path) -> Iterator[tuple[Any, int]]:
    write(tmp_path / "crew", "CREW.md", "# Deploys\nProduction deploys need a green canary.\n")
    write(tmp_path / "lead", "AGENT.md", "# Lead\n")
    port = free_port()
    proc = start_sidecar(
        tmp_path / "lead", "--role", "lead", "--crew-dir", str(tmp_path / "crew"),
        "--crew-listen", f"127.0.0.1:{port}", "--crew-token", TOKEN, "--watch", "false",
    )  # fmt: skip
    try:
        yield proc, port
    finally:
        proc.kill()


def refused_or_closed(sock: socket.socket) -> bool:
    try:
        return sock.recv(12) in (b"HTTP/1.1 401", b"")
    except ConnectionResetError:
        return True


def test_forty_strangers_sending_2_mb_each_cost_the_lead_almost_no_memory(lead: tuple[Any, int]) -> None:
    """40 connections with a wrong token, each announcing and then sending 2 MB: each is refused
    from its headers and none of the 80 MB is kept (before, the lead read every body whole
    before it looked at the token, and grew by about 100 MB)."""
    proc, port = lead
    url = f"http://127.0.0.1:{port}/crew/search"
    assert httpx.post(url, json={"query": "canary"}, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    before = rss_kb(proc.proc.pid)
    body = b"x" * (2 * 1024 * 1024)
    strangers = []
    try:
        for _ in range(40):
            sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD_S)
            strangers.append(sock)
            sock.sendall(request("/crew/search", "Bearer wrong-token", b"", length=len(body)))
        for sock in strangers:
            # Refused from the headers, without waiting for the body (its deadline is 10 s): within
            # 5 s of the path's own time (less what the host kept this thread and the lead's loop
            # from a CPU); or, past the strangers' share of one address (``TRUST.per_peer``), closed
            # to make room for a newer one.
            watch = PathStopwatch(proc.proc.pid)
            assert refused_or_closed(sock), "refused from the headers, without waiting for the body"
            assert watch.own() < 5, (watch.own(), watch.wall())
            with contextlib.suppress(OSError):  # the lead closed the connection: the body may not fit
                sock.sendall(body)
        grown_mb = (rss_kb(proc.proc.pid, "VmHWM") - before) / 1024
        assert grown_mb < 20, f"the lead grew by {grown_mb:.0f} MB"
    finally:
        for sock in strangers:
            sock.close()
    assert httpx.post(url, json={"query": "canary"}, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
