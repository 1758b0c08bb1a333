"""Path safety for memory writes and reads: only ``.md`` files inside the tier dir.

A client path must be a tier path (``sidecar.index.files.path_problem``: relative, at most 512
bytes and 8 directories deep, no ``..``, empty or hidden components, backslashes, control
characters, names over 255 bytes, and no name that can pass for another: not in NFKC form,
leading or trailing spaces, a leading combining mark or invisible character), so the index
covers whatever can be written. Opening walks the directories one by one with ``O_NOFOLLOW``, so
a symlinked directory cannot lead a write out of the tier, and the final name is never followed
either. Directories a write creates are ``0700`` whatever the umask.

A write to ``daily/summaries/`` under a weekly summary's name (``YYYY-Www.md``) must name an ISO
week that exists (``2026-W03``, not ``2026-W99`` or ``2026-W7``): consolidation reads and writes
those files by their week, so a name that is no week is refused before it is written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

from sidecar.errors import BadRequest, Forbidden
from sidecar.index.files import MAX_DIR_DEPTH, MAX_NAME_BYTES, MAX_PATH_BYTES, path_problem

__all__ = ["DIR_MODE", "MAX_DIR_DEPTH", "MAX_NAME_BYTES", "MAX_PATH_BYTES", "check_rel_path", "open_parent_dir"]

DIR_MODE = 0o700
SUMMARY_DIR = "daily/summaries"
#: A name that passes for a weekly summary's: a year, "W" and a week number (of any width).
_WEEK_LIKE = re.compile(r"^(\d{4})-[Ww](\d+)\.md$", re.ASCII)


def check_rel_path(path: object, *, writing: bool = False) -> str:
    """Validate a client-supplied tier-relative path; return it unchanged. ``writing``: also
    refuse a weekly summary's name that is no ISO week (module docstring)."""
    if not isinstance(path, str):
        raise BadRequest("path must be a string", code="invalid_path")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest(f"invalid path {path[:80]!r}: not valid UTF-8", code="invalid_path") from None
    problem = path_problem(path)
    if problem is not None:
        shown = path if len(path) <= 120 else path[:120] + "..."
        raise BadRequest(f"invalid path {shown!r}: {problem}", code="invalid_path")
    if writing and (problem := _week_problem(path)) is not None:
        raise BadRequest(f"invalid path {path!r}: {problem}", code="invalid_path")
    return path


def _week_problem(path: str) -> str | None:
    """Why a summary-like name under ``daily/summaries/`` is no ISO week, or None."""
    directory, _, name = path.rpartition("/")
    match = _WEEK_LIKE.match(name)
    if directory != SUMMARY_DIR or match is None:
        return None
    year, week = int(match[1]), match[2]
    if name[5] != "W" or len(week) != 2:
        return f"a weekly summary is named YYYY-Www.md (two-digit week), not {name!r}"
    try:
        date.fromisocalendar(year, int(week), 1)
    except ValueError:
        return f"{year} has no ISO week {week}"
    return None


def _make_dir(name: str, dir_fd: int) -> None:
    """Create directory ``name`` with mode 0700 exactly (mkdir's mode is cut by the umask)."""
    try:
        os.mkdir(name, DIR_MODE, dir_fd=dir_fd)
    except FileExistsError:
        return
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.fchmod(fd, DIR_MODE)
    finally:
        os.close(fd)


@contextmanager
def open_parent_dir(root: Path, rel: str, *, create: bool) -> Iterator[int]:
    """A directory fd for the parent of ``rel``, reached without following any symlink."""
    parts = rel.split("/")[:-1]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in parts:
            if create:
                _make_dir(part, fd)
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                raise
            except OSError as exc:
                raise Forbidden(f"path {rel!r} goes through a link or a non-directory", code="unsafe_path") from exc
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)
