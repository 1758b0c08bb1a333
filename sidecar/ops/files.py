"""The memory files: a durable write (``POST /memory/write``, ``memory_write``) and a read
(``GET /memory/read``, ``memory_read``), through the write service's rules (caps, the write-path
scan, client paths, ``Idempotency-Key``)."""

from __future__ import annotations

from sidecar.contract import ReadAnswer, ReadRequest, WriteAnswer, WriteRequest
from sidecar.ops.sidecar import Sidecar
from sidecar.write.idempotency import check_key
from sidecar.write.reader import read_memory

__all__ = ["read", "write"]


async def write(sc: Sidecar, req: WriteRequest, idempotency_key: str | None = None) -> tuple[WriteAnswer, bool]:
    """Write once durable. With an idempotency key, a retry writes nothing and answers the first
    write's answer again; the second value says whether it was such a replay."""
    if idempotency_key is None:
        return await sc.writes.write(req), False
    return await sc.writes.write_once(req, check_key(idempotency_key))


async def read(sc: Sidecar, req: ReadRequest) -> ReadAnswer:
    """One memory file (or a range of its lines) by tier and path, with the sections the scanner flagged."""
    return await read_memory(sc.writes, req)
