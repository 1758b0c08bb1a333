"""MCP sessions over HTTP: a flood of initialize calls cannot end another client's session; past
the table's size a new session is refused, and sessions left idle end so room comes back."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.mcp.clients import McpSessions
from sidecar.mcp.server import SESSIONS
from sidecar.server.app import create_app

JSON = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


async def _ping(client: TestClient[Any, Any], sid: str) -> int:
    resp = await client.post("/mcp", json=PING, headers={**JSON, "Mcp-Session-Id": sid})
    return resp.status


async def _start(aiohttp_client: Any, make_settings: Any, sessions: McpSessions) -> TestClient[Any, Any]:
    app = create_app(make_settings())
    app[SESSIONS] = sessions  # a small table, before the app starts
    client: TestClient[Any, Any] = await aiohttp_client(app)
    return client


async def test_a_flood_of_initialize_calls_ends_no_live_session(aiohttp_client: Any, make_settings: Any) -> None:
    client = await _start(aiohttp_client, make_settings, McpSessions(limit=8))
    first = await client.post("/mcp", json=INIT, headers=JSON)
    mine = first.headers["Mcp-Session-Id"]
    opened, refused = 0, 0
    for _ in range(20):
        resp = await client.post("/mcp", json=INIT, headers=JSON)
        if resp.status == 200:
            opened += 1
        else:
            body = await resp.json()
            assert resp.status == 503 and body["error"]["data"]["code"] == "too_many_sessions", body
            refused += 1
    assert (opened, refused) == (7, 13)
    assert await _ping(client, mine) == 200  # the first client's session is still there


async def test_idle_sessions_end_and_free_their_room(aiohttp_client: Any, make_settings: Any) -> None:
    client = await _start(aiohttp_client, make_settings, McpSessions(limit=2, idle_s=0.0))  # idle at once
    ids = []
    for _ in range(3):
        resp = await client.post("/mcp", json=INIT, headers=JSON)
        assert resp.status == 200
        ids.append(resp.headers["Mcp-Session-Id"])
    assert await _ping(client, ids[-1]) == 200
    assert await _ping(client, ids[0]) == 404  # idle, so it ended to make room
