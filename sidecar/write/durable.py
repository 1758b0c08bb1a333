"""Durable file replacement: temp file in the same directory, write, fsync, rename, fsync dir.

Once ``durable_replace`` returns, the new bytes survive a crash or power loss. If any step fails
it raises ``WriteFailed`` with a stable code, the temp file is gone, and the old content is intact
(if the very last step, the directory fsync, fails, the old bytes are written back). A failed
fsync is never retried: after an fsync error the kernel may have dropped the dirty pages, so a
second fsync could "succeed" on data that never reached the disk.
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
from sidecar.write.paths import open_parent_dir

__all__ = ["TEMP_SUFFIX", "durable_replace", "read_file", "sweep_temp_files", "temp_name"]

log = structlog.get_logger("sidecar.write.durable")
TEMP_SUFFIX = ".tmp"
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


def durable_replace(root: Path, rel: str, data: bytes, old: bytes | None) -> None:
    """Atomically and durably make ``root/rel`` hold ``data`` (``old`` is its current content)."""
    name = rel.rsplit("/", 1)[-1]
    with open_parent_dir(root, rel, create=True) as dir_fd:
        tmp = temp_name(name)
        step = "create"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd)
            try:
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
        try:
            os.fsync(dir_fd)
        except OSError as exc:
            _restore(root, rel, old)
            raise _fail("dir_fsync", exc) from exc


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


def read_file(root: Path, rel: str) -> bytes | None:
    """Current bytes of a tier file, read without following links; None if it does not exist."""
    try:
        with open_parent_dir(root, rel, create=False) as dir_fd:
            fd = os.open(rel.rsplit("/", 1)[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR):
            raise Forbidden(f"{rel!r} is a link or not a regular file", code="unsafe_path") from exc
        raise SidecarError(f"cannot read {rel!r}: {exc.strerror}", code="read_failed") from exc
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Forbidden(f"{rel!r} is not a regular file", code="unsafe_path")
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def sweep_temp_files(root: Path) -> list[str]:
    """Delete temp files a crash left behind (``.*.tmp`` beside memory files); return them."""
    removed: list[str] = []
    if not root.is_dir():
        return removed
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if _TEMP_RE.match(name):
                path = Path(dirpath) / name
                path.unlink(missing_ok=True)
                removed.append(path.relative_to(root).as_posix())
    return removed
