"""Health gating: memory_write/memory_read leave /memory/tools and MCP tools/list when the sink breaks
for real (read-only mount, full filesystem, dir gone) and come back when it heals; past the tier's
cap alone they stay, with memory_delete, so the agent can free room."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from sidecar.http.state import SIDECAR
from sidecar.server.app import create_app
from sidecar.settings import Settings
from tests.support.memory import AGENT_MD, write
from tests.support.sink import sink_ttl

JOURNAL_TOOLS = [
    "memory_remember",
    "memory_recall",
    "memory_feedback",
    "memory_forget",
    "memory_restore",
    "memory_session",
]
KG_TOOLS = ["kg_add", "kg_query", "kg_invalidate", "kg_timeline", "kg_traverse", "kg_tunnels", "kg_stats"]
PALACE_READ = ["memory_list", "memory_taxonomy", "memory_diary_read"]
PALACE_WRITE = ["memory_delete", "memory_set_identity", "memory_diary_write", "memory_ingest"]
ALL = [
    "memory_write",
    "memory_read",
    "memory_search",
    "memory_check_duplicate",
    *JOURNAL_TOOLS,
    *KG_TOOLS,
    *PALACE_READ,
    *PALACE_WRITE,
]
# With the sink down, search stays (the index answers) and so do the journal's and the graph's tools
# (no file is touched) and the palace's tools that only read; the palace's tools that write go.
SEARCH_ONLY = ["memory_search", "memory_check_duplicate", *JOURNAL_TOOLS, *KG_TOOLS, *PALACE_READ]
# Past the tier's byte cap alone, what frees room stays: read, write (a replace with a shorter body)
# and delete; the palace's tools that only add go.
OVER_CAP = [*ALL[:4], *JOURNAL_TOOLS, *KG_TOOLS, *PALACE_READ, "memory_delete"]


def build_app(settings: Settings, ttl: float = 0.0) -> web.Application:
    app = create_app(settings)
    app.on_startup.append(sink_ttl(ttl))  # replaces the sidecar's 1 s cache
    return app


def run(*cmd: str) -> None:
    subprocess.run(cmd, check=True, capture_output=True, text=True)


@contextmanager
def mounted(*cmd: str, target: Path) -> Iterator[None]:
    """Run a mount command for ``target`` (skip the test if this process may not mount); unmount after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only or tiny filesystem needs root")
    try:
        run(*cmd)
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"cannot mount here: {getattr(exc, 'stderr', '') or exc}")
    try:
        yield
    finally:
        try:
            run("umount", str(target))
        except subprocess.CalledProcessError:
            run("umount", "-l", str(target))


@asynccontextmanager
async def serve(settings: Settings) -> AsyncIterator[TestClient[Any, Any]]:
    """A real server, closed before the filesystem under it is unmounted."""
    client: TestClient[Any, Any] = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


async def tools(client: TestClient[Any, Any]) -> dict[str, Any]:
    resp = await client.get("/memory/tools")
    assert resp.status == 200
    body: dict[str, Any] = await resp.json()
    return body


async def listed(session: ClientSession) -> list[str]:
    return [tool.name for tool in (await session.list_tools()).tools]


@asynccontextmanager
async def mcp(client: TestClient[Any, Any]) -> AsyncIterator[ClientSession]:
    url = str(client.make_url("/mcp"))
    async with streamable_http_client(url) as (read, write_stream), ClientSession(read, write_stream) as session:
        await session.initialize()
        yield session


async def test_read_only_mount_hides_write_and_read(make_settings: Callable[..., Settings], memory_dir: Path) -> None:
    async with serve(make_settings()) as client, mcp(client) as session:
        assert (await tools(client))["tools"] == ALL and await listed(session) == ALL
        # A read-only bind over the dir: as root a chmod would not stop a write, this does.
        with mounted("mount", "--bind", str(memory_dir), str(memory_dir), target=memory_dir):
            run("mount", "-o", "remount,bind,ro", str(memory_dir))
            state = await tools(client)
            assert state["healthy"] is False and state["tools"] == SEARCH_ONLY
            assert any("Read-only file system" in reason for reason in state["reasons"])
            assert await listed(session) == SEARCH_ONLY
            refused = await session.call_tool("memory_write", {"path": "AGENT.md", "content": "- lost"})
            assert refused.is_error is True and refused.structured_content is not None
            assert refused.structured_content["error"]["code"] == "sink_unavailable"
            assert "Read-only file system" in refused.structured_content["error"]["reasons"][0]
            hidden = await session.call_tool("memory_read", {"path": "AGENT.md"})
            assert hidden.is_error is True
            searched = await session.call_tool("memory_search", {"query": "postgres"})
            assert searched.is_error is False
            assert not list(memory_dir.glob(".health-probe.*"))

            run("mount", "-o", "remount,bind,rw", str(memory_dir))
            assert (await tools(client)) == {"healthy": True, "reasons": [], "tools": ALL}
            assert await listed(session) == ALL
            saved = await session.call_tool("memory_write", {"path": "AGENT.md", "content": "- kept"})
            assert saved.is_error is False
        assert (memory_dir / "AGENT.md").read_text() == AGENT_MD + "- kept"


async def test_full_filesystem_is_unhealthy(make_settings: Callable[..., Settings], tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    with mounted("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root), target=root):
        write(root, "AGENT.md", AGENT_MD)
        async with serve(make_settings()) as client, mcp(client) as session:
            assert (await tools(client))["healthy"] is True
            filler = root / ".filler"
            with filler.open("wb") as fh:
                try:
                    while True:
                        fh.write(b"\0" * 65536)
                        fh.flush()
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC
            state = await tools(client)
            assert state["healthy"] is False and state["tools"] == SEARCH_ONLY
            assert any("memory filesystem is full" in reason for reason in state["reasons"])
            assert await listed(session) == SEARCH_ONLY
            refused = await session.call_tool("memory_write", {"path": "AGENT.md", "content": "- lost"})
            assert refused.is_error is True and "not healthy" in refused.structured_content["error"]["message"]

            filler.unlink()
            assert (await tools(client))["tools"] == ALL and await listed(session) == ALL


async def test_tier_past_its_cap_keeps_the_tools_that_free_room(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    """Past the tier's cap the agent can still recover through MCP: it reads its entries, deletes or
    replaces them with a shorter body, and once the tier is under its cap every tool is back."""
    used = sum(len(p.read_bytes()) for p in memory_dir.rglob("*.md"))
    async with serve(make_settings(tier_cap_bytes=used - 100)) as client, mcp(client) as session:
        state = await tools(client)
        assert state["healthy"] is False and any("past its cap" in reason for reason in state["reasons"])
        assert state["tools"] == OVER_CAP and await listed(session) == OVER_CAP
        read = await session.call_tool("memory_read", {"path": "AGENT.md"})
        assert read.is_error is False and read.structured_content is not None
        more = await session.call_tool("memory_write", {"path": "AGENT.md", "content": "- more"})
        assert more.is_error is True and more.structured_content is not None
        assert more.structured_content["error"]["code"] == "cap_exceeded"
        identity = await session.call_tool("memory_set_identity", {"identity": "I am Ledger."})
        assert identity.is_error is True and identity.structured_content is not None
        assert identity.structured_content["error"]["code"] == "sink_unavailable"
        shorter = await session.call_tool(
            "memory_write", {"path": "AGENT.md", "content": "# Identity\nresearcher", "mode": "replace"}
        )
        assert shorter.is_error is False, shorter.content
        assert (await tools(client))["tools"] == ALL and await listed(session) == ALL
    assert (memory_dir / "AGENT.md").read_text() == "# Identity\nresearcher"


async def test_tier_past_its_cap_frees_room_by_delete(make_settings: Callable[..., Settings], memory_dir: Path) -> None:
    async with serve(make_settings(tier_cap_bytes=len(AGENT_MD) + 10)) as client, mcp(client) as session:
        assert await listed(session) == OVER_CAP
        deleted = await session.call_tool("memory_delete", {"path": "daily/2026-05-14.md"})
        assert deleted.is_error is False, deleted.content
        assert await listed(session) == ALL


async def test_a_second_fault_beside_the_cap_withdraws_them(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    async with serve(make_settings(tier_cap_bytes=200)) as client:
        with mounted("mount", "--bind", str(memory_dir), str(memory_dir), target=memory_dir):
            run("mount", "-o", "remount,bind,ro", str(memory_dir))
            state = await tools(client)
    assert len(state["reasons"]) == 2 and state["tools"] == SEARCH_ONLY


async def test_missing_dir_is_unhealthy_until_it_is_back(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    away = memory_dir.with_name("away")
    async with serve(make_settings()) as client:
        memory_dir.rename(away)
        try:
            state = await tools(client)
            assert state["healthy"] is False and any("does not exist" in r for r in state["reasons"])
        finally:
            away.rename(memory_dir)
        assert (await tools(client))["tools"] == ALL


async def test_health_is_cached_and_probed_once_per_burst(
    make_settings: Callable[..., Settings], memory_dir: Path
) -> None:
    app = build_app(make_settings(), ttl=0.2)
    async with TestClient(TestServer(app)) as client:
        assert client.app is not None
        burst = await asyncio.gather(*(client.app[SIDECAR].sink_health() for _ in range(20)))
        assert all(state is burst[0] for state in burst)
        await asyncio.sleep(0.25)  # past the 0.2 s TTL
        assert await client.app[SIDECAR].sink_health() is not burst[0]
