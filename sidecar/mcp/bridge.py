"""The stdio server itself: the official SDK's server (``mcp.server.lowlevel.Server`` on
``mcp.server.stdio.stdio_server``) over a backend (``sidecar.mcp.rpc.Backend``), and the watch
that tells a client its tool list changed. Imported only by a ``memory-sidecar mcp`` that serves:
one that is refused at start never loads the SDK's server side."""

from __future__ import annotations

from typing import Any

import aiohttp
import anyio
import mcp_types as types
import structlog
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from sidecar import __version__
from sidecar.mcp.rpc import INSTRUCTIONS, Backend, RpcError

__all__ = ["WATCH_EVERY_S", "Bridge", "serve_stdio"]

log = structlog.get_logger("sidecar.mcp.stdio")
#: How often the offered tools are compared with what the client last listed.
WATCH_EVERY_S = 5.0


class Bridge:
    """The SDK server's handlers over a backend, and the watch that tells a client its tool list
    changed (only a client that has listed the tools, and only when what it would get differs)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._session: ServerSession | None = None
        self._listed: list[str] | None = None

    def server(self) -> Server[Any]:
        return Server(
            "memory-sidecar",
            version=__version__,
            title="Agent memory",
            instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_read_resource=self.read_resource,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
        )

    async def list_tools(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        result = await self._call("tools/list", {})
        self._session, self._listed = ctx.session, [tool["name"] for tool in result["tools"]]
        return types.ListToolsResult.model_validate(result)

    async def call_tool(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        args = {"name": params.name, "arguments": params.arguments or {}}
        return types.CallToolResult.model_validate(await self._call("tools/call", args))

    async def list_resources(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult.model_validate(await self._call("resources/list", {}))

    async def read_resource(self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
        return types.ReadResourceResult.model_validate(await self._call("resources/read", {"uri": str(params.uri)}))

    async def list_prompts(self, ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult.model_validate(await self._call("prompts/list", {}))

    async def get_prompt(self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> Any:
        asked = {"name": params.name, "arguments": params.arguments or {}}
        return types.GetPromptResult.model_validate(await self._call("prompts/get", asked))

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.backend.call(method, params)
        except RpcError as exc:
            raise MCPError(exc.code, exc.message, exc.data) from None
        except aiohttp.ClientError as exc:
            raise MCPError(-32603, f"the sidecar could not be reached: {exc}") from None

    async def watch(self, every: float = WATCH_EVERY_S) -> None:
        """Tell the client when the tools it would list differ from the ones it listed last."""
        while True:
            await anyio.sleep(every)
            if self._session is None or self._listed is None:
                continue
            try:
                now = [tool["name"] for tool in (await self.backend.call("tools/list", {}))["tools"]]
            except (RpcError, aiohttp.ClientError) as exc:
                log.warning("mcp.stdio.watch_failed", error=str(exc))
                continue
            if now != self._listed:
                log.info("mcp.stdio.tools_changed", listed=self._listed, now=now)
                self._listed = now  # told once; the client lists again
                await self._session.send_tool_list_changed()


async def serve_stdio(backend: Backend, *, watch_every: float = WATCH_EVERY_S) -> None:
    """Serve MCP on stdin and stdout until the client closes stdin."""
    bridge = Bridge(backend)
    server = bridge.server()
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
        tasks.start_soon(bridge.watch, watch_every)
        await server.run(read, write, options)
        tasks.cancel_scope.cancel()
