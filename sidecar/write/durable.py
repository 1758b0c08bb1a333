"""Durable file replacement: temp file in the same directory, write, fsync, rename, fsync dir.

Once ``durable_replace`` returns, the new bytes survive a crash or power loss. If any step fails
it raises ``WriteFailed`` with a stable code, the temp file is gone, and the old content is intact
(if the very last step, the directory fsync, fails, the old bytes are written back). A failed
fsync is never retried: after an fsync error the kernel may have dropped the dirty pages, so a
second fsync could "succeed" on data that never reached the disk.

Memory files are ``0600`` whatever the umask: the temp file is given that mode before its
first byte, and the rename keeps it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from pathlib import Path

import structlog

from sidecar.errors import CapExceeded, Forbidden, SidecarError, WriteFailed
from sidecar.index.files import MAX_DIR_DEPTH, resolve_tier_file
from sidecar.write.paths import open_parent_dir

__all__ = [
    "FILE_MODE",
    "TEMP_SUFFIX",
    "StatKey",
    "durable_replace",
    "read_file",
    "stat_key",
    "sweep_temp_files",
    "temp_name",
]

log = structlog.get_logger("sidecar.write.durable")
TEMP_SUFFIX = ".tmp"
FILE_MODE = 0o600
_TEMP_RE = re.compile(r"^\..+\.md\.[0-9a-f]{8}\.tmp$")


def temp_name(name: str) -> str:
    """``.AGENT.md.3f2a9c1e.tmp``: hidden and not ``.md``, so neither indexed nor watched."""
    return f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _fail(step: str, exc: OSError) -> WriteFailed:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(f"no space left on the device while {step}; nothing was written", code="no_space")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return WriteFailed(f"memory dir is not writable ({exc.strerror}) while {step}", code="not_writable")
    return WriteFailed(f"{step} failed: {exc.strerror or exc}; the old content is intact", code=f"{step}_failed")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


StatKey = tuple[int, int, int, int]  # (inode, size, mtime_ns, ctime_ns)


def stat_key(st: os.stat_result) -> StatKey:
    """What tells one state of a file from another: every durable write makes a new inode, and an
    edit in place changes the size or the times."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def durable_replace(root: Path, rel: str, data: bytes, old: bytes | None) -> StatKey | None:
    """Atomically and durably make ``root/rel`` hold ``data`` (``old`` is its current content);
    the file's :func:`stat_key` as the write left it (None if it cannot be read back, which leaves
    the write done)."""
    try:
        with open_parent_dir(root, rel, create=True) as dir_fd:
            name = rel.rsplit("/", 1)[-1]
            _replace_in(dir_fd, name, data)
            try:
                os.fsync(dir_fd)
            except OSError as exc:
                _restore(root, rel, old)
                raise _fail("dir_fsync", exc) from exc
            try:
                return stat_key(os.stat(name, dir_fd=dir_fd, follow_symlinks=False))
            except OSError:
                return None
    except OSError as exc:  # every step inside raises WriteFailed: this is making the directories
        raise _fail("mkdir", exc) from exc


def _replace_in(dir_fd: int, name: str, data: bytes) -> None:
    """Temp file, write, fsync, rename over ``name``: all in the directory ``dir_fd``."""
    tmp = temp_name(name)
    step = "create"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE, dir_fd=dir_fd)
        try:
            step = "chmod"
            os.fchmod(fd, FILE_MODE)  # the umask may have taken bits away; this sets them exactly
            step = "write"
            _write_all(fd, data)
            step = "fsync"
            os.fsync(fd)
        finally:
            os.close(fd)
        step = "rename"
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        if step != "create":
            _unlink_quietly(tmp, dir_fd)
        raise _fail(step, exc) from exc


def _restore(root: Path, rel: str, old: bytes | None) -> None:
    """Best effort after a failed directory fsync: put the old bytes (or absence) back."""
    try:
        if old is None:
            (root / rel).unlink(missing_ok=True)
        else:
            durable_replace(root, rel, old, None)
    except (OSError, WriteFailed, CapExceeded):
        log.error("write.restore_failed", path=rel)


def _unlink_quietly(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError:
        log.error("write.temp_left_behind", temp=name)


def read_file(root: Path, rel: str, *, follow_links: bool = False) -> bytes | None:
    """Current bytes of a tier file; None if it does not exist. Anything but a regular file is a
    403 ``unsafe_path``: it is opened without blocking and checked on the descriptor, so a FIFO
    in a file's place cannot hang the caller. Directories are walked without following links;
    the file itself is followed only with ``follow_links`` (reads: a link to a tier file inside
    the tier, as the index takes it; writes never go through a link)."""
    try:
        return _read_no_follow(root, rel)
    except Forbidden:
        if not follow_links:
            raise
        target = resolve_tier_file(root, rel)
        if target is None or target == rel:
            raise
        return _read_no_follow(root, target)


def _read_no_follow(root: Path, rel: str) -> bytes | None:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        with open_parent_dir(root, rel, create=False) as dir_fd:
            fd = os.open(rel.rsplit("/", 1)[-1], flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
            raise Forbidden(f"{rel!r} is a link or not a regular file", code="unsafe_path") from exc
        raise SidecarError(f"cannot read {rel!r}: {exc.strerror}", code="read_failed") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a directory with EISDIR
        os.close(fd)
        raise Forbidden(f"{rel!r} is not a regular file", code="unsafe_path")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def sweep_temp_files(root: Path) -> list[str]:
    """Delete temp files a crash left behind (``.*.tmp`` beside memory files); return them. Only
    where a write can put one: visible directories at most ``MAX_DIR_DEPTH`` deep (so a tree
    a shell made thousands of levels deep costs nothing here)."""
    removed: list[str] = []
    if not root.is_dir():
        return removed
    pending = [(root, 0)]
    while pending:
        directory, depth = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue  # the index's scan names what it cannot list
        for entry in entries:
            if entry.name.startswith(".") and _TEMP_RE.match(entry.name) and not entry.is_dir(follow_symlinks=False):
                Path(entry.path).unlink(missing_ok=True)
                removed.append(Path(entry.path).relative_to(root).as_posix())
            elif not entry.name.startswith(".") and depth < MAX_DIR_DEPTH and entry.is_dir(follow_symlinks=False):
                pending.append((Path(entry.path), depth + 1))
    return removed
