"""Helpers for the memory block's HTTP tests: ask for a block (its accounting checked), and which
layer each part of it came from."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp.test_utils import TestClient

__all__ = ["Start", "block", "layers_of"]

Start = Callable[..., Awaitable[TestClient[Any, Any]]]


async def block(client: TestClient[Any, Any], **body: Any) -> dict[str, Any]:
    resp = await client.post("/memory/block", json=body)
    assert resp.status == 200, await resp.text()
    out: dict[str, Any] = await resp.json()
    assert out["used"] == len(out["text"]) <= out["budget"]
    return out


def layers_of(out: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(part, label) -> layer."""
    return {(p["part"], p["label"]): p["layer"] for p in out["layers"]}
