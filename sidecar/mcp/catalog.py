"""The MCP tools by name: their groups, their old dotted names, and which are offered right now.

Names are ``snake_case`` so every client takes them (OpenAI and Anthropic function names must
match ``^[a-zA-Z0-9_-]{1,64}$``). The dotted names of earlier releases (``memory.write``,
``kg.add``) are still accepted by ``tools/call`` as aliases but never listed.

What is offered follows what a tool can do now: memory off offers nothing; the memory sink's
health gates the tools that touch files, except that a tier over its byte cap keeps the tools that
can free room (``memory_read`` to see the entries, ``memory_write`` to replace them with a shorter
body, ``memory_delete``); ``--mcp-tools`` narrows the whole list to the names and groups it gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from aiohttp import web

from sidecar.errors import ConfigError
from sidecar.http.state import SETTINGS, SIDECAR
from sidecar.settings import Settings
from sidecar.write.sink import SinkHealth

__all__ = [
    "GROUPS",
    "NAME_PATTERN",
    "TOOLS",
    "ToolSpec",
    "allowed",
    "canonical",
    "offered",
    "parse_allowlist",
]

#: What OpenAI and Anthropic accept as a function name.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
Group = Literal["core", "memories", "kg", "palace"]
#: What must hold for a tool to be offered: the sink writable (``write``; ``room``: or only over its
#: cap, the tool frees room), the agent index answering (``search``), the journal or the graph
#: running, or nothing (``always``).
Needs = Literal["write", "room", "search", "journal", "kg", "always"]
#: The sink's reason when the tier is past its byte cap (``sidecar.write.sink.probe_dir``).
OVER_CAP_REASON = "agent tier is past its cap"


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: its name, the dotted name it had (None: a tool that never had one), its group, what
    it needs to be offered, and the registry's operation it runs (``sidecar.ops.registry``: the
    rules every way in applies)."""

    name: str
    alias: str | None
    group: Group
    needs: Needs
    operation: str


def _spec(alias: str, group: Group, needs: Needs, operation: str) -> ToolSpec:
    return ToolSpec(alias.replace(".", "_"), alias, group, needs, operation)


TOOLS: tuple[ToolSpec, ...] = (
    _spec("memory.write", "core", "room", "write"),
    _spec("memory.read", "core", "room", "read"),
    _spec("memory.search", "core", "search", "search"),
    _spec("memory.check_duplicate", "core", "search", "search"),  # no route of its own: it searches
    _spec("memory.remember", "memories", "journal", "remember"),
    _spec("memory.recall", "memories", "journal", "recall"),
    _spec("memory.feedback", "memories", "journal", "feedback"),
    _spec("memory.forget", "memories", "journal", "forget"),
    ToolSpec("memory_restore", None, "memories", "journal", "restore"),
    ToolSpec("memory_session", None, "memories", "journal", "session"),
    *(
        _spec(f"kg.{op}", "kg", "kg", f"kg_{op}")
        for op in ("add", "query", "invalidate", "timeline", "traverse", "tunnels", "stats")
    ),
    _spec("memory.list", "palace", "always", "list"),
    _spec("memory.taxonomy", "palace", "always", "taxonomy"),
    _spec("memory.diary_read", "palace", "always", "diary_read"),
    _spec("memory.delete", "palace", "room", "delete"),
    _spec("memory.set_identity", "palace", "write", "identity"),
    _spec("memory.diary_write", "palace", "write", "diary_write"),
    _spec("memory.ingest", "palace", "write", "ingest"),
)
GROUPS: dict[str, tuple[str, ...]] = {
    group: tuple(t.name for t in TOOLS if t.group == group) for group in ("core", "memories", "kg", "palace")
}
_BY_NAME = {t.name: t for t in TOOLS} | {t.alias: t for t in TOOLS if t.alias is not None}


def canonical(name: str) -> ToolSpec | None:
    """The tool called ``name`` (its name or its dotted alias), or None."""
    return _BY_NAME.get(name)


def parse_allowlist(raw: str) -> frozenset[str]:
    """The tool names ``--mcp-tools`` allows (comma- or space-separated names, aliases or groups;
    empty: every tool). An unknown entry is a ConfigError naming it, so a typo is not a silent
    empty list."""
    entries = [e for e in re.split(r"[,\s]+", raw.strip()) if e]
    if not entries:
        return frozenset(_BY_NAME[t.name].name for t in TOOLS)
    names: set[str] = set()
    for entry in entries:
        if entry in GROUPS:
            names.update(GROUPS[entry])
        elif (spec := canonical(entry)) is not None:
            names.add(spec.name)
        else:
            raise ConfigError(
                f"--mcp-tools: unknown tool or group {entry!r} (groups: {', '.join(GROUPS)}; "
                f"tools: {', '.join(t.name for t in TOOLS)})"
            )
    return frozenset(names)


def allowed(settings: Settings) -> frozenset[str]:
    """The tools this sidecar may ever offer: ``--mcp-tools``, and none while memory is off."""
    return parse_allowlist(settings.mcp_tools) if settings.memory_enabled else frozenset()


async def offered(app: web.Application) -> list[str]:
    """The tools to list now, in table order."""
    names = allowed(app[SETTINGS])
    if not names:
        return []
    state = await app[SIDECAR].sink_health()
    ready = {
        "write": state.healthy,
        "room": state.healthy or only_over_cap(state),
        "search": state.searchable,
        "journal": SIDECAR in app,
        "kg": SIDECAR in app,
        "always": True,
    }
    return [t.name for t in TOOLS if t.name in names and ready[t.needs]]


def only_over_cap(state: SinkHealth) -> bool:
    """Whether the tier being past its byte cap is all that keeps the sink from taking writes: then
    a replace that shrinks a file, or a delete, can still land and free room."""
    return bool(state.reasons) and all(reason.startswith(OVER_CAP_REASON) for reason in state.reasons)
