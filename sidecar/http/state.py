"""What the web application holds: the settings it was built with (known before it starts, for
what is set up then) and the open ``Sidecar`` (``sidecar.ops.sidecar``), which the composition
root (``sidecar.server``) opens when the application starts. The HTTP routes, the MCP tools, the
crew listener and the memory browser reach every part through it."""

from __future__ import annotations

from aiohttp import web

from sidecar.ops.sidecar import Sidecar
from sidecar.settings import Settings

__all__ = ["SETTINGS", "SIDECAR"]

#: The settings the application was built with (the agent's settings file applied).
SETTINGS = web.AppKey("settings", Settings)
#: The open sidecar, from the application's start to its cleanup.
SIDECAR = web.AppKey("sidecar", Sidecar)
