"""The memory sink's health cache of a test's sidecar, set to a short life once the sidecar opens."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from sidecar.http.state import SIDECAR

__all__ = ["sink_ttl"]


def sink_ttl(ttl: float) -> Callable[[web.Application], Awaitable[None]]:
    """An ``on_startup`` handler (it runs after the sidecar opened) giving its sink-health cache ``ttl``
    seconds of life instead of one."""

    async def set_ttl(app: web.Application) -> None:
        app[SIDECAR].health.ttl = ttl

    return set_ttl
