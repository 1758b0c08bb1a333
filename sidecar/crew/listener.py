"""The lead's crew listener: crew search and status for the crew's members, and the crew's
memories in the lead's journal (``POST /crew/memory/{remember,recall,feedback,forget}``), and the
crew's knowledge graph, which the lead holds (``POST /crew/kg/{add,query,invalidate,timeline,
traverse,tunnels,stats}``).

It runs on its own address (``--crew-listen``), separate from the lead agent's own API on
127.0.0.1:9119, and every request needs the crew's bearer token. It writes no file: only the
lead writes the crew tier, through its own agent API; members' crew memories go to the journal.

It faces the network, so it spends nothing on a stranger: the token is checked from the headers
before any body is read (a 401 ends the connection), a body is at most ``MAX_BODY_BYTES`` (a
search is a small JSON object; a crew memory, which may carry a payload, at most
``MAX_MEMORY_BODY_BYTES``), and at most ``MAX_CONNECTIONS`` connections are open at once,
with the slots kept for members (``TRUST``): a connection that has not shown the token within a
few seconds is closed, and strangers' connections give way to new ones, so idle sockets cannot
keep a member out.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from sidecar.errors import NotFound
from sidecar.http.connections import SidecarRunner, Trust, trusted
from sidecar.http.errors import error_middleware, error_response
from sidecar.http.guards import body_deadline, server_limits
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.policy import bearer_token
from sidecar.http.state import SIDECAR
from sidecar.index.tier import Tier
from sidecar.ops.registry import by_name, check_values, refuse_unknown
from sidecar.ops.sidecar import Sidecar
from sidecar.retrieval.search import SearchRequest, SearchService

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_CONNECTIONS",
    "MAX_MEMORY_BODY_BYTES",
    "TRUST",
    "create_crew_app",
    "crew_listener_ctx",
]

MAX_BODY_BYTES = 64 * 1024
#: The largest crew-memory request: whatever a member accepts from its agent (content of 4,000
#: characters, a payload of 64 Ki characters as JSON, tags, a topic key) encoded as UTF-8 JSON
#: with every escape, with room to spare.
MAX_MEMORY_BODY_BYTES = 512 * 1024
MAX_CONNECTIONS = 64
#: Slots are kept for members: a connection must show the token within 3 s, at most 16 connections
#: without it are kept (4 per peer address), and a new one displaces the oldest of them (see
#: ``sidecar.http.connections``). A stranger's idle sockets thus never keep a member out.
TRUST = Trust(untrusted=16, per_peer=4, deadline=3.0)
#: A member's crew search takes what the agent's own search takes, less the scope (always crew).
_SEARCH_FIELDS = by_name("search").body or frozenset()
#: The crew-memory requests a member sends its lead: each the same request as its own HTTP route.
_MEMORY_OPS = ("remember", "recall", "feedback", "forget")

log = structlog.get_logger("sidecar.crew")
CREW_TIER = web.AppKey("crew_tier", Tier)
CREW_SEARCH = web.AppKey("crew_search", SearchService)
#: The lead's own sidecar, whose journal holds the crew's memories and which holds the crew's graph.
LEAD = web.AppKey("lead", Sidecar)


def create_crew_app(
    tier: Tier, search: SearchService, token: str, max_body: int = MAX_BODY_BYTES, lead: Sidecar | None = None
) -> web.Application:
    """The members' view of the lead's crew index (searched as the lead searches it), and, given the
    lead's sidecar, the crew's memories in its journal and the crew's graph."""
    # The token first: a request without it gets its 401 before its body is read.
    middlewares = [_bearer(token), _memory_body(), body_deadline(), error_middleware]
    app = web.Application(middlewares=middlewares, client_max_size=max_body)
    app[CREW_TIER] = tier
    app[CREW_SEARCH] = search
    app.router.add_post("/crew/search", _search)
    app.router.add_get("/crew/status", _status)
    app.router.add_get("/healthz", _healthz)
    if lead is not None:
        app[LEAD] = lead
        app.router.add_post("/crew/memory/{op}", _memory)
        app.router.add_post("/crew/kg/{op}", _kg)
    return app


def _bearer(token: str) -> Middleware:
    expected = token.encode()

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not hmac.compare_digest(bearer_token(request.headers.get("Authorization", "")), expected):
            log.warning("crew.unauthorized", peer=request.remote, path=request.path)
            response = error_response(401, "unauthorized", "missing or wrong crew token")
            response.headers["WWW-Authenticate"] = 'Bearer realm="crew"'
            response.force_close()  # the connection ends: a body that follows is discarded, never kept
            return response
        trusted(request)  # its peer holds the token: the connection keeps its slot
        return await handler(request)

    return check


def _memory_body() -> Middleware:
    """A crew-memory request (its sender holds the token) may carry up to MAX_MEMORY_BODY_BYTES."""

    @web.middleware
    async def allow(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.match_info.get("op") is not None and request.path.startswith("/crew/memory/"):
            request = request.clone(client_max_size=max(request.client_max_size, MAX_MEMORY_BODY_BYTES))
        return await handler(request)

    return allow


async def _search(request: web.Request) -> web.Response:
    body = await read_json_object(request)
    refuse_unknown(body.keys(), _SEARCH_FIELDS)
    check_values(body)
    req = SearchRequest.from_json({**body, "scope": "crew"})
    return json_answer(await request.app[CREW_SEARCH].search(req))


async def _memory(request: web.Request) -> web.Response:
    from sidecar.ops.memories import crew_memory  # the journal's modules load with the first crew memory call

    op = request.match_info["op"]
    if op not in _MEMORY_OPS:
        raise NotFound(f"no crew memory operation {op!r}", code="not_found")
    body = await read_json_object(request)
    refuse_unknown(body.keys(), by_name(op).body or ())  # the same request as /memory/<op>
    check_values(body)
    answer, status = await crew_memory(request.app[LEAD], op, body)
    return json_answer(answer, status=status)


async def _kg(request: web.Request) -> web.Response:
    """A question to (or a fact for) the crew's knowledge graph, which the lead holds."""
    from sidecar.kg.requests import OPERATIONS, REQUESTS, KgRequest
    from sidecar.ops.kg import run

    op = request.match_info["op"]
    if op not in OPERATIONS:
        raise NotFound(f"no crew graph operation {op!r}", code="not_found")
    body = await read_json_object(request)
    refuse_unknown(body.keys(), REQUESTS[op]["properties"])  # the graph's own request, as /kg/<op> takes it
    check_values(body)
    answer = await run(request.app[LEAD], KgRequest.from_json(op, {**body, "scope": "crew"}))
    return json_answer(answer, status=201 if op == "add" else 200)


async def _status(request: web.Request) -> web.Response:
    return web.json_response(await request.app[CREW_TIER].status())


async def _healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def crew_listener_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx of the main app: on a lead with ``--crew-listen``, serve the crew listener."""
    lead = app[SIDECAR]
    settings = lead.settings
    if lead.crew.kind != "lead" or not settings.crew_listen:
        yield
        return
    host, _, port = settings.crew_listen.rpartition(":")
    crew_app = create_crew_app(lead.tiers["crew"], lead.search, settings.crew_token, lead=lead)
    limits = {**server_limits(settings), "max_connections": MAX_CONNECTIONS}
    runner = SidecarRunner(crew_app, trust=TRUST, access_log=None, handle_signals=False, **limits)
    await runner.setup()
    try:
        await web.TCPSite(runner, host.strip("[]") or "0.0.0.0", int(port)).start()
        log.info("crew.listening", listen=settings.crew_listen)
        yield
    finally:
        await runner.cleanup()
