"""In-session memory nudges: short advisory lines for the next system prompt. Each kind fires at
most once per session; the orchestrator strips them again before it records the LLM's response
payload.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime, timedelta

from sidecar.clock import utcnow
from sidecar.episodic.store import CostTotals, JournalStore

__all__ = ["NUDGE_THRESHOLD", "RESET_TYPES", "Nudger", "cost_line", "update_line"]

#: Roughly when an agent's working context starts evicting its own short-term memory.
NUDGE_THRESHOLD = 30
#: Entries that reset the count: a memory write, or the summary the nudge asks for.
RESET_TYPES = ("memory.updated", "summary.generated")
_MAX_SESSIONS = 4096


def update_line(count: int) -> str:
    return (
        f"You have {count} new journal entries since your last memory update. Consider summarising "
        "what you’ve learned with summary.generated so future sessions can recall it."
    )


def cost_line(totals: CostTotals) -> str:
    return (
        f"Last 24h: {totals.calls} calls, {_tokens(totals.tokens)} tokens, ${totals.cost_usd:.2f}. "
        "Watch for runaway loops — the consolidator will summarise this batch on the next tick."
    )


class Nudger:
    """Remembers, per session id, which nudges were already given (the newest 4,096 sessions)."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store
        self._fired: OrderedDict[str, set[str]] = OrderedDict()

    async def nudges(
        self,
        workspace_id: str,
        agent_id: str,
        session_id: str,
        now: datetime | None = None,
        cost_threshold: float = 1.0,
    ) -> list[str]:
        """The lines due now for this agent and session, each kind only once per session.

        ``update``: 30 or more of the agent's entries since its last ``memory.updated`` or
        ``summary.generated``. ``cost``: the agent's entries of the last 24 h carrying numeric
        ``cost_usd`` / ``tokens`` in their payload sum to more than ``cost_threshold`` dollars.
        """
        now = now or utcnow()
        fired = self._session(session_id)
        lines: list[str] = []
        if "update" not in fired:
            count = await self._store.entries_since_update(workspace_id, agent_id, RESET_TYPES)
            if count >= NUDGE_THRESHOLD:
                fired.add("update")
                lines.append(update_line(count))
        if "cost" not in fired:
            totals = await self._store.cost_since(workspace_id, agent_id, now - timedelta(hours=24))
            if totals.cost_usd > cost_threshold:
                fired.add("cost")
                lines.append(cost_line(totals))
        return lines

    def _session(self, session_id: str) -> set[str]:
        fired = self._fired.pop(session_id, set())
        self._fired[session_id] = fired
        while len(self._fired) > _MAX_SESSIONS:
            self._fired.popitem(last=False)
        return fired


def _tokens(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)
