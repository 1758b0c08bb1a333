"""``memory-sidecar mcp``: MCP over stdio, for clients that start their servers as processes
(Claude Desktop, Claude Code, Codex, the OpenAI Agents SDK's ``MCPServerStdio`` ...).

The official SDK (``mcp.server.lowlevel.Server`` on ``mcp.server.stdio.stdio_server``, in
``sidecar.mcp.bridge``) carries the protocol; every request is answered by a backend, chosen once
at start:

- in process (the default): the sidecar's application over ``--memory-dir``, started whole but
  with no port open, answering with the same methods as ``/mcp`` (``sidecar.mcp.methods``). It
  takes the tier dir's lock; when a running sidecar holds it, and answers at the settings' host and
  port for that very dir, the server forwards to it instead;
- forwarding (``--url``, or found as above): each request goes to a running sidecar's ``/mcp``,
  with the sidecar's API token (``--api-token``, ``MEMORY_SIDECAR_API_TOKEN``) as
  ``Authorization: Bearer`` when one is set.

Each backend is imported only when chosen: a server that forwards loads neither the application
nor the operations, and one refused at start (the dir's lock held by a sidecar that does not
answer) loads not even the SDK's server side.

The tool list follows what the tools can do now, so the server says ``listChanged`` and, once a
client has listed the tools, tells it when the list it would get has changed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import aiohttp
import structlog

from sidecar.errors import TierLocked
from sidecar.logs import configure_logging
from sidecar.mcp.rpc import PROTOCOL_VERSIONS, SESSION_HEADER, VERSION_HEADER, Backend, RpcError
from sidecar.settings import Settings

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["AppFactory", "Backend", "InProcess", "LockCheck", "Remote", "in_process", "main"]

log = structlog.get_logger("sidecar.mcp.stdio")


class InProcess:
    """The sidecar's application in this process, answering with ``sidecar.mcp.methods``."""

    def __init__(self, app: web.Application) -> None:
        self.app = app

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from sidecar.mcp.methods import dispatch  # the application's side: loaded with the application

        return await dispatch(self.app, method, params)


class Remote:
    """A running sidecar's ``/mcp``, one MCP session on it, opened again if the sidecar forgot it;
    ``token``: the sidecar's API token, sent as ``Authorization: Bearer``."""

    def __init__(self, url: str, http: aiohttp.ClientSession, token: str = "") -> None:
        base = url.rstrip("/")
        self.url = base if base.endswith("/mcp") else f"{base}/mcp"
        self.http = http
        self._auth = _auth(token)
        self._session: str | None = None
        self._version = PROTOCOL_VERSIONS[-1]

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if self._session is None:
            await self._open()
        try:
            return await self._post(method, params)
        except _SessionGone:
            await self._open()
            return await self._post(method, params)

    async def _open(self) -> None:
        hello = {"protocolVersion": self._version, "capabilities": {}, "clientInfo": {"name": "memory-sidecar mcp"}}
        async with self.http.post(self.url, json=_message("initialize", hello), headers=_HEADERS | self._auth) as resp:
            body = await resp.json(content_type=None)
            sid = resp.headers.get(SESSION_HEADER)
        if resp.status == 401:
            raise RpcError(
                -32603, f"the sidecar at {self.url} wants its API token: give --api-token or set {TOKEN_ENV}"
            )
        if "error" in body or not sid:
            raise RpcError(-32603, f"the sidecar at {self.url} refused the MCP session: {body.get('error')}")
        self._session, self._version = sid, body["result"]["protocolVersion"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        async with self.http.post(self.url, json=note, headers=self._headers()):
            pass

    async def _post(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        async with self.http.post(self.url, json=_message(method, params), headers=self._headers()) as resp:
            if resp.status == 404:
                raise _SessionGone
            body = await resp.json(content_type=None)
        if "error" in body:
            error = body["error"]
            raise RpcError(int(error["code"]), str(error["message"]), data=error.get("data"))
        result: dict[str, Any] = body["result"]
        return result

    def _headers(self) -> dict[str, str]:
        return {**_HEADERS, **self._auth, SESSION_HEADER: self._session or "", VERSION_HEADER: self._version}


class _SessionGone(Exception):
    """The sidecar no longer knows our session (it restarted): open another."""


_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: Where the server and its clients read the API token when no flag gives it.
TOKEN_ENV = "MEMORY_SIDECAR_API_TOKEN"


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _message(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


#: ``sidecar.server.app.create_app``, given by the CLI (the server package sits above this one).
AppFactory = Callable[[Settings], "web.Application"]
#: Raises ``TierLocked`` when another process holds a tier dir these settings would serve, and holds
#: nothing once it returns (given by the CLI: the tier lock belongs to the server package). Asked
#: before the application is imported, so a server that is refused, or forwards, never loads it.
LockCheck = Callable[[Settings], None]


@asynccontextmanager
async def in_process(settings: Settings, create_app: AppFactory) -> AsyncIterator[InProcess]:
    """The sidecar's application started whole (tiers, journal, graph), with no port open."""
    from aiohttp import web

    runner = web.AppRunner(create_app(settings), handle_signals=False)
    try:
        await runner.setup()
        yield InProcess(runner.app)
    finally:
        await runner.cleanup()


async def _run(settings: Settings, url: str | None, create_app: AppFactory, check_lock: LockCheck | None) -> None:
    if url:
        await _forward(url, settings.api_token)
        return
    try:
        if check_lock is not None:
            check_lock(settings)
        async with in_process(settings, create_app) as backend:
            from sidecar.mcp.bridge import serve_stdio

            log.info("mcp.stdio.ready", memory_dir=str(settings.memory_dir), role=settings.role)
            await serve_stdio(backend)
    except TierLocked:
        serving = await _serving(settings)
        if serving is None:
            raise
        log.info("mcp.stdio.forwarding", url=serving, memory_dir=str(settings.memory_dir))
        await _forward(serving, settings.api_token)


async def _forward(url: str, token: str) -> None:
    from sidecar.mcp.bridge import serve_stdio

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=120)) as http:
        await serve_stdio(Remote(url, http, token))


def _address(settings: Settings) -> str:
    """Where a sidecar started with these settings answers (its loopback address when it binds all)."""
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    return f"http://[{host}]:{settings.port}" if ":" in host else f"http://{host}:{settings.port}"


async def _serving(settings: Settings) -> str | None:
    """The address of the sidecar that holds the memory dir, if it answers at the settings' address
    and says it indexes that very dir; else None."""
    url = _address(settings)
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=3)) as http,
            http.get(f"{url}/memory/status", headers=_auth(settings.api_token)) as resp,
        ):
            status = await resp.json(content_type=None) if resp.status == 200 else {}
    except (aiohttp.ClientError, TimeoutError, ValueError):
        return None
    return url if isinstance(status, dict) and status.get("dir") == str(settings.memory_dir) else None


def main(settings: Settings, url: str | None, create_app: AppFactory, check_lock: LockCheck | None = None) -> int:
    """``memory-sidecar mcp``: serve until the client goes; logs go to stderr (stdout is the protocol).
    On a memory dir a running sidecar serves, it forwards to that sidecar when it answers at the
    settings' host and port; otherwise it says which ``--url`` to give."""
    configure_logging(settings.log_format, settings.log_level, stream=sys.stderr)
    try:
        asyncio.run(_run(settings, url, create_app, check_lock))
    except TierLocked as exc:
        print(
            f"memory-sidecar mcp: {exc.message.split(';')[0]}, and it does not answer at {_address(settings)}; "
            "give its address: memory-sidecar mcp --url http://HOST:PORT",
            file=sys.stderr,
        )
        return 1
    return 0
