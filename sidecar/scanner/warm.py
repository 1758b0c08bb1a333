"""What a process works out the first time it scans, kept on disk for the next process to read.

A fresh process's first scan of a varied text spent some 0.3 s of CPU before judging anything:
compiling the patterns it meets (parsing each, grouping its alternations, turning it into the
engine's program), reading which literals each pattern's matches must hold, folding the
multilingual layer's terms. Every sidecar, every CLI search that judges a file, every helper child
paid it again, with the same results. The results are kept here the way Python keeps a module's
bytecode: in the package's ``__pycache__``, one small file per result, read when a process first
needs that result, so a process holds in memory only what it uses.

The files are only ever a shortcut. Their directory is named by the interpreter and by a digest of
the scanner as installed (its sources and the data it reads: ``installed``, as the files found clean
are kept under) and of the regular-expression engine's version (``_IDENTITY``, taken when the
scanner is imported): other code, other data or another engine reads another directory, and a save
removes the directories of other digests. A file holds its key beside its result and is read
only for that key; one that does not load (torn, or a program the engine turns down: it checks each
one it is given) is worked out again.

A process writes what it worked out when it exits, by a rename per file (a reader sees a whole file
or none), unless Python writes no bytecode there (``sys.dont_write_bytecode``). ``python -m
sidecar.scanner.prepare`` works out everything and writes it whatever the environment says, as
``compileall`` writes bytecode (``make`` runs it after an install). Where the package's directory is
read-only nothing is written and every process works it out, as before. The files are read with
``pickle``, as trusted as the bytecode beside them: whoever can write one can write the other.

Where the scanner's sources are not installed beside it (a package shipped as bytecode alone) there
is nothing to tell one version's results from another's, and nothing is kept. ``ENABLED`` turns it
off for a process (a test measuring what compiling costs).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import os
import pickle
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

from sidecar.scanner.installed import digest_of

__all__ = ["ENABLED", "MISSING", "lookup", "remember", "save"]

#: Set False to neither read nor write the files in this process.
ENABLED = True
#: What ``lookup`` returns for a key not kept.
MISSING: Any = object()

_HERE = Path(__file__).resolve().parent
_PREFIX = f"scanner-warm.{sys.implementation.cache_tag}."


def _identity() -> str | None:
    """The digest of what every kept result follows from: the scanner as installed (its sources and
    data: ``installed``), the interpreter and the engine's version; None where the sources are not
    there (a package installed as bytecode alone)."""
    if not (_HERE / "warm.py").exists():
        return None
    digest = hashlib.blake2b(digest_size=10)
    digest.update(sys.version.encode())
    digest.update(str(importlib.import_module("_sre").MAGIC).encode())
    digest.update(digest_of(_HERE).encode())
    return digest.hexdigest()


_IDENTITY = _identity() or ""
if not _IDENTITY:  # nothing would tell results of other code apart: none kept
    ENABLED = False
_DIR = _HERE / "__pycache__" / f"{_PREFIX}{_IDENTITY}"
_LOCK = threading.Lock()
_PENDING: dict[tuple[str, Any], Any] = {}  # worked out here, not written yet
_HOOKED: list[bool] = []


def _file(entry: tuple[str, Any]) -> Path:
    return _DIR / hashlib.blake2b(repr(entry).encode(), digest_size=12).hexdigest()


def lookup(kind: str, key: Any) -> Any:
    """The result kept for ``key`` among ``kind``'s, or ``MISSING``."""
    if not ENABLED:
        return MISSING
    entry = (kind, key)
    try:
        kept_entry, value = pickle.loads(_file(entry).read_bytes())
    except Exception:  # none yet, unreadable, torn: worked out again
        return MISSING
    return value if kept_entry == entry else MISSING


def remember(kind: str, key: Any, value: Any) -> None:
    """Keep ``value`` for ``key``: written when this process exits (or at ``save``)."""
    if not ENABLED:
        return
    with _LOCK:
        _PENDING[(kind, key)] = value
        if not _HOOKED:
            _HOOKED.append(True)
            atexit.register(save)


def save(*, always: bool = False) -> int:
    """Write what this process worked out, a file each; the number written. Nothing where Python
    writes no bytecode unless ``always`` (``prepare``), nor where the directory cannot be written."""
    if not ENABLED or (sys.dont_write_bytecode and not always):
        return 0
    with _LOCK:
        pending = list(_PENDING.items())
        _PENDING.clear()
    if not pending:
        return 0
    try:
        _DIR.mkdir(parents=True, exist_ok=True)
    except OSError:
        return 0
    for other in _DIR.parent.glob(f"{_PREFIX}*"):
        if other != _DIR:
            shutil.rmtree(other, ignore_errors=True)
    written = 0
    for entry, value in pending:
        path = _file(entry)
        temp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            temp.write_bytes(pickle.dumps((entry, value), protocol=pickle.HIGHEST_PROTOCOL))
            os.replace(temp, path)
            written += 1
        except OSError:
            temp.unlink(missing_ok=True)
    return written
