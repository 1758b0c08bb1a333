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
    """Every tier file under ``root`` with its size and mtime; a missing root is an empty tier."""
    out: dict[str, FileStat] = {}
    if not root.is_dir():
        return out
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        base = Path(dirpath)
        for name in filenames:
            if not name.endswith(".md") or name.startswith("."):
                continue
            path = base / name
            try:
                st = path.stat()
            except OSError:
                continue
            if not os.path.isfile(path) or (path.is_symlink() and not _inside(real_root, path)):
                continue
            rel = path.relative_to(root).as_posix()
            out[rel] = FileStat(rel, st.st_size, st.st_mtime_ns)
    return out


def tier_md_bytes(root: Path) -> int:
    """Bytes of all tier files: what the per-tier cap counts."""
    return sum(f.size for f in scan_tier(root).values())
