"""How far the embedding of a backlog has got: chunks done of the total, the recent rate, an ETA.

The background batcher keeps one per tier while that tier has a backlog (GET /memory/status shows
it); ``memory-sidecar reindex --embed`` draws its progress bar from one.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

__all__ = ["RATE_WINDOW_S", "Progress"]

#: The rate is measured over about this many recent seconds: long enough to smooth one batch's
#: jitter, short enough to follow a machine that got busier.
RATE_WINDOW_S = 30.0


class Progress:
    """Chunks embedded since a backlog was found, and how fast they have been going lately."""

    def __init__(self, *, window_s: float = RATE_WINDOW_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.window_s = window_s
        self._clock = clock
        self.started = clock()
        self.done = 0
        self._marks: deque[tuple[float, int]] = deque([(self.started, 0)])  # (when, done then)

    def add(self, chunks: int) -> None:
        """``chunks`` more were embedded and stored just now."""
        now = self._clock()
        self.done += chunks
        self._marks.append((now, self.done))
        # Keep the last mark before the window opened: the rate spans the whole window.
        while len(self._marks) > 2 and self._marks[1][0] <= now - self.window_s:
            self._marks.popleft()

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self.started

    def rate(self) -> float | None:
        """Chunks per second over the last window, up to now (it falls while nothing is stored);
        None before the first chunk."""
        if self.done == 0:
            return None
        since, done_then = self._marks[0]
        span = self._clock() - since
        return (self.done - done_then) / span if span > 0 else None

    def eta_s(self, remaining: int) -> float | None:
        """Seconds until ``remaining`` more are done at the recent rate; None until there is one."""
        if remaining <= 0:
            return 0.0
        rate = self.rate()
        return remaining / rate if rate else None
