"""What the tier's cap counts: every memory file but the archive.

Consolidation moves rolled-up daily notes to ``archive/``, where they stay readable and searchable
but are bounded by the archive's own cap (``sidecar.consolidate.archive``): counting them against
the tier's cap too would mean a consolidation never frees room for new writes.
"""

from __future__ import annotations

from pathlib import Path

from sidecar.index.files import scan_tier

__all__ = ["ARCHIVE_PREFIX", "capped_bytes", "counts_against_cap"]

ARCHIVE_PREFIX = "archive/"


def counts_against_cap(rel: str) -> bool:
    """Whether a tier file's bytes (and the file itself) count against the tier's caps."""
    return not rel.startswith(ARCHIVE_PREFIX)


def capped_bytes(root: Path) -> int:
    """The bytes of the tier's files that count against its cap."""
    return sum(f.size for rel, f in scan_tier(root).items() if counts_against_cap(rel))
