"""Idempotent writes: a write sent with an ``Idempotency-Key`` lands once, however often it is sent.

A client that lost the answer to a write (its connection dropped, it timed out) cannot tell
whether the write landed; retrying an ``append`` could then add the same entry twice. With a key,
the retry gets the first write's answer (the same ``seq``) and writes nothing; a retry that
arrives while the first is still under way waits for it. A key names one write: the same key
with another tier, path, mode or content is a 409 ``idempotency_key_reused``. A write that
failed leaves no trace, so its retry is a new attempt.

Keys live in memory, the last ``KEEP`` of them: a retry after the sidecar restarted is a new
write. Everything here runs on the event loop.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sidecar.contract import WriteAnswer, WriteRequest
from sidecar.errors import BadRequest, Conflict

__all__ = ["KEEP", "MAX_KEY_CHARS", "IdempotencyKeys", "check_key"]

KEEP = 1024
MAX_KEY_CHARS = 255


def check_key(key: str) -> str:
    """A client's key: 1 to 255 printable ASCII characters (a UUID is typical)."""
    if not 0 < len(key) <= MAX_KEY_CHARS or not key.isascii() or not key.isprintable():
        raise BadRequest(
            f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} printable ASCII characters", code="invalid_idempotency_key"
        )
    return key


@dataclass(frozen=True, slots=True)
class _Write:
    what: tuple[str, str, str, str]  # tier, path, mode, sha256 of the content
    # The first write's answer once it landed; None if it failed (a retry then writes again).
    done: asyncio.Future[WriteAnswer | None]


def _what(req: WriteRequest) -> tuple[str, str, str, str]:
    return req.tier, req.path, req.mode, hashlib.sha256(req.content.encode("utf-8")).hexdigest()


class IdempotencyKeys:
    """The writes of the last ``keep`` keys, by key."""

    def __init__(self, keep: int = KEEP) -> None:
        self.keep = keep
        self._writes: OrderedDict[str, _Write] = OrderedDict()

    async def run(
        self, key: str, req: WriteRequest, write: Callable[[WriteRequest], Awaitable[WriteAnswer]]
    ) -> tuple[WriteAnswer, bool]:
        """``write(req)`` once per key: (its answer, whether this call replayed an earlier one)."""
        what = _what(req)
        while (known := self._writes.get(key)) is not None:
            if known.what != what:
                raise Conflict(
                    "this Idempotency-Key was used for another write (tier, path, mode or content differ); "
                    "nothing was written",
                    code="idempotency_key_reused",
                )
            self._writes.move_to_end(key)
            answer = await asyncio.shield(known.done)
            if answer is not None:
                return answer, True
            # The first attempt failed and left no trace: this one writes.
        done: asyncio.Future[WriteAnswer | None] = asyncio.get_running_loop().create_future()
        self._writes[key] = _Write(what, done)
        while len(self._writes) > self.keep:
            self._writes.popitem(last=False)
        try:
            answer = await write(req)
        except BaseException:
            if (entry := self._writes.get(key)) is not None and entry.done is done:
                del self._writes[key]
            done.set_result(None)
            raise
        done.set_result(answer)
        return answer, False
