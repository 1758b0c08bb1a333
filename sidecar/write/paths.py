"""Path safety for memory writes and reads: only ``.md`` files inside the tier dir.

A client path is refused when it is empty, absolute, has ``..``, empty or hidden components,
backslashes, NUL or control characters, a component over 255 bytes, does not end in ``.md``, or
turns into any of those after Unicode NFKC folding (fullwidth dots and slashes). Opening walks
the directories one by one with ``O_NOFOLLOW``, so a symlinked directory cannot lead a write out
of the tier, and the final name is never followed either.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from sidecar.errors import BadRequest, Forbidden

__all__ = ["MAX_COMPONENT_BYTES", "check_rel_path", "open_parent_dir"]

MAX_COMPONENT_BYTES = 255


def _refuse(path: str, why: str) -> BadRequest:
    return BadRequest(f"invalid path {path!r}: {why}", code="invalid_path")


def _check_form(raw: str, form: str) -> list[str]:
    if not form:
        raise _refuse(raw, "empty")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in form):
        raise _refuse(raw, "control characters or NUL")
    if "\\" in form:
        raise _refuse(raw, "backslashes are not allowed; use /")
    if form.startswith("/"):
        raise _refuse(raw, "must be relative to the tier dir")
    parts = form.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise _refuse(raw, "empty, '.' or '..' components are not allowed")
        if part.startswith("."):
            raise _refuse(raw, "hidden names are not allowed")
        if len(part.encode("utf-8", errors="surrogatepass")) > MAX_COMPONENT_BYTES:
            raise _refuse(raw, f"a name is over {MAX_COMPONENT_BYTES} bytes")
    if not form.endswith(".md") or parts[-1] == ".md":
        raise _refuse(raw, "only .md files are memory")
    return parts


def check_rel_path(path: object) -> str:
    """Validate a client-supplied tier-relative path; return it unchanged."""
    if not isinstance(path, str):
        raise BadRequest("path must be a string", code="invalid_path")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise _refuse(path, "not valid UTF-8") from None
    _check_form(path, path)
    folded = unicodedata.normalize("NFKC", path)
    if folded != path:
        _check_form(path, folded)
        if folded.count("/") != path.count("/"):
            raise _refuse(path, "characters that fold into a path separator")
    return path


@contextmanager
def open_parent_dir(root: Path, rel: str, *, create: bool) -> Iterator[int]:
    """A directory fd for the parent of ``rel``, reached without following any symlink."""
    parts = rel.split("/")[:-1]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts:
            if create:
                with suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                raise
            except (NotADirectoryError, OSError) as exc:
                raise Forbidden(f"path {rel!r} goes through a link or a non-directory", code="unsafe_path") from exc
            os.close(fd)
            fd = nxt
        yield fd
    finally:
        os.close(fd)
