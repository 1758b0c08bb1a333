"""The temporal knowledge graph: entities, facts with validity windows, and questions about change.

Facts come from memory files and journal entries (``extract``), are stored per workspace and scope
(the agent's own or a crew's) by ``sqlite_kg`` behind the ``store`` interface, and are never
deleted: a fact that stops holding gets a ``valid_to``. ``graph`` answers the questions (as of a
date, timeline, before, traversal, tunnels, stats); ``boost`` lifts search hits that mention the
entities a query names; ``lifecycle`` wires it into the server.
"""
