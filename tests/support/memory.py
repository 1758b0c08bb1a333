"""Shared test material: the demo memory files, a file writer, a test sidecar's settings, the
client factory type."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from sidecar.retrieval.flags import CLEAN_FILES
from sidecar.settings import Settings, load_settings
from tests.support.waiting import HANG_GUARD_S

__all__ = [
    "AGENT_MD",
    "DAILY_MD",
    "DIALOGUE_MD",
    "OWN_STATE",
    "TOOLS_MD",
    "ClientFactory",
    "memory_tree",
    "settings_in",
    "write",
]

#: The sidecar's own files beside the memory files, which a running sidecar may write at any time:
#: its databases (with their journals) and the files its injection scanner found clean.
OWN_STATE = ("index.sqlite", "journal.sqlite", "kg.sqlite", CLEAN_FILES)


def memory_tree(root: Path) -> list[str]:
    """Every path under ``root`` (relative, sorted) but the sidecar's own files (``OWN_STATE``)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if not p.name.startswith(OWN_STATE))


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


def settings_in(tmp: Path, **overrides: Any) -> Settings:
    """The settings of a test's sidecar (``make_settings``): its tiers ``memory`` and ``crew`` in
    ``tmp``, no embedder, no watcher, no periodic reindex and no scheduled consolidation (on a busy
    host a test can outlast the schedule's first run, a minute after start on a tier never
    consolidated, which then moves the test's notes under ``archive/``), changed by keyword
    overrides."""
    values: dict[str, Any] = {
        "memory_dir": str(tmp / "memory"),
        "crew_dir": str(tmp / "crew"),
        "embedder": "none",
        "watch": "false",
        "reconcile_interval": "0",
        "crew_reindex_interval": "0",
        "consolidate_interval": "0",
        # A search's wait for a write (``after_seq``) is a hang guard: a busy host can take over
        # the shipped 1 s to index a write without anything being wrong. A test of the limit
        # names its own.
        "after_seq_timeout": str(HANG_GUARD_S),
    }
    values.update({k: str(v) for k, v in overrides.items()})
    return load_settings(values, environ={})


# Sections a dense neighbour could lend to, and a dialogue whose turns lend to each other.
TOOLS_MD = """# Tools

## Grafana
Dashboards live in Grafana; the on-call board is pinned.

## Styling
Tailwind only, never inline styles.

## Database
Postgres 16 is the new baseline.

## Queue
The export worker reads from the jobs queue.
"""

DIALOGUE_MD = """# 2026-05-10 (Sunday 10 May 2026)

## Session 1, 7:02 pm

### Ana
Did you finally go on that hiking trip you planned?

### Ben
Yes, last Saturday, up Mount Tamalpais with my sister.

### Ana
Sounds lovely. I spent the weekend repainting the kitchen.

### Ben
What colour did you pick in the end?
"""
