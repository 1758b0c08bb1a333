"""MCP clients over streamable HTTP, each a session named by its ``Mcp-Session-Id``: its protocol
version, the tools it last listed, and its server stream (``GET /mcp``), on which it is told when
the tool list it would get has changed.

A client cannot take another's session away: past ``MAX_SESSIONS`` a new session is refused
(``too_many_sessions``), never made by ending a live one; a session unused for ``IDLE_S`` (and with
no stream open) is over, which is what frees room for clients that never end theirs.

A session has at most one stream: a second ``GET`` ends the first, so a notification is never sent
twice. A session is told a change once (its listed tools then count as the new list); one that never
listed the tools, or has no stream open, is told nothing.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.errors import EngineUnavailable

__all__ = ["IDLE_S", "LIST_CHANGED", "MAX_SESSIONS", "McpSessions", "Session", "Stream"]

MAX_SESSIONS = 1024
#: A session neither used nor streaming for this long is over (a client that did not DELETE it).
IDLE_S = 1800.0
LIST_CHANGED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
#: What a session's stream carries: a message to send, or None to end the stream.
Stream = asyncio.Queue[dict[str, Any] | None]


@dataclass(slots=True)
class Session:
    version: str
    listed: tuple[str, ...] | None = None
    stream: Stream | None = None
    used: float = 0.0  # monotonic time of its last request


class McpSessions:
    """Live sessions by id, least recently used first; at most ``limit``, idle ones ending."""

    def __init__(self, limit: int = MAX_SESSIONS, idle_s: float = IDLE_S) -> None:
        self.limit = limit
        self.idle_s = idle_s
        self._live: OrderedDict[str, Session] = OrderedDict()

    def open(self, version: str) -> str:
        """A new session's id; EngineUnavailable ``too_many_sessions`` when ``limit`` sessions are in
        use (a flood of ``initialize`` calls cannot end the sessions of other clients)."""
        now = time.monotonic()
        for sid, session in list(self._live.items()):
            if now - session.used < self.idle_s:
                break  # least recently used first: the rest are newer
            if session.stream is None:
                del self._live[sid]
        if len(self._live) >= self.limit:
            raise EngineUnavailable(
                f"{self.limit} MCP sessions are in use; end one (DELETE /mcp) or retry later",
                code="too_many_sessions",
            )
        sid = secrets.token_urlsafe(24)
        self._live[sid] = Session(version, used=now)
        return sid

    def get(self, sid: str) -> str | None:
        """The session's protocol version (None: no such session); it counts as used."""
        session = self._live.get(sid)
        if session is None:
            return None
        self._live.move_to_end(sid)
        session.used = time.monotonic()
        return session.version

    def close(self, sid: str) -> bool:
        session = self._live.pop(sid, None)
        if session is not None:
            _end(session)
        return session is not None

    def listed(self, sid: str, names: Sequence[str]) -> None:
        """Record the tools the session was just given."""
        session = self._live.get(sid)
        if session is not None:
            session.listed = tuple(names)

    def attach(self, sid: str) -> Stream | None:
        """A new stream for the session (ending any earlier one); None: no such session."""
        session = self._live.get(sid)
        if session is None:
            return None
        _end(session)
        session.stream = asyncio.Queue()
        return session.stream

    def detach(self, sid: str, stream: Stream) -> None:
        session = self._live.get(sid)
        if session is not None and session.stream is stream:
            session.stream = None

    def watching(self) -> bool:
        """Whether a session would be told of a change: it listed the tools and has a stream."""
        return any(s.stream is not None and s.listed is not None for s in self._live.values())

    def tell_changed(self, names: Sequence[str]) -> int:
        """Queue the list-changed notification for each watching session whose list differs from
        ``names``; returns how many were told."""
        told = 0
        for session in self._live.values():
            if session.stream is not None and session.listed is not None and session.listed != tuple(names):
                session.stream.put_nowait(LIST_CHANGED)
                session.listed = tuple(names)
                told += 1
        return told

    def end_streams(self) -> None:
        """End every open stream (the server is shutting down)."""
        for session in self._live.values():
            _end(session)


def _end(session: Session) -> None:
    if session.stream is not None:
        session.stream.put_nowait(None)
        session.stream = None
