"""The embedded side of the crew store: the lead's own index of the crew dir (``index.sqlite``),
read on read-only connections. It is what the crew search served before any server store, and
the source of every copy into one (the lead's mirror, ``memory-sidecar store migrate``): the
chunks are the lead's chunker's, so a server store never cuts a file differently."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sidecar.index.db import connect_reader
from sidecar.index.files import read_tier_file
from sidecar.index.tier_index import INDEX_NAME
from sidecar.store.base import ChunkRow, FileRow, VectorRow

__all__ = ["SqliteCrewSource"]

_IN_BATCH = 500


class SqliteCrewSource:
    """Reads one tier index file; each call opens its own read-only connection (the index may be
    rebuilt or healed under a new inode between calls), so calls may come from any thread."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / INDEX_NAME

    def _connect(self) -> sqlite3.Connection:
        if not self.path.exists():
            raise FileNotFoundError(f"{self.path}: no index (run memory-sidecar reindex on the dir first)")
        return connect_reader(self.path)

    def main_model(self) -> str | None:
        """The model most of the index's stored vectors belong to (None: no vectors)."""
        conn = self._connect()
        try:
            row = conn.execute("SELECT model FROM embeddings GROUP BY model ORDER BY COUNT(*) DESC LIMIT 1").fetchone()
        finally:
            conn.close()
        return str(row[0]) if row else None

    def files(self, paths: Sequence[str] | None = None) -> dict[str, FileRow]:
        """Every file the index holds (or those of ``paths`` it holds), path -> row."""
        conn = self._connect()
        try:
            if paths is None:
                return {p: FileRow(p, h, s) for p, h, s in conn.execute("SELECT path, hash, size FROM files")}
            out: dict[str, FileRow] = {}
            for part in _batches(paths):
                marks = ",".join("?" * len(part))
                sql = f"SELECT path, hash, size FROM files WHERE path IN ({marks})"
                out.update({p: FileRow(p, h, s) for p, h, s in conn.execute(sql, tuple(part))})
            return out
        finally:
            conn.close()

    def chunks(self, paths: Sequence[str]) -> dict[str, list[ChunkRow]]:
        """The chunks of ``paths`` in file order; a path the index no longer holds maps to []."""
        out: dict[str, list[ChunkRow]] = {p: [] for p in paths}
        conn = self._connect()
        try:
            for part in _batches(paths):
                marks = ",".join("?" * len(part))
                sql = (
                    "SELECT path, ord, heading, body, line_start, line_end, hash, plain FROM chunks "
                    f"WHERE path IN ({marks}) ORDER BY path, ord"
                )
                for row in conn.execute(sql, tuple(part)):
                    out[row[0]].append(ChunkRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], bool(row[7])))
        finally:
            conn.close()
        return out

    def contents(self, paths: Sequence[str]) -> dict[str, bytes]:
        """The bytes of each file as it is in the dir now (a file gone or unreadable is left out)."""
        out = {}
        for rel in paths:
            data = read_tier_file(self.root, rel)
            if data is not None:
                out[rel] = data
        return out

    @staticmethod
    def flags(contents: dict[str, bytes]) -> dict[str, list[dict[str, Any]]]:
        """The injection scanner's flagged sections of each file (a file with none maps to [])."""
        from sidecar.scanner.scan import flagged_sections  # compiles the scanner's rules: on first use

        return {
            rel: [s.as_json() for s in flagged_sections(data.decode("utf-8", errors="replace"))]
            for rel, data in contents.items()
        }

    def vectors(self, model: str | None, hashes: Iterable[str]) -> dict[str, VectorRow]:
        """Stored vectors of ``model`` for ``hashes`` (those it has)."""
        wanted = list(dict.fromkeys(hashes))
        if model is None or not wanted:
            return {}
        out: dict[str, VectorRow] = {}
        conn = self._connect()
        try:
            for part in _batches(wanted):
                marks = ",".join("?" * len(part))
                sql = f"SELECT hash, dim, vector, sentences FROM embeddings WHERE model = ? AND hash IN ({marks})"
                for digest, dim, blob, sentences in conn.execute(sql, (model, *part)):
                    if len(blob) == 4 * dim:
                        out[digest] = VectorRow(digest, np.frombuffer(blob, dtype="<f4").astype(np.float32), sentences)
        finally:
            conn.close()
        return out


def _batches(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[i : i + _IN_BATCH] for i in range(0, len(items), _IN_BATCH)]
