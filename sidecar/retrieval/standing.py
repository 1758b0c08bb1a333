"""How current a chunk's text is, by where it sits: a search ranks stale text below current text.

Consolidation keeps everything it rolls up: daily notes move to ``archive/`` (kept readable, out
of the prompt) and a line whose value a newer line changed moves under a ``## Superseded``
heading of its summary. Both stay searchable, so nothing is lost, but a query about a fact should
show its current value first. A hit's score is multiplied by its standing: 1 for live text,
``ARCHIVED`` under ``archive/``, ``SUPERSEDED`` under a ``Superseded`` heading (both when both).
The factor only reorders hits a query earned; it never makes or removes one. ``explain`` shows it.
"""

from __future__ import annotations

__all__ = ["ARCHIVED", "SLACK", "SUPERSEDED", "standing"]

ARCHIVED = 0.5
SUPERSEDED = 0.25
#: Extra hits a search reads beyond its limit, so live text ranked just below it can move up.
SLACK = 10
_SUPERSEDED_HEADING = "Superseded"


def standing(path: str, heading: str) -> float:
    """The factor a hit's score is multiplied by (module docstring)."""
    factor = ARCHIVED if path.startswith("archive/") else 1.0
    if heading.rsplit(" > ", 1)[-1].strip() == _SUPERSEDED_HEADING:
        factor *= SUPERSEDED
    return factor
