"""Whether the embedder may be called now, shared by the background batcher and searches' query
vectors: one backoff for both, so a failing embedder is not hammered from two sides."""

from __future__ import annotations

import math
import time

import structlog

from sidecar.retrieval.embed.base import Embedder, EmbedderUnavailable
from sidecar.retrieval.embed.retry import Backoff

__all__ = ["EmbedderHealth"]

log = structlog.get_logger("sidecar.embed")


class EmbedderHealth:
    """Whether the embedder may be called now; shared by the batcher and searches' query vectors.

    ``loading``: configured but not yet answered (a remote model may still be loading);
    ``ready``: the last call answered; ``degraded``: the last call failed and retries back off.
    """

    def __init__(self, embedder: Embedder | None, backoff: Backoff | None = None, *, confirmed: bool = False) -> None:
        self.embedder = embedder
        self.backoff = backoff or Backoff()
        self.last_error: str | None = None
        self._answered = confirmed

    @property
    def state(self) -> str:
        if self.embedder is None:
            return "none"
        if self.backoff.failures:
            return "degraded"
        return "ready" if self._answered else "loading"

    def usable(self) -> bool:
        """True unless there is no embedder or a backoff wait after a failure is still running."""
        return self.embedder is not None and self.backoff.ready()

    def retry_in(self) -> float:
        """Seconds until the next attempt is allowed (0 when it is)."""
        wait = self.backoff.not_before - time.monotonic()
        return round(wait, 3) if math.isfinite(wait) and wait > 0 else 0.0

    def succeeded(self) -> None:
        if self.backoff.failures:
            log.info("embedder.recovered", after_failures=self.backoff.failures)
        self._answered = True
        self.last_error = None
        self.backoff.reset()

    def failed(self, exc: Exception) -> float:
        """Record a failed call; return the seconds to wait (never less than a Retry-After)."""
        retry_after = exc.retry_after if isinstance(exc, EmbedderUnavailable) else None
        delay = self.backoff.next_delay(retry_after)
        self.last_error = f"{type(exc).__name__}: {exc}"[:300]
        log.warning("embedder.degraded", error=self.last_error, retry_in_s=round(delay, 3))
        return delay
