"""The files a tier's reindex worker applies itself, recorded while the real apply runs: what a
write handed to the index early (``ReindexQueue.apply_early``) is never among them."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from sidecar.index.sync import ReconcileResult
from sidecar.index.tier import Tier


def applied_by_worker(tier: Tier, monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The files the worker applies itself (``Tier.apply``), recorded; the real apply runs."""
    calls: list[list[str]] = []
    real = tier.apply

    async def apply(rels: Iterable[str]) -> ReconcileResult:
        paths = list(rels)
        calls.append(paths)
        return await real(paths)

    monkeypatch.setattr(tier, "apply", apply)
    return calls
