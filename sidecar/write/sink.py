"""Is the memory sink usable right now? The answer that gates the MCP memory tools.

The sink is healthy when the agent tier dir exists and a real file can be created and removed in
it (``os.access`` says yes to root even on a read-only mount), its filesystem has free space, the
tier is not past its byte cap, the write thread is not stuck on a write, and the agent index
answers a query. The result is cached for about
a second so a burst of ``tools/list`` calls probes the disk once.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from sidecar.index.tier import Tier
from sidecar.settings import Settings
from sidecar.write.service import WriteService
from sidecar.write.usage import capped_bytes

__all__ = ["INDEX_TIMEOUT_S", "MIN_FREE_BYTES", "HealthCache", "SinkHealth", "probe"]

log = structlog.get_logger("sidecar.write.sink")
MIN_FREE_BYTES = 1024 * 1024
INDEX_TIMEOUT_S = 2.0


@dataclass(frozen=True, slots=True)
class SinkHealth:
    """``healthy``: writes can land; ``searchable``: the agent index answers; ``reasons``: why not."""

    healthy: bool
    reasons: list[str] = field(default_factory=list)
    searchable: bool = True

    @property
    def tools(self) -> list[str]:
        """The MCP tools to offer now: write/read only while healthy, search and the duplicate check
        while the index answers."""
        names = ["memory.write", "memory.read"] if self.healthy else []
        return [*names, "memory.search", "memory.check_duplicate"] if self.searchable else names


class HealthCache:
    """The last probe result, reused for ``ttl`` seconds; concurrent callers share one probe."""

    def __init__(self, ttl: float = 1.0) -> None:
        self.ttl = ttl
        self._lock = asyncio.Lock()
        self._value: SinkHealth | None = None
        self._at = 0.0

    def _fresh(self) -> SinkHealth | None:
        if self._value is not None and time.monotonic() - self._at < self.ttl:
            return self._value
        return None

    async def get(self, settings: Settings, tier: Tier, writes: WriteService | None) -> SinkHealth:
        """The health of the sink ``settings`` name (the agent ``tier``, written by ``writes``)."""
        value = self._fresh()
        if value is not None:
            return value
        async with self._lock:
            value = self._fresh()
            if value is None:
                value = await probe(settings, tier, writes)
                self._log_change(value)
                self._value, self._at = value, time.monotonic()
            return value

    def _log_change(self, value: SinkHealth) -> None:
        before = self._value
        if before is None or before.healthy != value.healthy or before.searchable != value.searchable:
            if value.healthy:
                log.info("sink.healthy")
            else:
                log.warning("sink.unhealthy", reasons=value.reasons, searchable=value.searchable)


async def probe(settings: Settings, tier: Tier, writes: WriteService | None) -> SinkHealth:
    """Probe the disk (in a thread: a dying disk can block) and the index (in its reader pool)."""
    reasons = await asyncio.to_thread(probe_dir, settings.memory_dir, settings.tier_cap_bytes)
    stalled = writes.stalled() if writes is not None else None
    if stalled is not None:
        reasons.append(f"memory writes are stalled: {stalled}")
    index_reason = await _probe_index(tier)
    if index_reason is not None:
        reasons.append(index_reason)
    return SinkHealth(healthy=not reasons, reasons=reasons, searchable=index_reason is None)


def probe_dir(root: Path, cap: int) -> list[str]:
    """Why ``root`` cannot take a memory write now; empty when it can."""
    if not root.is_dir():
        return [f"agent memory dir {root} does not exist"]
    reasons = []
    name = root / f".health-probe.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, b"ok")
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        reasons.append(f"cannot write a file in the agent memory dir: {exc.strerror or exc}")
    try:
        st = os.statvfs(root)
    except OSError as exc:
        reasons.append(f"cannot stat the memory filesystem: {exc.strerror or exc}")
    else:
        free = st.f_bavail * st.f_frsize
        if free < MIN_FREE_BYTES:
            reasons.append(f"memory filesystem is full: {free} bytes free, need {MIN_FREE_BYTES}")
    used = capped_bytes(root)
    if used > cap:
        reasons.append(f"agent tier is past its cap: {used} of {cap} bytes")
    return reasons


async def _probe_index(tier: Tier) -> str | None:
    try:
        async with asyncio.timeout(INDEX_TIMEOUT_S):
            await tier.status()
    except TimeoutError:
        return f"agent index did not answer within {INDEX_TIMEOUT_S:g} s"
    except Exception as exc:  # any failure means "not usable"; the reason names it
        return f"agent index is not usable: {type(exc).__name__}: {exc}"
    return None
