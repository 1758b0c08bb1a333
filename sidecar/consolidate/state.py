"""A consolidation in progress, recorded in the tier so a run killed at any point is finished by the
next one: ``.consolidate/state.json`` holds the plan (each period and its daily notes) from before
the first file is touched until the last step is done. The directory is hidden, so the file is no
memory: neither indexed, watched nor shown in the prompt. It is written durably like every file.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import structlog

from sidecar.write.durable import durable_replace, read_file
from sidecar.write.paths import open_parent_dir

__all__ = ["STATE_REL", "Plan", "clear_plan", "load_plan", "rename_durably", "save_plan", "unlink_durably"]

STATE_REL = ".consolidate/state.json"
_VERSION = 1
Plan = dict[str, list[str]]  # period -> daily notes (``daily/YYYY-MM-DD.md``), sorted

log = structlog.get_logger("sidecar.consolidate")


def load_plan(root: Path) -> Plan | None:
    """The plan of a run that did not finish, or None; a state file that cannot be read is logged
    and ignored (the daily notes still in ``daily/`` are planned again). A temp file a killed run
    left beside it is removed (the sidecar's own sweep does not look in hidden directories)."""
    for leftover in (root / STATE_REL).parent.glob(".state.json.*.tmp"):
        leftover.unlink(missing_ok=True)
    data = read_file(root, STATE_REL)
    if data is None:
        return None
    try:
        state = json.loads(data)
        periods = state["periods"]
        if state.get("version") != _VERSION or not isinstance(periods, dict):
            raise ValueError("unknown state version")
        return {str(p): sorted(str(s) for s in sources) for p, sources in periods.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("consolidate.state_unreadable", path=STATE_REL, error=str(exc))
        return None


def save_plan(root: Path, plan: Plan) -> None:
    old = read_file(root, STATE_REL)
    data = json.dumps({"version": _VERSION, "periods": plan}, indent=1, sort_keys=True).encode()
    if data != old:
        durable_replace(root, STATE_REL, data, old)


def clear_plan(root: Path) -> None:
    """The run is done: its plan goes, and the (then empty) directory notes were claimed in."""
    unlink_durably(root, STATE_REL)
    with contextlib.suppress(OSError):  # not there, or a claim left for a later run
        (root / ".consolidate" / "claimed").rmdir()


def rename_durably(root: Path, rel: str, to: str) -> bool:
    """Move ``root/rel`` to ``root/to`` in one rename (no link followed) and fsync both directories;
    False when ``rel`` was not there."""
    with open_parent_dir(root, to, create=True) as to_fd:
        try:
            with open_parent_dir(root, rel, create=False) as from_fd:
                os.rename(rel.rsplit("/", 1)[-1], to.rsplit("/", 1)[-1], src_dir_fd=from_fd, dst_dir_fd=to_fd)
                os.fsync(from_fd)
        except FileNotFoundError:
            return False
        os.fsync(to_fd)
    return True


def unlink_durably(root: Path, rel: str) -> bool:
    """Remove ``root/rel`` and fsync its directory; False when it was not there."""
    try:
        with open_parent_dir(root, rel, create=False) as dir_fd:
            try:
                os.unlink(rel.rsplit("/", 1)[-1], dir_fd=dir_fd)
            except FileNotFoundError:
                return False
            os.fsync(dir_fd)
            return True
    except FileNotFoundError:
        return False
