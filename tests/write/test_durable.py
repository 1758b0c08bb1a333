"""The durable write path, including faults that cannot be caused for real on demand.

The EIO and ENOSPC cases patch ``os.fsync`` / ``os.replace``: an fsync that fails with EIO needs a
failing disk, which a test cannot produce. Everything else runs on real files.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from sidecar.errors import WriteFailed
from sidecar.write import durable
from sidecar.write.durable import durable_replace, read_file, sweep_temp_files, temp_name


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob(".*.tmp"))


def test_replace_creates_parents_and_leaves_no_temp(tmp_path: Path) -> None:
    durable_replace(tmp_path, "daily/2026-01-01.md", b"hello", None)
    assert (tmp_path / "daily/2026-01-01.md").read_bytes() == b"hello"
    durable_replace(tmp_path, "daily/2026-01-01.md", b"world", b"hello")
    assert read_file(tmp_path, "daily/2026-01-01.md") == b"world"
    assert leftovers(tmp_path) == []


def test_fsync_eio_is_an_error_and_old_content_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "AGENT.md"
    target.write_bytes(b"old")
    calls: list[int] = []

    def failing_fsync(fd: int) -> None:  # injected: a disk that reports EIO on fsync
        calls.append(fd)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(durable.os, "fsync", failing_fsync)
    with pytest.raises(WriteFailed) as info:
        durable_replace(tmp_path, "AGENT.md", b"new", b"old")
    assert info.value.code == "fsync_failed"
    assert len(calls) == 1  # never retried
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_replace_enospc_is_an_error_and_old_content_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "AGENT.md"
    target.write_bytes(b"old")

    def full_disk(*args: object, **kwargs: object) -> None:  # injected: rename on a full filesystem
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(durable.os, "replace", full_disk)
    with pytest.raises(WriteFailed) as info:
        durable_replace(tmp_path, "AGENT.md", b"new", b"old")
    assert info.value.code == "no_space"
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_dir_fsync_failure_restores_the_old_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "AGENT.md"
    target.write_bytes(b"old")
    real_fsync = os.fsync
    state = {"dir_failures": 0}

    def fsync(fd: int) -> None:  # injected: the directory fsync fails once
        if os.path.isdir(f"/proc/self/fd/{fd}") and state["dir_failures"] == 0:
            state["dir_failures"] += 1
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(durable.os, "fsync", fsync)
    with pytest.raises(WriteFailed) as info:
        durable_replace(tmp_path, "AGENT.md", b"new", b"old")
    assert info.value.code == "dir_fsync_failed"
    assert target.read_bytes() == b"old" and leftovers(tmp_path) == []


def test_read_only_dir_is_not_writable_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions; the read-only case runs in the fault matrix")
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(WriteFailed) as info:
            durable_replace(tmp_path, "AGENT.md", b"x", None)
        assert info.value.code == "not_writable"
    finally:
        tmp_path.chmod(0o700)


def test_sweep_removes_only_our_temp_files(tmp_path: Path) -> None:
    (tmp_path / "daily").mkdir()
    ours = [tmp_path / temp_name("AGENT.md"), tmp_path / "daily" / temp_name("2026-01-01.md")]
    for p in ours:
        p.write_bytes(b"partial")
    keep = [tmp_path / ".notes.tmp", tmp_path / "AGENT.md", tmp_path / ".vimrc"]
    for p in keep:
        p.write_bytes(b"keep")
    removed = sweep_temp_files(tmp_path)
    assert sorted(removed) == sorted(p.relative_to(tmp_path).as_posix() for p in ours)
    assert all(p.exists() for p in keep) and not any(p.exists() for p in ours)
