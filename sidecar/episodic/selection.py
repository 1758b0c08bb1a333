"""Which journal entries get embedded.

Indexing every event drowns the embedding space in low-signal chatter, so only escalations,
summaries, terminal mission trouble, denied calls, eval regressions and operator-tagged entries
are embedded. ``refs.episodic = true`` forces an entry in and is checked before the filter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ALWAYS_EMBEDDED", "EMBEDDABLE_TYPES", "WARN_OR_ERROR_EMBEDDED", "should_embed", "wants_embedding"]

ALWAYS_EMBEDDED = frozenset(
    {
        "peer.escalation",
        "summary.generated",
        "memory.consolidated",
        "approval.denied",
        "eval.regression_detected",
    }
)
WARN_OR_ERROR_EMBEDDED = frozenset({"keeper.decision", "mission.status_change"})
#: The coarse list of candidate types. ``peer.conversation`` is listed but ``should_embed`` always
#: refuses it: plain Q&A is too high-volume; an escalation-aware caller forces it via the override.
EMBEDDABLE_TYPES = ALWAYS_EMBEDDED | WARN_OR_ERROR_EMBEDDED | {"peer.conversation"}


def should_embed(entry_type: str, severity: str) -> bool:
    """The type/severity filter: every ``ALWAYS_EMBEDDED`` type; a ``WARN_OR_ERROR_EMBEDDED`` type at
    severity warn or error; nothing else."""
    if entry_type in ALWAYS_EMBEDDED:
        return True
    if entry_type in WARN_OR_ERROR_EMBEDDED:
        return severity in ("warn", "error")
    return False


def wants_embedding(entry_type: str, severity: str, refs: Mapping[str, Any]) -> bool:
    """The override first (``refs.episodic is True``), then :func:`should_embed`."""
    if refs.get("episodic") is True:
        return True
    return should_embed(entry_type, severity)
