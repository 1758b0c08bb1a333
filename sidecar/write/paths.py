"""Path safety for memory writes and reads: only ``.md`` files inside the tier dir.

A client path must be a tier path (``sidecar.index.files.path_problem``: relative, at most 512
bytes and 8 directories deep, no ``..``, empty or hidden components, backslashes, control
characters, names over 255 bytes, and no name that can pass for another: not in NFKC form,
leading or trailing spaces, a leading combining mark or invisible character), so the index
covers whatever can be written. Opening walks the directories one by one with ``O_NOFOLLOW``, so
a symlinked directory cannot lead a write out of the tier, and the final name is never followed
either. Directories a write creates are ``0700`` whatever the umask.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sidecar.errors import BadRequest, Forbidden
from sidecar.index.files import MAX_DIR_DEPTH, MAX_NAME_BYTES, MAX_PATH_BYTES, path_problem

__all__ = ["DIR_MODE", "MAX_DIR_DEPTH", "MAX_NAME_BYTES", "MAX_PATH_BYTES", "check_rel_path", "open_parent_dir"]

DIR_MODE = 0o700


def check_rel_path(path: object) -> str:
    """Validate a client-supplied tier-relative path; return it unchanged."""
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
    return path


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
