"""The kg_* tools through the official MCP client against a real sidecar: the same answers as the
HTTP routes, errors as isError results."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestServer
from mcp import Client

from sidecar.server.app import create_app
from sidecar.settings import Settings


async def test_kg_tools_round_trip(
    aiohttp_server: Any, make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    server: TestServer = await aiohttp_server(create_app(make_settings()))
    async with Client(str(server.make_url("/mcp"))) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert {"kg_add", "kg_query", "kg_invalidate", "kg_timeline", "kg_traverse", "kg_tunnels", "kg_stats"} <= set(
            names
        )

        async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(name, args)
            assert result.is_error is False, result.content
            assert result.structured_content is not None
            return result.structured_content

        base = {"subject": "we", "predicate": "uses"}
        old = await call("kg_add", {**base, "object": "PostgreSQL 16", "valid_from": "2026-01-10"})
        new = await call("kg_add", {**base, "object": "CockroachDB", "valid_from": "2026-03-01"})
        assert old["fact"]["object"] == "PostgreSQL" and new["fact"]["current"] is True
        before = await call("kg_query", {"entity": "we", "as_of": "2026-02-15"})
        after = await call("kg_query", {"entity": "Postgres", "direction": "in", "include_invalid": True})
        assert [f["object"] for f in before["facts"]] == ["PostgreSQL"]
        assert after["facts"][0]["valid_to"].startswith("2026-03-01")  # ended by the new value, kept
        timeline = await call("kg_timeline", {"entity": "we"})
        assert [f["object"] for f in timeline["facts"]] == ["PostgreSQL", "CockroachDB"]
        hop = await call("kg_traverse", {"entity": "CockroachDB", "hops": 1})
        assert sorted(n["name"] for n in hop["nodes"]) == ["CockroachDB", "we"]
        ended = await call("kg_invalidate", {"fact_id": new["fact"]["id"], "valid_to": "2026-06-01"})
        assert ended["facts"][0]["valid_to"].startswith("2026-06-01")
        stats = await call("kg_stats", {})
        assert (stats["entities"], stats["facts"], stats["current"], stats["invalidated"]) == (3, 2, 0, 2)
        text = (await client.call_tool("kg_timeline", {"entity": "we"})).content[0]
        assert "PostgreSQL [2026-01-10 .. 2026-03-01]" in getattr(text, "text", "")
        missing = await client.call_tool("kg_query", {"entity": "nobody"})
        assert missing.is_error is True and missing.structured_content is not None
        assert missing.structured_content["error"]["code"] == "unknown_entity"
