"""A tier file reached through plain directories is resolved with one ``lstat`` per part, without
resolving its path; anything with a link on the way (a linked file, a linked directory, a link out
of the tier) still goes through resolving, with the same answers as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.files import read_tier_file, resolve_tier_file, stat_tier_file
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
