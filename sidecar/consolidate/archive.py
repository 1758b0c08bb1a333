"""The archive's own bound: rolled-up daily notes leave the tier's cap, so they need a cap of their own.

``archive/daily/YYYY-MM-DD.md`` notes stay plain (indexed, searchable, ranked below live text) while
their bytes fit ``plain_cap``. Past it the oldest are compressed, one gzip file per note
(``YYYY-MM-DD.md.gz``: readable with ``zcat``, no longer indexed), and past ``packed_cap`` of
compressed bytes the oldest compressed notes are removed: the retention. The lines weekly summaries
left out (``archive/summaries/YYYY-Www.md``, ``weekly.REST_DIR``) count with the plain notes: past
the cap with every note compressed, the oldest of them are removed too. Every file compressed or
removed is in the report. The trade-off is the search: a fact only a compressed note holds is found
through its weekly summary (which keeps a note's lines unless a budget cut them) or not at all.

A compressed copy is written (deterministic bytes, no timestamp) before its plain note is removed,
so a run killed in between leaves both and the next run finishes the move.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path

from sidecar.consolidate.periods import ARCHIVE_DIR, file_names, note_day
from sidecar.consolidate.state import unlink_durably
from sidecar.consolidate.weekly import REST_DIR
from sidecar.write.durable import durable_replace, read_file

__all__ = ["ArchiveBound", "bound_archive"]

_PACKED = ".md.gz"


@dataclass(slots=True)
class ArchiveBound:
    """What bounding the archive did: notes compressed, compressed notes removed, and the bytes
    kept plain and compressed after it."""

    compressed: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    plain_bytes: int = 0
    packed_bytes: int = 0


def bound_archive(root: Path, *, plain_cap: int, packed_cap: int, dry_run: bool) -> ArchiveBound:
    """Compress the oldest plain notes past ``plain_cap``, then remove the oldest compressed ones
    past ``packed_cap`` (module docstring)."""
    out = ArchiveBound()
    names = file_names(root / ARCHIVE_DIR)
    plain = [n for n in names if note_day(f"daily/{n}") is not None]
    packed = {n[: -len(_PACKED)] + ".md": (root / ARCHIVE_DIR / n).stat().st_size for n in names if n.endswith(_PACKED)}
    sizes = {n: (root / ARCHIVE_DIR / n).stat().st_size for n in plain}
    rests = {n: (root / REST_DIR / n).stat().st_size for n in file_names(root / REST_DIR) if n.endswith(".md")}
    out.plain_bytes = sum(sizes.values()) + sum(rests.values())
    for name in plain:  # oldest first: the names sort by date
        if out.plain_bytes <= plain_cap and name not in packed:
            break
        rel = f"{ARCHIVE_DIR}/{name}"
        data = read_file(root, rel)
        if data is None:
            continue
        zipped = gzip.compress(data, compresslevel=9, mtime=0)
        if not dry_run:
            old = read_file(root, rel + ".gz")
            if old != zipped:
                durable_replace(root, rel + ".gz", zipped, old)
            unlink_durably(root, rel)
        packed[name] = len(zipped)
        out.plain_bytes -= sizes[name]
        out.compressed.append(rel)
    for name, size in rests.items():  # oldest first; only once no note is left to compress
        if out.plain_bytes <= plain_cap:
            break
        if not dry_run:
            unlink_durably(root, f"{REST_DIR}/{name}")
        out.plain_bytes -= size
        out.expired.append(f"{REST_DIR}/{name}")
    out.packed_bytes = sum(packed.values())
    for name in sorted(packed):
        if out.packed_bytes <= packed_cap:
            break
        rel = f"{ARCHIVE_DIR}/{name}.gz"
        if not dry_run:
            unlink_durably(root, rel)
        out.packed_bytes -= packed[name]
        out.expired.append(rel)
    return out
