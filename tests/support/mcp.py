"""An initialised session of the official MCP client on a test server's /mcp."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp.test_utils import TestServer
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

__all__ = ["mcp_session"]


@asynccontextmanager
async def mcp_session(server: TestServer) -> AsyncIterator[ClientSession]:
    url = str(server.make_url("/mcp"))
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
