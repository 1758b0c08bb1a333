"""When the scheduled consolidation runs next: the last finished run is kept in the tier.

A run (the route's, the CLI's or the schedule's) records when it finished in
``.consolidate/last_run.json``. A sidecar that starts reads it: a run overdue (or never made) starts
``START_GRACE_S`` after start-up, else when the interval since the last run is up. A sidecar
restarted more often than its interval still consolidates.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from sidecar.write.durable import durable_replace, read_file

__all__ = ["LAST_RUN_REL", "START_GRACE_S", "first_delay", "last_run", "record_run"]

LAST_RUN_REL = ".consolidate/last_run.json"
START_GRACE_S = 60.0  # a start-up settles (index, watcher) before an overdue run


def last_run(root: Path) -> datetime | None:
    """When the last consolidation of the tier at ``root`` finished; None when never, or unreadable."""
    data = read_file(root, LAST_RUN_REL)
    if data is None:
        return None
    try:
        when = datetime.fromisoformat(json.loads(data)["finished_at"])
    except (ValueError, KeyError, TypeError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def record_run(root: Path, when: datetime) -> None:
    """Keep ``when`` as the tier's last finished consolidation (durably)."""
    old = read_file(root, LAST_RUN_REL)
    durable_replace(root, LAST_RUN_REL, json.dumps({"finished_at": when.isoformat()}).encode(), old)


def first_delay(last: datetime | None, now: datetime, interval_s: float, grace_s: float = START_GRACE_S) -> float:
    """Seconds from start-up to the first scheduled run."""
    if last is None:
        return grace_s
    due = (last - now).total_seconds() + interval_s
    return max(due, grace_s)
