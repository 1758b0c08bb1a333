"""A run's time budget for model summaries: a hung or slow model never holds a run for long.

Each model call already has its own timeout; a run summarises many sections, so a model that hangs
would cost that timeout per section. ``Budgeted`` wraps a summariser: every call gets at most the
time left of the run's budget (and at most ``call_s``), and once the budget is spent, or after
``MAX_FAILURES`` calls in a row that found no usable answer, the rest of the run is summarised
extractively without asking, each such summary saying why (the report lists them).

The budget is the time the model's calls took together, not the run's age: the run's own work
between calls (reading, clustering, extractive summaries, on a large tier minutes) spends none of
it. A call is charged what it took, and a call that ran out its time exactly the time it was given:
where the event loop wakes late to end it (a busy host), the lateness is the host's, not the
model's. So which calls are asked, and why each summary fell back, follows from the model's
answers and the budgets alone, however fast the host runs the rest.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from sidecar.consolidate.summarise import SourceItem, Summariser, Summary, extractive_summary

__all__ = ["MAX_FAILURES", "Budgeted"]

MAX_FAILURES = 2


class Budgeted:
    """``inner`` within ``run_s`` seconds of model calls for the whole run and ``call_s`` for one."""

    def __init__(self, inner: Summariser, *, run_s: float, call_s: float) -> None:
        self._inner = inner
        self._run_s = run_s
        self._spent = 0.0
        self._call_s = call_s
        self._failures = 0

    async def summarise(self, items: Sequence[SourceItem], budget: int) -> Summary:
        left = min(self._run_s - self._spent, self._call_s)
        if left <= 0:
            return await extractive_summary(items, budget, "run_budget: the run's time for model summaries is spent")
        if self._failures >= MAX_FAILURES:
            reason = f"model_unusable: {MAX_FAILURES} calls in a row gave no usable answer"
            return await extractive_summary(items, budget, reason)
        started = time.monotonic()
        answered: Summary | None = None
        try:
            async with asyncio.timeout(left):
                answered = await self._inner.summarise(items, budget)
        except TimeoutError:
            pass
        self._spent += min(time.monotonic() - started, left)
        if answered is None:
            self._failures += 1
            return await extractive_summary(items, budget, f"timeout: no answer within {left:.1f}s")
        self._failures = self._failures + 1 if answered.fallback_reason else 0
        return answered

    async def aclose(self) -> None:
        await self._inner.aclose()
