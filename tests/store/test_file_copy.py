"""A member's copy of the crew's files: the hashes it compares with the store's follow every
change of its files, though a file it has hashed is read again only when its size or mtime moved."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sidecar.store.copy import CrewFileCopy
from tests.support.memory import write


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def test_local_hashes_follow_changes_of_the_copy(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    write(root, "CREW.md", "# Crew\nOne.\n")
    write(root, "topics/a.md", "# A\nalpha\n")
    copy = CrewFileCopy(None, root)  # type: ignore[arg-type]  # _local reads the dir only
    assert copy._local() == {"CREW.md": digest(b"# Crew\nOne.\n"), "topics/a.md": digest(b"# A\nalpha\n")}
    # Same size, new bytes and a new mtime (set ahead: a coarse clock could repeat it).
    path = root / "topics" / "a.md"
    path.write_bytes(b"# A\nomega\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    write(root, "topics/b.md", "# B\nbeta\n")
    (root / "CREW.md").unlink()
    assert copy._local() == {"topics/a.md": digest(b"# A\nomega\n"), "topics/b.md": digest(b"# B\nbeta\n")}
    # Written by the copy itself: read again whatever its mtime.
    copy._write({"topics/b.md": b"# B\nBETA\n"})
    assert copy._local()["topics/b.md"] == digest(b"# B\nBETA\n")
