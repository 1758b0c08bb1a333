"""The HTTP edge guards against DNS rebinding, browser origins, oversized bodies and slow clients.

Each test runs the real app from ``create_app`` with the guards inserted the way the server does,
on a real loopback port (the Host check needs to know it), and talks to it over real sockets.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from sidecar.http.connections import SidecarRunner
from sidecar.http.guards import allowed_hosts, body_deadline, host_origin_guard, server_limits
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.lag import PathStopwatch
from tests.support.procs import free_port
from tests.support.sockets import Received, open_received, until_closed
from tests.support.waiting import async_wait_until

Served = tuple[TestClient[Any, Any], Settings]


def guarded_app(settings: Settings, body_timeout: float = 10.0) -> web.Application:
    app = create_app(settings)
    # Before the app starts: aiohttp freezes the middleware list on start.
    app.middlewares.insert(0, body_deadline(body_timeout))
    app.middlewares.insert(0, host_origin_guard(settings))
    return app


class SidecarTestServer(TestServer):
    """aiohttp's test server on the runner ``serve`` uses."""

    async def _make_runner(self, **kwargs: Any) -> SidecarRunner:
        return SidecarRunner(self.app, **kwargs)


@pytest.fixture
async def serve(make_settings: Callable[..., Settings], memory_dir: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[TestClient[Any, Any]] = []

    async def start(
        limits: bool = True, header_timeout: float = 10.0, body_timeout: float = 10.0, **overrides: Any
    ) -> Served:
        settings = make_settings(port=free_port(), **overrides)
        kwargs = server_limits(settings, header_timeout=header_timeout) if limits else {}
        server = SidecarTestServer(guarded_app(settings, body_timeout), port=settings.port)
        await server.start_server(**kwargs)  # TestServer(**kwargs) would not reach the AppRunner
        client: TestClient[Any, Any] = TestClient(server)
        await client.start_server()
        started.append(client)
        return client, settings

    yield start
    for client in started:
        await client.close()


async def raw_exchange(port: int, data: bytes, wait: float = 60.0) -> tuple[int, bytes]:
    """Send raw bytes, read until the server closes, return (status, body bytes)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        response = await asyncio.wait_for(reader.read(), wait)
    finally:
        writer.close()
    head, _, body = response.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


async def raw_request(port: int, data: bytes) -> tuple[int, dict[str, Any]]:
    status, body = await raw_exchange(port, data)
    return status, json.loads(body)


def assert_error(body: dict[str, Any], code: str) -> None:
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


SEARCH = b'{"query": "postgres"}'


def post(host_line: bytes, body: bytes = SEARCH, version: bytes = b"1.1", extra: bytes = b"") -> bytes:
    return (
        b"POST /memory/search HTTP/" + version + b"\r\n" + host_line + extra + b"Content-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.1", "127.0.0.1.nip.io:{port}", ""],
)
async def test_foreign_host_is_421(serve: Callable[..., Any], host: str) -> None:
    _, settings = await serve()
    status, body = await raw_request(settings.port, post(f"Host: {host.format(port=settings.port)}\r\n".encode()))
    assert status == 421
    assert_error(body, "misdirected_request")


async def test_missing_host_on_http_1_1_is_refused_by_the_parser(serve: Callable[..., Any]) -> None:
    """aiohttp's parser answers 400 (plain text, not our JSON shape) before any middleware runs."""
    _, settings = await serve()
    status, body = await raw_exchange(settings.port, post(b""))
    assert status == 400 and b"Host" in body


async def test_two_host_headers_are_refused(serve: Callable[..., Any]) -> None:
    _, settings = await serve()
    port = settings.port
    status, _ = await raw_exchange(port, post(f"Host: 127.0.0.1:{port}\r\nHost: evil.example\r\n".encode()))
    assert status in (400, 421)  # aiohttp's parser may refuse the duplicate before the guard sees it


async def test_rebinding_write_is_refused_and_nothing_is_written(serve: Callable[..., Any], memory_dir: Path) -> None:
    """A page on evil.example rebound to 127.0.0.1 posts a write: refused before the handler."""
    client, _ = await serve()
    payload = {"path": "rebound.md", "content": "planted", "mode": "replace"}
    resp = await client.post("/memory/write", json=payload, headers={"Host": "evil.example"})
    assert resp.status == 421
    assert_error(await resp.json(), "misdirected_request")
    assert not (memory_dir / "rebound.md").exists()
    resp = await client.post("/memory/write", json=payload)  # the same write from the agent lands
    assert resp.status == 201 and (memory_dir / "rebound.md").read_text() == "planted"


async def test_own_addresses_pass(serve: Callable[..., Any]) -> None:
    client, settings = await serve()
    port = settings.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        status, body = await raw_request(port, post(f"Host: {host}\r\n".encode()))
        assert status == 200, (host, body)
        assert [r["path"] for r in body["results"]][:1] in (["AGENT.md"], ["daily/2026-05-14.md"])
    status, body = await raw_request(port, post(b"", version=b"1.0"))  # HTTP/1.0 may omit Host
    assert status == 200 and body["results"]
    resp = await client.get("/healthz")  # the test client's own Host header (127.0.0.1:port)
    assert resp.status == 200


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://127.0.0.1:1",
        "https://localhost:{port}",
        "http://localhost:{port}/",
        "http://[::1]:{port}",
        "",
    ],
)
async def test_foreign_origin_is_403(serve: Callable[..., Any], memory_dir: Path, origin: str) -> None:
    client, settings = await serve()
    headers = {"Origin": origin.format(port=settings.port)}
    resp = await client.post("/memory/write", json={"path": "x.md", "content": "planted"}, headers=headers)
    assert resp.status == 403
    assert_error(await resp.json(), "origin_refused")
    assert not (memory_dir / "x.md").exists()


async def test_own_origins_pass(serve: Callable[..., Any]) -> None:
    client, settings = await serve()
    for origin in (f"http://127.0.0.1:{settings.port}", f"http://localhost:{settings.port}"):
        resp = await client.post("/memory/search", json={"query": "postgres"}, headers={"Origin": origin})
        assert resp.status == 200


def test_allowed_hosts_include_the_configured_host(make_settings: Callable[..., Settings]) -> None:
    remote = {"allow_remote": True, "api_token": "t"}  # serving off loopback takes both
    assert f"[::]:{9300}" in allowed_hosts(make_settings(host="::", port=9300, **remote))
    assert "10.0.0.7:9300" in allowed_hosts(make_settings(host="10.0.0.7", port=9300, **remote))


@pytest.mark.parametrize("chunked", [False, True])
async def test_oversized_body_is_413_and_nothing_is_written(
    serve: Callable[..., Any], memory_dir: Path, chunked: bool
) -> None:
    client, settings = await serve()
    body = json.dumps({"path": "big.md", "content": "x" * (settings.max_body_bytes + 10)}).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 65536):
            yield body[i : i + 65536]

    resp = await client.post("/memory/write", data=chunks() if chunked else io.BytesIO(body))
    assert resp.status == 413
    assert_error(await resp.json(), "payload_too_large")
    assert not (memory_dir / "big.md").exists()


async def open_slow(port: int, head: bytes) -> tuple[Received, asyncio.StreamWriter]:
    """A connection that has sent ``head``; its reader keeps what the server sends (tests/support/sockets.py)."""
    reader, writer = await open_received(port)
    writer.write(head)
    await writer.drain()
    return reader, writer


async def trickle(writer: asyncio.StreamWriter, data: bytes, every: float) -> None:
    """Send one byte every ``every`` seconds until done or the server hangs up."""
    for i in range(len(data)):
        await asyncio.sleep(every)
        if writer.is_closing():
            return
        try:
            writer.write(data[i : i + 1])
            await writer.drain()
        except ConnectionError:
            return


async def timed_searches(client: TestClient[Any, Any], n: int) -> list[float]:
    """Each search's time to its answer, less the time the host kept this loop (the server's too)
    from a CPU."""
    took = []
    for _ in range(n):
        watch = PathStopwatch()
        resp = await client.post("/memory/search", json={"query": "postgres"})
        assert resp.status == 200 and (await resp.json())["results"]
        took.append(watch.own())
        await asyncio.sleep(0.2)  # spread over the slow client's life, not bunched at its start
    return took


@pytest.mark.slow
async def test_slow_headers_do_not_stall_others_and_are_cut_off(serve: Callable[..., Any]) -> None:
    """Slowloris: a request line, then one header byte every 0.5 s. The server closes it once
    the header deadline (keepalive_timeout, here 2 s) passes; other clients never wait on it."""
    client, settings = await serve(header_timeout=2.0)
    await timed_searches(client, 1)  # a cold first search (readers opened, caches filled) is not what is timed
    opened = PathStopwatch()
    reader, writer = await open_slow(
        settings.port, f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{settings.port}\r\n".encode()
    )
    sender = asyncio.create_task(trickle(writer, b"X-Slow: " + b"a" * 40, every=0.5))
    took = await timed_searches(client, 5)
    assert max(took) < 0.5, took
    leftover = await until_closed(reader)  # the server hung up
    # By the clock, no sooner than the deadline; less the host's waits, soon after it.
    closed_after = (opened.wall(), opened.own())
    await sender
    writer.close()
    assert leftover == b"" and closed_after[0] >= 1.9 and closed_after[1] < 4.0, (leftover, closed_after)


@pytest.mark.slow
async def test_without_the_limits_aiohttp_keeps_a_slow_header_open(serve: Callable[..., Any]) -> None:
    """Control: with aiohttp's defaults (keepalive_timeout 3630 s) the same slow client is still
    connected after 3 s, so it is ``server_limits`` that cuts it off."""
    _, settings = await serve(limits=False)
    reader, writer = await open_slow(
        settings.port, f"POST /memory/search HTTP/1.1\r\nHost: 127.0.0.1:{settings.port}\r\n".encode()
    )
    sender = asyncio.create_task(trickle(writer, b"X-Slow: aaaaaa", every=0.5))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.read(1), timeout=3.0)
    sender.cancel()
    writer.close()


@pytest.mark.slow
async def test_slow_body_is_408_and_the_connection_closes(serve: Callable[..., Any], memory_dir: Path) -> None:
    client, settings = await serve(body_timeout=1.0)
    await timed_searches(client, 1)  # a cold first search (readers opened, caches filled) is not what is timed
    body = json.dumps({"path": "slow.md", "content": "slowly"}).encode()
    head = (
        f"POST /memory/write HTTP/1.1\r\nHost: 127.0.0.1:{settings.port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    watch = PathStopwatch()
    reader, writer = await open_slow(settings.port, head)
    sender = asyncio.create_task(trickle(writer, body, every=0.3))
    took = await timed_searches(client, 3)
    response = await until_closed(reader)
    elapsed = watch.own()
    await sender
    writer.close()
    head_out, _, payload = response.partition(b"\r\n\r\n")
    assert head_out.split()[1] == b"408"
    assert_error(json.loads(payload), "request_timeout")
    assert elapsed < 5.0 and max(took) < 0.5, (elapsed, took)
    assert not (memory_dir / "slow.md").exists()


async def test_the_port_the_connection_arrived_on_counts_as_own(
    aiohttp_client: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """Served on a random port while settings say 9119 (as every aiohttp_client test is): the
    client's own Host passes, a rebinding Host is still refused."""
    settings = make_settings()
    client = await aiohttp_client(guarded_app(settings))
    assert settings.port != client.port
    assert (await client.post("/memory/search", json={"query": "postgres"})).status == 200
    origin = {"Origin": f"http://localhost:{client.port}"}
    assert (await client.post("/memory/search", json={"query": "postgres"}, headers=origin)).status == 200
    resp = await client.post(
        "/memory/search", json={"query": "postgres"}, headers={"Host": f"evil.example:{client.port}"}
    )
    assert resp.status == 421


async def test_the_agent_api_caps_its_connections_with_a_clear_refusal(serve: Callable[..., Any]) -> None:
    """Past ``max_connections`` open connections a new one is answered 503 ``too_many_connections``
    at once and closed (it had no cap: idle sockets could take every file descriptor); once some
    close, requests are served again."""
    client, settings = await serve(max_connections=8)
    port = settings.port
    idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(settings.max_connections)]
    try:
        status, body = await raw_exchange(port, f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert status == 503, body
        assert json.loads(body)["error"]["code"] == "too_many_connections"
    finally:
        for _, writer in idle:
            writer.close()

    async def served() -> bool:
        return (await client.get("/healthz")).status == 200

    await async_wait_until(served, timeout=60, message="a request once the idle connections closed")


def test_the_default_connection_cap_is_512(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings()
    assert settings.max_connections == 512
    assert server_limits(settings)["max_connections"] == 512
