"""A tier file reached through plain directories is resolved with one ``lstat`` per part, without
resolving its path; anything with a link on the way (a linked file, a linked directory, a link out
of the tier) still goes through resolving, with the same answers as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.files import read_tier_file, read_tier_file_stat, resolve_tier_file, stat_tier_file
from tests.support.memory import write


def test_plain_files_are_not_resolved_and_links_still_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "memory"
    write(root, "daily/2026-01-02.md", "- plain\n")
    write(tmp_path, "outside.md", "- outside\n")
    (root / "topics").mkdir()
    os.symlink(root / "daily" / "2026-01-02.md", root / "topics" / "linked.md")
    os.symlink(tmp_path / "outside.md", root / "topics" / "out.md")
    os.symlink(root / "daily", root / "days")
    resolved: list[str] = []
    resolve = Path.resolve

    def counted(self: Path, strict: bool = False) -> Any:
        resolved.append(str(self))
        return resolve(self, strict=strict)

    monkeypatch.setattr(Path, "resolve", counted)
    assert resolve_tier_file(root, "daily/2026-01-02.md") == "daily/2026-01-02.md"
    assert read_tier_file(root, "daily/2026-01-02.md") == b"- plain\n"
    found = stat_tier_file(root, "daily/2026-01-02.md")
    assert found is not None and found.size == 8
    assert resolved == [], "a plain file is not resolved"
    assert resolve_tier_file(root, "topics/linked.md") == "daily/2026-01-02.md"
    assert resolve_tier_file(root, "topics/out.md") is None, "a link out of the tier"
    assert resolve_tier_file(root, "days/2026-01-02.md") is None, "a linked directory on the way"
    assert resolve_tier_file(root, "daily/missing.md") is None
    assert resolved, "links are resolved"


def test_reading_with_the_stat_answers_as_stat_and_read_do(tmp_path: Path) -> None:
    """The index applies a file with one resolution (``read_tier_file_stat``): the same bytes, size
    and mtime as ``stat_tier_file`` then ``read_tier_file``, and None wherever either says none."""
    root = tmp_path / "memory"
    write(root, "daily/2026-01-02.md", "- plain\n")
    write(tmp_path, "outside.md", "- outside\n")
    write(root, "notes.txt", "- not memory\n")
    (root / "topics").mkdir()
    os.symlink(root / "daily" / "2026-01-02.md", root / "topics" / "linked.md")
    os.symlink(tmp_path / "outside.md", root / "topics" / "out.md")
    os.symlink(root / "daily" / "2026-01-02.md", root / "topics" / "link.txt")
    os.symlink(root / "daily", root / "days")
    os.mkfifo(root / "topics" / "fifo.md")
    (root / "topics" / "dir.md").mkdir()
    cases = [
        "daily/2026-01-02.md",
        "topics/linked.md",
        "topics/out.md",
        "topics/link.txt",
        "days/2026-01-02.md",
        "topics/fifo.md",
        "topics/dir.md",
        "notes.txt",
        "daily/missing.md",
        ".hidden.md",
    ]
    for rel in cases:
        st, data = stat_tier_file(root, rel), read_tier_file(root, rel)
        both = read_tier_file_stat(root, rel)
        if st is None or data is None:
            assert both is None, rel
        else:
            assert both == (data, st), rel
    assert read_tier_file_stat(root, "topics/linked.md") == (b"- plain\n", stat_tier_file(root, "topics/linked.md"))
