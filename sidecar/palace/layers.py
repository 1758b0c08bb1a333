"""The layers of the memory block. L0 is who the agent is (``identity.md``, then ``pins.md``):
always first, never cut. L1 is the essentials: the evergreen file and the newest daily notes,
and the journal's typed memories ranked by importance x recency. L2 is a room's files, on
request. L3 is what a query recalls, only above the relevance threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sidecar.errors import BadRequest

__all__ = [
    "IDENTITY_FILE",
    "IDENTITY_MAX_CHARS",
    "LAYERS",
    "Essential",
    "check_identity",
    "check_layers",
    "rank_essentials",
    "render_essentials",
]

LAYERS = ("L0", "L1", "L2", "L3")
IDENTITY_FILE = "identity.md"
IDENTITY_MAX_CHARS = 2000
#: Journal memories L1 takes at most, and the characters they may fill.
ESSENTIALS_MAX = 15
ESSENTIALS_MAX_CHARS = 2000
ESSENTIAL_SNIPPET = 200
#: Days over which a memory's recency weight halves.
HALF_LIFE_DAYS = 30.0


def check_identity(text: object) -> str:
    """The identity text, or a 400: a non-empty string of at most IDENTITY_MAX_CHARS characters."""
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise BadRequest("identity must be a non-empty string", code="invalid_identity")
    if len(text) > IDENTITY_MAX_CHARS:
        raise BadRequest(
            f"identity is {len(text)} characters; at most {IDENTITY_MAX_CHARS} (it goes whole into every block)",
            code="identity_too_long",
        )
    return text.strip("\n") + "\n"


def check_layers(raw: object, has_query: bool) -> tuple[str, ...]:
    """The block's layers: L0 and L1 by default, and L3 when there is a query."""
    if raw is None:
        return ("L0", "L1", "L3") if has_query else ("L0", "L1")
    if not isinstance(raw, list) or not raw or any(layer not in LAYERS for layer in raw):
        raise BadRequest(f"layers must be a non-empty list of {', '.join(LAYERS)}", code="invalid_layers")
    return tuple(layer for layer in LAYERS if layer in raw)


@dataclass(frozen=True, slots=True)
class Essential:
    """A typed memory of the journal as L1 ranks it."""

    id: str
    memory_type: str
    text: str
    importance: float
    at: datetime

    def weight(self, now: datetime) -> float:
        days = max((now - self.at).total_seconds() / 86400, 0.0)
        return self.importance * math.pow(0.5, days / HALF_LIFE_DAYS)


def rank_essentials(memories: Sequence[Essential], now: datetime, limit: int = ESSENTIALS_MAX) -> list[Essential]:
    """The ``limit`` memories of the highest importance x recency, best first (ties: newest)."""
    return sorted(memories, key=lambda m: (-m.weight(now), -m.at.timestamp(), m.id))[:limit]


def render_essentials(memories: Sequence[Essential], limit: int = ESSENTIALS_MAX_CHARS) -> tuple[str, int]:
    """``[ESSENTIAL MEMORIES]``: one line per memory, best first, while they fit ``limit``; and
    how many lines it holds."""
    start, end = "[ESSENTIAL MEMORIES]", "[END ESSENTIAL MEMORIES]"
    lines: list[str] = []
    used = len(start) + len(end) + 2
    for memory in memories:
        text = " ".join(memory.text.split())
        if len(text) > ESSENTIAL_SNIPPET:
            text = text[: ESSENTIAL_SNIPPET - 1].rstrip() + "…"
        line = f"- ({memory.memory_type}) {text}"
        if used + len(line) + 1 > limit:
            break
        lines.append(line)
        used += len(line) + 1
    return ("\n".join([start, *lines, end]) if lines else ""), len(lines)
