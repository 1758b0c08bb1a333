"""Which files belong to a tier: ``*.md`` files under the tier dir whose paths pass one set of
rules, the same rules the write and read paths apply to a client's path.

A tier path is relative, at most ``MAX_PATH_BYTES`` bytes of UTF-8 and ``MAX_DIR_DEPTH``
directories deep; every name is visible (no leading dot: temp files, the index and its WAL,
the lock), at most 255 bytes, free of control characters and backslashes, and cannot pass for
another name: it is its own Unicode NFKC form, has no leading or trailing spaces, does not start
with a combining mark or an invisible (format) character, and holds no invisible character but a
joiner between two others. A symlinked file belongs to the tier when it resolves to a regular
tier file inside the tier dir; a symlinked directory is never followed.

``scan_tier`` never leaves a directory out silently: what it skips (too deep, too long, a name
that breaks the rules, a linked directory, an unreadable one) is listed on the scan with why.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAX_DIR_DEPTH",
    "MAX_NAME_BYTES",
    "MAX_PATH_BYTES",
    "FileStat",
    "Skipped",
    "TierScan",
    "is_tier_file",
    "name_problem",
    "path_problem",
    "read_tier_file",
    "read_tier_file_stat",
    "resolve_tier_file",
    "scan_tier",
    "stat_tier_file",
    "tier_md_bytes",
]

MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 512
MAX_DIR_DEPTH = 8
_JOINERS = frozenset("\u200c\u200d")  # ZWNJ and ZWJ: part of spelling in several scripts, between letters


@dataclass(frozen=True, slots=True)
class FileStat:
    rel: str  # POSIX path relative to the tier dir
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path under the tier dir that is not part of the tier, and why."""

    rel: str
    reason: str


class TierScan(dict[str, FileStat]):
    """The tier's files by path (a dict), and ``skipped``: what the scan left out, and why."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[Skipped] = []


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one component of a tier path, or None when it can."""
    if name in ("", ".", ".."):
        return "empty, '.' or '..' components are not allowed"
    if name[0] == ".":
        return "hidden names are not allowed"
    if "\\" in name:
        return "backslashes are not allowed; use /"
    if name[0].isspace() or name[-1].isspace() or (name.endswith(".md") and name[:-3][-1:].isspace()):
        return "a name must not start or end with a space"
    if not name.isascii():
        return _unicode_problem(name)
    if not name.isprintable():
        return "control characters or NUL"
    return f"a name is over {MAX_NAME_BYTES} bytes" if len(name) > MAX_NAME_BYTES else None


def _unicode_problem(name: str) -> str | None:
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "not valid UTF-8"
    if size > MAX_NAME_BYTES:
        return f"a name is over {MAX_NAME_BYTES} bytes"
    categories = [unicodedata.category(ch) for ch in name]
    if "Cc" in categories:
        return "control characters or NUL"
    if categories[0].startswith("M") or categories[0] == "Cf":
        return "a name must not start with a combining mark or an invisible character"
    for i, (ch, cat) in enumerate(zip(name, categories, strict=True)):
        if cat == "Cf" and not (ch in _JOINERS and 0 < i < len(name) - 1):
            return f"invisible character U+{ord(ch):04X}"
    if not unicodedata.is_normalized("NFKC", name):
        return "lookalike characters (the name is not in Unicode NFKC form)"
    return None


def path_problem(rel: str) -> str | None:
    """Why ``rel`` is not the path of a tier file, or None when it is (see the module docstring)."""
    if not rel:
        return "empty"
    if rel[0] == "/":
        return "must be relative to the tier dir"
    if len(rel) > MAX_PATH_BYTES or len(rel.encode("utf-8", errors="surrogatepass")) > MAX_PATH_BYTES:
        return f"a path is at most {MAX_PATH_BYTES} bytes"
    parts = rel.split("/")
    if len(parts) - 1 > MAX_DIR_DEPTH:
        return f"a path is at most {MAX_DIR_DEPTH} directories deep"
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            return problem
    if not rel.endswith(".md") or parts[-1] == ".md":
        return "only .md files are memory"
    return None


def is_tier_file(rel: str) -> bool:
    """True for a relative POSIX path the index covers (``daily/x.md`` yes, ``.x.md.tmp`` no)."""
    return rel.endswith(".md") and path_problem(rel) is None


def _resolve(root: Path, rel: str) -> tuple[str, os.stat_result] | None:
    """(the tier path ``rel`` stands for, its stat), or None (see ``resolve_tier_file``)."""
    if is_tier_file(rel) and (plain := _plain(root, rel)) is not None:
        return plain
    path = root / rel
    try:
        real_root = root.resolve(strict=True)
        parent = path.parent.resolve(strict=True)
        real = path.resolve(strict=True)
        st = real.stat()
    except (OSError, RuntimeError):  # gone, unreadable, or a loop of links
        return None
    if parent != real_root.joinpath(*rel.split("/")[:-1]):
        return None  # a directory on the way is a link: never followed
    try:
        target = real.relative_to(real_root).as_posix()
    except ValueError:
        return None  # a link out of the tier
    if not stat.S_ISREG(st.st_mode) or not is_tier_file(target):
        return None
    return target, st


def _plain(root: Path, rel: str) -> tuple[str, os.stat_result] | None:
    """(``rel``, its stat) when every directory on the way from ``root`` is a directory and the file
    a regular one, none of them a link: then it is the tier file it names, as resolving every part
    would find (one ``lstat`` per part instead). None when that is not so: the caller resolves."""
    path = str(root)
    try:
        for part in rel.split("/")[:-1]:
            path = os.path.join(path, part)
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return None
        st = os.lstat(os.path.join(path, rel.rsplit("/", 1)[-1]))
    except OSError:
        return None
    return (rel, st) if stat.S_ISREG(st.st_mode) else None


def resolve_tier_file(root: Path, rel: str) -> str | None:
    """The tier file ``rel`` stands for: ``rel`` itself for a regular file, the target's tier path
    for a symlink that resolves inside the tier to a regular tier file; None when it is gone, not a
    regular file, a link out of the tier or to a file that is not memory, or reached through a
    linked directory. The index and ``GET /memory/read`` both go by this."""
    found = _resolve(root, rel)
    return found[0] if found is not None else None


def stat_tier_file(root: Path, rel: str) -> FileStat | None:
    """Stat one tier file; None when it is not one (see ``resolve_tier_file``)."""
    if not is_tier_file(rel):
        return None
    found = _resolve(root, rel)
    if found is None:
        return None
    st = found[1]
    return FileStat(rel, st.st_size, st.st_mtime_ns)


def read_tier_file(root: Path, rel: str) -> bytes | None:
    """The bytes of tier file ``rel`` (a link's target's), or None when it is not one. Opened
    without blocking, so a FIFO put in a file's place cannot hang the caller."""
    target = resolve_tier_file(root, rel)
    if target is None:
        return None
    read = _read(root, target)
    return None if read is None else read[0]


def read_tier_file_stat(root: Path, rel: str) -> tuple[bytes, FileStat] | None:
    """``stat_tier_file`` and ``read_tier_file`` with one resolution of the path: the bytes, and
    the size and mtime of the file they were read from; None when ``rel`` is not a tier file."""
    if not is_tier_file(rel):
        return None
    found = _resolve(root, rel)
    read = None if found is None else _read(root, found[0])
    if read is None:
        return None
    data, st = read
    return data, FileStat(rel, st.st_size, st.st_mtime_ns)


def _read(root: Path, target: str) -> tuple[bytes, os.stat_result] | None:
    try:
        fd = os.open(root / target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # before fdopen, which refuses a directory with EISDIR
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(), st


def scan_tier(root: Path) -> TierScan:
    """Every tier file under ``root`` with its size and mtime, and what was skipped; a missing root
    is an empty tier.

    One ``scandir`` per directory and one ``stat`` per regular file (the directory entry already
    says what it is); only a symlink takes the slow path that resolves where it leads. Depth
    first with subdirectories sorted, as ``os.walk`` goes."""
    out = TierScan()
    if not root.is_dir():
        return out
    pending = [("", str(root))]
    while pending:
        prefix, directory = pending.pop()
        try:
            with os.scandir(directory) as listing:
                entries = list(listing)
        except OSError as exc:
            out.skipped.append(Skipped(prefix.rstrip("/") or ".", f"cannot list it: {_reason(exc)}"))
            continue
        subdirs = _scan_dir(root, prefix, entries, out)
        pending.extend((f"{prefix}{name}/", os.path.join(directory, name)) for name in sorted(subdirs, reverse=True))
    return out


def _scan_dir(root: Path, prefix: str, entries: list[os.DirEntry[str]], out: TierScan) -> list[str]:
    """Add the tier files among ``entries`` (of directory ``prefix``) to ``out``; return the
    subdirectories to walk."""
    subdirs: list[str] = []
    for entry in entries:
        name = entry.name
        if name.startswith("."):
            continue
        rel = prefix + name
        try:
            if entry.is_dir(follow_symlinks=False):
                problem = _dir_problem(rel)
                if problem is None:
                    subdirs.append(name)
                else:
                    out.skipped.append(Skipped(rel, problem))
                continue
            if entry.is_symlink() and entry.is_dir():
                out.skipped.append(Skipped(rel, "a linked directory (links to directories are not followed)"))
                continue
            if not name.endswith(".md"):
                continue
            problem = path_problem(rel)
            if problem is not None:
                out.skipped.append(Skipped(rel, problem))
                continue
            if entry.is_symlink():  # rare: the one-file path resolves where it leads
                found = stat_tier_file(root, rel)
                if found is not None:
                    out[rel] = found
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out[rel] = FileStat(rel, st.st_size, st.st_mtime_ns)
    return subdirs


def _dir_problem(rel: str) -> str | None:
    if rel.count("/") + 1 > MAX_DIR_DEPTH:
        return f"deeper than {MAX_DIR_DEPTH} directories"
    if len(rel.encode("utf-8", errors="surrogatepass")) + len("/x.md") > MAX_PATH_BYTES:
        return f"no file in it would be within {MAX_PATH_BYTES} bytes"
    return name_problem(rel.rsplit("/", 1)[-1])


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENAMETOOLONG:
        return "its path is too long for the system"
    return exc.strerror or type(exc).__name__


def tier_md_bytes(root: Path) -> int:
    """Bytes of all tier files: what the per-tier cap counts."""
    return sum(f.size for f in scan_tier(root).values())
