"""The size limits of a transcript ingest: how many turns one call takes and how long a turn may
be. Apart from the ingest rules so a caller that only sends turns (the Claude Code hook) does not
load the classifier's patterns."""

from __future__ import annotations

__all__ = ["MAX_TURNS", "MAX_TURN_CHARS"]

MAX_TURNS = 1000
MAX_TURN_CHARS = 10_000
