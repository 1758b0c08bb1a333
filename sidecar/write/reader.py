"""Reading one memory file (``GET /memory/read``, ``memory.read``), under the write path's rules:
the same tier roots and the same path checks. A symlink is read when it leads to a tier file
inside the tier, exactly when the index takes it (``sidecar.index.files.resolve_tier_file``);
anything but a regular file is a 403. The crew's operator models are a 403 too: only the memory
block reads them, each for its own operator."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sidecar.contract import Flagged, ReadAnswer, ReadRequest
from sidecar.errors import Forbidden, NotFound
from sidecar.store.base import block_only
from sidecar.write.durable import read_file

if TYPE_CHECKING:
    from sidecar.write.service import WriteService

__all__ = ["read_memory"]


async def read_memory(writes: WriteService, req: ReadRequest) -> ReadAnswer:
    """One memory file's text, by tier and tier-relative path (the write path's safety rules: the
    tier roots ``writes`` writes to). ``req`` is parsed by the way in (``ReadRequest.from_json``)."""
    if req.tier == "crew" and block_only(req.path):  # whether it exists or not: nothing is told
        raise Forbidden("operator models (operators/) are read only by the memory block", code="operator_model")
    found = await asyncio.to_thread(_read_and_scan, writes.read_root(req.tier), req.path)
    if found is None:
        raise NotFound(f"no memory file {req.path!r} in the {req.tier} tier", code="no_such_file")
    size, text, flagged = found
    answer: ReadAnswer = {"tier": req.tier, "path": req.path, "bytes": size, "content": text}
    if flagged:
        answer["flagged"] = flagged
    if req.line_start is None and req.line_end is None:
        return answer
    lines = text.splitlines(keepends=True)
    first = req.line_start or 1
    last = min(req.line_end or len(lines), len(lines))
    answer["content"] = "".join(lines[first - 1 : last])
    answer["line_start"], answer["line_end"], answer["total_lines"] = first, max(last, first - 1), len(lines)
    return answer


def _read_and_scan(root: Path, rel: str) -> tuple[int, str, list[Flagged]] | None:
    """In one thread call: the file's size and text, and its sections the scanner matched."""
    from sidecar.scanner.scan import flagged_sections  # compiles its rules: loaded on first use

    data = read_file(root, rel, follow_links=True)
    if data is None:
        return None
    text = data.decode("utf-8", errors="replace")
    return len(data), text, [cast(Flagged, found.as_json()) for found in flagged_sections(text)]
