"""The memory browser: read-only pages at ``GET /ui`` over the agent's files, search, typed
memories, journal, knowledge graph, health and memory block, served by the sidecar itself
(``--ui false`` or ``--no-ui``: off; the routes are in ``sidecar.ui.routes``). See docs/ui.md."""
