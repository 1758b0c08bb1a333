"""The scanner as installed, in one digest: its code and the data it reads (each file's name, size
and mtime) and the package's version. A verdict or anything else the scanner worked out and kept
holds only under the digest it was kept under: the files found clean (``retrieval.flags``) and what
a first scan works out (``warm``)."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

__all__ = ["digest_of", "scanner_digest"]


def digest_of(scanner: Path) -> str:
    """The digest of the scanner in the directory ``scanner``, with the data beside it (``../data``)."""
    import sidecar

    data = scanner.parent / "data"
    parts = [sidecar.__version__]
    files = [*scanner.glob("*.py"), *data.glob("scanner*"), data / "confusables.txt"]
    for path in sorted(path for path in files if path.exists()):
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


@functools.cache
def scanner_digest() -> str:
    """``digest_of`` this scanner."""
    return digest_of(Path(__file__).parent)
