"""``POST /memory/consolidate`` (a consolidation now, or its dry run) and the schedule's background
task, over ``sidecar.ops.consolidate``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.typedefs import Handler

from sidecar.contract import ConsolidateRequest
from sidecar.http.jsonio import json_answer, read_json_object
from sidecar.http.state import SIDECAR
from sidecar.ops.consolidate import consolidate, every
from sidecar.tasks import stop_task

__all__ = ["HANDLERS", "consolidate_schedule_ctx"]


async def _consolidate(request: web.Request) -> web.Response:
    req = ConsolidateRequest.from_json(await read_json_object(request))
    return json_answer(await consolidate(request.app[SIDECAR], req))


async def consolidate_schedule_ctx(app: web.Application) -> AsyncIterator[None]:
    """cleanup_ctx: the consolidation schedule, every ``consolidate_interval`` hours. Never with
    memory off: memory is then neither read nor written."""
    sidecar = app[SIDECAR]
    hours = sidecar.settings.consolidate_interval if sidecar.settings.memory_enabled else 0
    task = asyncio.create_task(every(sidecar, hours * 3600)) if hours > 0 else None
    yield
    if task is not None:
        await stop_task(task)


#: The operations of ``sidecar.ops.registry`` this module serves, by name (``sidecar.http.routes``).
HANDLERS: dict[str, Handler] = {
    "consolidate": _consolidate,
}
