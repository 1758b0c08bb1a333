"""How a remote embedding call fails, and when to try it again.

``post_json`` is the one place an HTTP embedder's call is classified: connection errors, timeouts,
408, 429 and 5xx become ``EmbedderUnavailable`` (with the server's Retry-After), anything else
that is wrong becomes ``EmbedderError``; ``unit_rows`` does the same for the vectors in an answer.
``Backoff`` paces the background embedding batcher after an ``EmbedderUnavailable``.
"""

from __future__ import annotations

import email.utils
import math
import random
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sidecar.retrieval.embed.base import EmbedderError, EmbedderUnavailable, Vectors

if TYPE_CHECKING:
    import httpx

__all__ = ["Backoff", "parse_retry_after", "post_json", "unit_rows"]

_RETRYABLE_STATUS = frozenset({408, 429})
_DETAIL_CHARS = 200


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date); None if absent or bad."""
    if not value or not (value := value.strip()):
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


async def post_json(
    client: httpx.AsyncClient,
    url: str,
    payload: Mapping[str, Any],
    *,
    timeouts: httpx.Timeout,
    what: str,
    headers: Mapping[str, str] | None = None,
) -> Any:
    """POST ``payload`` as JSON and return the decoded answer, classifying every failure."""
    import httpx  # only the HTTP embedders get here: a solo sidecar never loads httpx

    try:
        response = await client.post(url, json=payload, headers=headers, timeout=timeouts)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise EmbedderError(f"{what}: unusable URL {url}: {exc}") from exc
    except httpx.TimeoutException as exc:
        raise EmbedderUnavailable(f"{what}: {type(exc).__name__} talking to {url}") from exc
    except httpx.TransportError as exc:
        raise EmbedderUnavailable(f"{what}: cannot reach {url}: {type(exc).__name__}: {exc}") from exc
    except httpx.RequestError as exc:
        raise EmbedderError(f"{what}: bad answer from {url}: {type(exc).__name__}: {exc}") from exc
    status = response.status_code
    if status in _RETRYABLE_STATUS or status >= 500:
        retry_after = parse_retry_after(response.headers.get("retry-after"))
        raise EmbedderUnavailable(f"{what}: HTTP {status} from {url}{_detail(response)}", retry_after)
    if not 200 <= status < 300:
        raise EmbedderError(f"{what}: HTTP {status} from {url}{_detail(response)}")
    try:
        return response.json()
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are both ValueErrors
        raise EmbedderError(f"{what}: answer from {url} is not JSON{_detail(response)}") from exc


def unit_rows(rows: object, n: int, dim: int | None, what: str) -> Vectors:
    """Check an answer's vectors (``n`` numeric rows of one width, ``dim`` if known); L2-normalise."""
    import numpy as np

    try:
        array = np.asarray(rows)
    except (ValueError, TypeError) as exc:
        raise EmbedderError(f"{what}: embeddings are not a numeric matrix") from exc
    if array.ndim != 2 or array.dtype.kind not in "fiu" or array.shape[1] == 0:
        raise EmbedderError(f"{what}: embeddings are not a numeric matrix (shape {array.shape})")
    if array.shape[0] != n:
        raise EmbedderError(f"{what}: asked for {n} embeddings, got {array.shape[0]}")
    if dim is not None and array.shape[1] != dim:
        raise EmbedderError(f"{what}: expected width {dim}, got {array.shape[1]} (did the model change?)")
    vectors = array.astype(np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise EmbedderError(f"{what}: an embedding is zero or not finite")
    unit: Vectors = (vectors / norms).astype(np.float32)
    return unit


class Backoff:
    """Exponential backoff with jitter that honours a server's Retry-After (up to ``max_delay``).

    ``next_delay`` records a failure and returns how long to wait; ``ready`` says whether that wait
    is over; ``reset`` forgets the failures after a success.
    """

    def __init__(
        self,
        *,
        base: float = 1.0,
        factor: float = 2.0,
        max_delay: float = 300.0,
        jitter: float = 0.5,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if base <= 0 or factor < 1 or max_delay < base or not 0 <= jitter <= 1:
            raise ValueError("Backoff: base > 0, factor >= 1, max_delay >= base, 0 <= jitter <= 1")
        self._base, self._factor, self._max, self._jitter = base, factor, max_delay, jitter
        self._rng = rng or random.Random()
        self._clock = clock
        self._failures = 0
        self._not_before = -math.inf

    @property
    def failures(self) -> int:
        """Failures since the last ``reset``."""
        return self._failures

    @property
    def not_before(self) -> float:
        """Clock time before which the next attempt should not run."""
        return self._not_before

    def next_delay(self, retry_after: float | None = None, now: float | None = None) -> float:
        """Record a failure; return the seconds to wait (jittered, never less than Retry-After)."""
        raw = min(self._max, self._base * self._factor ** min(self._failures, 64))
        self._failures += 1
        delay = raw * (1.0 - self._jitter * self._rng.random())
        if retry_after is not None and math.isfinite(retry_after):
            delay = max(delay, min(max(retry_after, 0.0), self._max))
        self._not_before = (self._clock() if now is None else now) + delay
        return delay

    def reset(self) -> None:
        """A call succeeded: the next failure starts again from ``base``."""
        self._failures = 0
        self._not_before = -math.inf

    def ready(self, now: float | None = None) -> bool:
        """True once the wait chosen by the last ``next_delay`` has passed."""
        return (self._clock() if now is None else now) >= self._not_before


def _detail(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return f": {text[:_DETAIL_CHARS]}" if text else ""
