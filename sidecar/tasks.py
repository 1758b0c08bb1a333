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
import sys
from pathlib import Path
from typing import Any

import structlog

import sidecar

log = structlog.get_logger(__name__)

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


#: The directory holding the ``sidecar`` package, the argument every helper child gets first (its
#: ``sys.path[0]``): a child runs the package the server runs.
PACKAGE_PARENT = str(Path(sidecar.__file__).resolve().parent.parent)


class Child:
    """A helper child Python process running ``script`` (``python -c script PACKAGE_PARENT``),
    started at the first ``ask`` and spoken to with ``exchange``. A child that cannot start, or
    breaks (its pipe fails, it dies, an ask is cancelled mid-answer), is ended and never started
    again: ``ask`` then answers None and the caller does the work itself. ``name``, when given,
    logs both events (``<name>_unavailable``, ``<name>_died``)."""

    def __init__(self, script: str, *, python: str = sys.executable, name: str | None = None) -> None:
        self._script = script
        self._python = python
        self._name = name
        self._proc: asyncio.subprocess.Process | None = None
        self._broken = False

    async def ask(self, data: bytes) -> tuple[str, Any] | None:
        """The child's ``(status, value)`` answer to ``data``, or None when it cannot answer."""
        proc = await self._started()
        if proc is None:
            return None
        try:
            return await exchange(proc, data)
        except CHILD_ERRORS:
            if self._name is not None:
                log.warning(f"{self._name}_died", returncode=proc.returncode)
            self._broken = True
            await self.aclose()
            return None
        except asyncio.CancelledError:  # cancelled mid-answer: the pipe is out of step, the child goes
            self._broken = True
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            raise

    async def _started(self) -> asyncio.subprocess.Process | None:
        if self._proc is None and not self._broken:
            try:
                self._proc = await asyncio.create_subprocess_exec(
                    self._python, "-c", self._script, PACKAGE_PARENT,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
            except OSError as exc:
                if self._name is not None:
                    log.warning(f"{self._name}_unavailable", error=str(exc))
                self._broken = True
        return self._proc

    async def aclose(self) -> None:
        """End the child (its input closed, it exits) and wait for it."""
        proc, self._proc = self._proc, None
        await close_child(proc)
