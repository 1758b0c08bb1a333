"""Shared test material: the demo memory files, a file writer, the client factory type."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

__all__ = ["AGENT_MD", "DAILY_MD", "ClientFactory", "write"]

AGENT_MD = """# Identity
I am researcher, a code review agent.

## Preferences
Use PostgreSQL 16 for every new database.
Dark mode in every screenshot.

## Learned Facts
The sqlite driver name is sqlite, not sqlite3.
Deploys go through make release after a green smoke test.
"""

DAILY_MD = """# 2026-05-14

## Incident
The worker ran out of memory while exporting invoices; suggested a server-side cursor.

## Review
Asked for CONCURRENTLY on the new orders index so postgres does not lock the table.
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


ClientFactory = Callable[..., Awaitable[TestClient[Any, Any]]]
