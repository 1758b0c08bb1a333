"""The episodic journal's routes over ``sidecar.ops.journal``: ``POST /journal``, ``GET /journal``,
``POST /episodic/recall``, ``GET /memory/health`` (latest snapshot, never recomputed),
``POST /memory/health`` (recompute) and ``POST /memory/session``."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.episodic.entry import JournalEntry, invalid, require_id
from sidecar.http.jsonio import read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import journal

__all__ = ["HANDLERS"]

_MAX_LIST = 100


async def _post_journal(request: web.Request) -> web.Response:
    entry = JournalEntry.from_json(await read_json_object(request))
    answer, status = await journal.append(request.app[SIDECAR], entry)
    return web.json_response(answer, status=status)


async def _session(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    answer, status = await journal.session(sc, journal.session_request(sc.settings, await read_json_object(request)))
    return web.json_response(answer, status=status)


async def _get_journal(request: web.Request) -> web.Response:
    limit = _int_param(request, "limit", 20, 1, _MAX_LIST)
    found = await journal.entries(request.app[SIDECAR], _workspace(request), request.query.get("q", ""), limit)
    return web.json_response({"entries": found})


async def _post_recall(request: web.Request) -> web.Response:
    req = journal.EntriesRecall.from_json(await read_json_object(request))
    return web.json_response(await journal.recall(request.app[SIDECAR], req))


async def _get_health(request: web.Request) -> web.Response:
    return web.json_response(await journal.health(request.app[SIDECAR], _workspace(request), _crew(request)))


async def _post_health(request: web.Request) -> web.Response:
    if request.query.get("recompute", "1").lower() not in ("1", "true", "yes"):
        raise invalid("recompute", "POST /memory/health recomputes; recompute must be 1 (GET reads the latest)")
    answer = await journal.recompute_health(request.app[SIDECAR], _workspace(request), _crew(request))
    return web.json_response(answer)


def _workspace(request: web.Request) -> str:
    value = require_id("workspace_id", request.query.get("workspace_id"))
    assert value is not None  # require_id raises instead of returning None when not optional
    return value


def _crew(request: web.Request) -> str | None:
    return require_id("crew_id", request.query.get("crew_id"), optional=True)


def _int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid(name, f"{name} must be an integer in {low}..{high}") from None
    if not low <= value <= high:
        raise invalid(name, f"{name} must be an integer in {low}..{high}")
    return value


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "journal_append": _post_journal,
    "session": _session,
    "journal_list": _get_journal,
    "episodic_recall": _post_recall,
    "health": _get_health,
    "health_compute": _post_health,
}
