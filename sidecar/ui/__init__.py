"""The memory browser: read-only pages at ``GET /ui`` over the agent's files, search, typed
memories, journal, knowledge graph, health and memory block, served by the sidecar itself
(``--ui false`` or ``--no-ui``: off). See docs/ui.md."""

from __future__ import annotations

from sidecar.ui.routes import routes

__all__ = ["routes"]
