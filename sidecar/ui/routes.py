"""The memory browser's views: ``GET /ui`` and its pages, read-only.

Each view is the handler of an operation of the registry (``sidecar.ops.registry``), routed by
``sidecar.http.routes`` at the operation's path, so the policy middleware
refuses a parameter a view does not take and answers 403 ``memory_disabled`` with memory off.
Only GET is routed: a POST or any other method is 405, and the forms submit with GET. A view
that cannot answer (a bad parameter, an unknown file or entity) gives the agent API's JSON error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from sidecar.contract import MAX_BUDGET, MAX_LIMIT
from sidecar.episodic.entry import MEMORY_TYPES, require_id
from sidecar.errors import BadRequest
from sidecar.http.state import SIDECAR
from sidecar.settings import ROLES
from sidecar.ui import reads, views
from sidecar.ui.page import check_same_origin, page

__all__ = ["block", "file", "files", "graph", "health", "journal", "memories", "memory", "search"]

View = Callable[[web.Request], Awaitable[web.Response]]
_SCOPES = ("agent", "crew", "both")


def _text(request: web.Request, name: str) -> str | None:
    """A parameter's value as sent; None when absent or empty (a form sends its empty fields)."""
    return request.query.get(name) or None


def _words(request: web.Request, name: str) -> str | None:
    """A free-text parameter (a query, a tag, an entity); None when absent or only spaces."""
    value = request.query.get(name, "")
    return value if value.strip() else None


def _number(request: web.Request, name: str, low: int, high: int) -> int | None:
    raw = _text(request, name)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise BadRequest(f"{name} must be a whole number from {low} to {high}", code=f"invalid_{name}", field=name)
    return int(raw)


def _guarded(view: View) -> View:
    """The view, behind the same-origin check, taking each parameter at most once."""

    async def run(request: web.Request) -> web.Response:
        check_same_origin(request)
        for name in request.query:
            if len(request.query.getall(name)) > 1:
                raise BadRequest(f"{name} is given more than once", code=f"invalid_{name}", field=name)
        return await view(request)

    return run


@_guarded
async def files(request: web.Request) -> web.Response:
    return page("Memory files", views.tree_view(await reads.files(request.app[SIDECAR])), here="/ui")


@_guarded
async def file(request: web.Request) -> web.Response:
    answer = await reads.read(request.app[SIDECAR], _text(request, "tier") or "agent", request.query.get("path", ""))
    return page(f"{answer['tier']}/{answer['path']}", views.file_view(answer), here="/ui")


@_guarded
async def search(request: web.Request) -> web.Response:
    query, scope = _words(request, "query"), _text(request, "scope")
    if scope is not None and scope not in _SCOPES:  # checked with no query too: the form keeps it
        raise BadRequest(f"scope must be one of {', '.join(_SCOPES)}", code="invalid_scope", field="scope")
    limit = _number(request, "limit", 1, MAX_LIMIT)
    answer = await reads.search(request.app[SIDECAR], query, scope, limit) if query else None
    scopes = ("agent", "crew", "both") if request.app[SIDECAR].settings.has_crew else ("agent",)
    return page("Search", views.search_view(query or "", scope, answer, scopes), here="/ui/search")


def _identity_fields(request: web.Request) -> dict[str, str]:
    return {k: v for k in ("workspace_id", "agent_id", "namespace") if (v := _text(request, k))}


@_guarded
async def memories(request: web.Request) -> web.Response:
    memory_type, tag = _text(request, "memory_type"), _words(request, "tag")
    if memory_type is not None and memory_type not in MEMORY_TYPES:
        raise BadRequest(f"memory_type must be one of {', '.join(MEMORY_TYPES)}", code="invalid_memory_type")
    found = await reads.memories(request.app[SIDECAR], _identity_fields(request), memory_type, tag)
    given = {
        **_identity_fields(request),
        **({"memory_type": memory_type} if memory_type else {}),
        **({"tag": tag} if tag else {}),
    }
    return page("Typed memories", views.memories_view(given, found, MEMORY_TYPES), here="/ui/memories")


@_guarded
async def memory(request: web.Request) -> web.Response:
    topic_key = request.query.get("topic_key", "")
    entries = await reads.topic_history(request.app[SIDECAR], _identity_fields(request), topic_key)
    return page(f"History of {topic_key}", views.history_view(topic_key, entries), here="/ui/memories")


@_guarded
async def journal(request: web.Request) -> web.Response:
    workspace = reads.workspace(request.app[SIDECAR], _text(request, "workspace_id"))
    q = _words(request, "q") or ""
    limit = _number(request, "limit", 1, 100) or 50
    entries = await reads.journal(request.app[SIDECAR], workspace, q, limit)
    return page("Journal", views.journal_view(workspace, q, entries), here="/ui/journal")


@_guarded
async def graph(request: web.Request) -> web.Response:
    entity, workspace, scope = _words(request, "entity"), _text(request, "workspace_id"), _text(request, "scope")
    stats = await reads.graph_stats(request.app[SIDECAR], workspace, scope)
    line = near = None
    if entity is not None:
        line = await reads.timeline(request.app[SIDECAR], entity, workspace, scope)
        near = await reads.neighbours(request.app[SIDECAR], entity, workspace, scope)
    return page("Knowledge graph", views.graph_view(entity or "", stats, line, near), here="/ui/graph")


@_guarded
async def health(request: web.Request) -> web.Response:
    workspace = reads.workspace(request.app[SIDECAR], _text(request, "workspace_id"))
    crew = require_id("crew_id", _text(request, "crew_id"), optional=True)
    history = await reads.health(request.app[SIDECAR], workspace, crew)
    return page("Memory health", views.health_view(workspace, history), here="/ui/health")


@_guarded
async def block(request: web.Request) -> web.Response:
    query, role = _words(request, "query"), _text(request, "role")
    budget = _number(request, "budget", 1, MAX_BUDGET)
    body: dict[str, object] = {"query": query, "budget": budget, "role": role}
    answer = await reads.memory_block(request.app[SIDECAR], {k: v for k, v in body.items() if v is not None})
    shown = str(budget or request.app[SIDECAR].settings.prompt_budget)
    return page("Memory block", views.block_view(query or "", shown, role, ROLES, answer), here="/ui/block")
