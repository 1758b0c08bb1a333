"""The episodic journal's routes over ``sidecar.ops.journal``: ``POST /journal``, ``GET /journal``,
``POST /episodic/recall``, ``GET /memory/health`` (latest snapshot, never recomputed),
``POST /memory/health`` (recompute) and ``POST /memory/session``."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.episodic.entry import JournalEntry, invalid
from sidecar.http.jsonio import read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops import journal

__all__ = ["HANDLERS"]


async def _post_journal(request: web.Request) -> web.Response:
    entry = JournalEntry.from_json(await read_json_object(request))
    answer, status = await journal.append(request.app[SIDECAR], entry)
    return web.json_response(answer, status=status)


async def _session(request: web.Request) -> web.Response:
    sc = request.app[SIDECAR]
    answer, status = await journal.session(sc, journal.session_request(sc.settings, await read_json_object(request)))
    return web.json_response(answer, status=status)


async def _get_journal(request: web.Request) -> web.Response:
    return web.json_response(await journal.entries(request.app[SIDECAR], journal.EntriesList.from_query(request.query)))


async def _post_recall(request: web.Request) -> web.Response:
    req = journal.EntriesRecall.from_json(await read_json_object(request))
    return web.json_response(await journal.recall(request.app[SIDECAR], req))


async def _get_health(request: web.Request) -> web.Response:
    return web.json_response(
        await journal.health(request.app[SIDECAR], journal.HealthRequest.from_query(request.query))
    )


async def _post_health(request: web.Request) -> web.Response:
    if request.query.get("recompute", "1").lower() not in ("1", "true", "yes"):
        raise invalid("recompute", "POST /memory/health recomputes; recompute must be 1 (GET reads the latest)")
    answer = await journal.recompute_health(request.app[SIDECAR], journal.HealthRequest.from_query(request.query))
    return web.json_response(answer)


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "journal_append": _post_journal,
    "session": _session,
    "journal_list": _get_journal,
    "episodic_recall": _post_recall,
    "health": _get_health,
    "health_compute": _post_health,
}
