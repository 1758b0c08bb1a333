"""Stopping background tasks so that they really stop.

On Python 3.11, ``asyncio.wait_for`` returns its awaitable's result instead of raising when the
task running it is cancelled in the same turn of the loop that the awaitable finishes in (the
cancel is lost; Python 3.12 rewrote it on ``asyncio.timeout``). A loop that met such a lost
cancel runs on, and ``task.cancel(); await task`` then waits for it for ever: a sidecar that
never exits on SIGTERM. The sidecar's own code bounds waits with ``asyncio.timeout``, which
keeps the cancel, and stops its tasks with :func:`stop_task`, which cancels again until the
task is done, so a cancel lost in a library is not a hang either.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
import struct
from typing import Any

#: How long a cancelled task is given to end before it is cancelled again. A task's cleanup (a
#: ``finally`` that releases a connection) normally ends well within it; cancelling sooner would
#: cut such cleanups short, later would hold a stop up for longer.
RECANCEL_S = 1.0


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` and wait until it is done, cancelling it again each ``RECANCEL_S`` for as
    long as it runs on. Its own exception, if it ended with one, is raised; its cancellation is
    not. A cancel of the caller still cancels the caller."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=RECANCEL_S)
    if not task.cancelled():
        task.result()


async def close_child(proc: asyncio.subprocess.Process | None, wait_s: float = 5.0) -> None:
    """End a helper child that exits when its input closes: close its stdin and wait for it,
    killing it after ``wait_s`` or when the close itself is cancelled (it is reaped either way)."""
    if proc is None:
        return
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        async with asyncio.timeout(wait_s):
            await proc.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
    except asyncio.CancelledError:  # the close itself cancelled: the child still goes, and is reaped
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await asyncio.shield(proc.wait())
        raise


#: What ``exchange`` raises when the child or its pipe failed (it is then out of step: end it).
CHILD_ERRORS = (OSError, EOFError, asyncio.IncompleteReadError, pickle.UnpicklingError)


async def exchange(proc: asyncio.subprocess.Process, data: bytes) -> tuple[str, Any]:
    """Send a helper child one length-framed request (``data``, pickled by the caller) and read its
    framed, pickled ``(status, value)`` answer; one of ``CHILD_ERRORS`` when either side broke."""
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(struct.pack(">I", len(data)) + data)
    await proc.stdin.drain()
    size = struct.unpack(">I", await proc.stdout.readexactly(4))[0]
    status, value = pickle.loads(await proc.stdout.readexactly(size))
    return status, value
