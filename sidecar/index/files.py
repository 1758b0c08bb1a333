"""Which files belong to a tier: every ``*.md`` under the tier dir, nothing else.

Hidden names (temp files start with a dot), the index and its WAL, and symlinks that lead out of
the tier dir are never part of a tier.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FileStat", "is_tier_file", "scan_tier", "stat_tier_file", "tier_md_bytes"]


@dataclass(frozen=True, slots=True)
class FileStat:
    rel: str  # POSIX path relative to the tier dir
    size: int
    mtime_ns: int


def is_tier_file(rel: str) -> bool:
    """True for a relative POSIX path the index covers (``daily/x.md`` yes, ``.x.md.tmp`` no)."""
    parts = rel.split("/")
    return rel.endswith(".md") and all(p and not p.startswith(".") for p in parts)


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError):
        return False
    return True


def stat_tier_file(root: Path, rel: str) -> FileStat | None:
    """Stat one tier file; None when it is gone, not a regular file, or a link out of the tier."""
    path = root / rel
    try:
        st = path.stat()
    except OSError:
        return None
    if not os.path.isfile(path) or (path.is_symlink() and not _inside(root.resolve(), path)):
        return None
    return FileStat(rel, st.st_size, st.st_mtime_ns)


def scan_tier(root: Path) -> dict[str, FileStat]:
    """Every tier file under ``root`` with its size and mtime; a missing root is an empty tier.

    One ``scandir`` per directory and one ``stat`` per regular file (the directory entry already
    says what it is); only a symlink takes the slow path that resolves where it leads. Depth
    first with subdirectories sorted, as ``os.walk`` goes."""
    out: dict[str, FileStat] = {}
    if not root.is_dir():
        return out
    pending = [("", str(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError:
            continue
        subdirs: list[str] = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(name)
                    continue
                if not name.endswith(".md"):
                    continue
                if entry.is_symlink():  # rare: the one-file path resolves where it leads
                    found = stat_tier_file(root, prefix + name)
                    if found is not None:
                        out[found.rel] = found
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = prefix + name
            out[rel] = FileStat(rel, st.st_size, st.st_mtime_ns)
        pending.extend((f"{prefix}{name}/", os.path.join(directory, name)) for name in sorted(subdirs, reverse=True))
    return out


def tier_md_bytes(root: Path) -> int:
    """Bytes of all tier files: what the per-tier cap counts."""
    return sum(f.size for f in scan_tier(root).values())
