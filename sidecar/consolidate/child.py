"""A consolidation run in a process of its own, so that its CPU work never holds the sidecar's
interpreter lock.

On a big tier the job computes for seconds to minutes (clustering, the change search, the scans).
In threads of the sidecar's process every step holds the interpreter lock while the OS lets it run,
and on a busy host, with more runnable threads than cores, the event loop waits for that thread to
be scheduled again before it gets the lock back: ``/healthz`` then answers in hundreds of
milliseconds while a bare aiohttp process beside it answers within ten. ``run_in_child`` starts
a Python process running this module's ``main`` for one run; the child runs ``job.consolidate`` with the
run's arguments and writes the tier itself, every file by ``durable_replace``, so a child killed at
any point leaves a run the next one finishes, as a killed sidecar does. What only the sidecar holds
stays with it: the embedding model (the child asks it for vectors), the journal (the child hands it
each week's entry) and whoever follows the progress; the report comes back whole.

The two speak over the child's stdin and stdout: each message one pickled value after its length.
The child dies with the sidecar (``PR_SET_PDEATHSIG`` on Linux; elsewhere at its next message, when
its pipe is closed), and a run that is cancelled (the sidecar stopping) kills its child and reaps it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import gc
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt
import structlog

from sidecar.consolidate.report import Report

__all__ = ["ON_THREAD_BYTES", "ChildEnded", "Run", "SummariserSpec", "run_in_child"]

_HEADER = struct.Struct(">Q")
#: A message of this many bytes or more is unpickled off the event loop: the run's report (half a
#: megabyte and tens of thousands of objects on a full tier) costs some 10 ms of CPU to unpickle, a
#: step of the loop that a busy host stretches to over 100 ms; a thread lets the loop answer between
#: its turns. A short message (a batch of texts to embed, a progress tick) is quicker on the loop.
ON_THREAD_BYTES = 64 * 1024
_PR_SET_PDEATHSIG = 1  # prctl(2)
#: The run's process starts here: structlog imports rich when it is installed, for tracebacks this
#: process never renders (they reach the sidecar as text), a third of the process's imports; a None
#: in ``sys.modules`` keeps it out, as the CLI does.
_BOOT = (
    "import sys; sys.modules.setdefault('rich', None); "
    "from sidecar.consolidate.child import main; sys.exit(main(sys.argv[1:]))"
)
log = structlog.get_logger("sidecar.consolidate")


class ChildEnded(RuntimeError):
    """The run's process ended before its report (killed, or out of memory): the next run
    finishes the run from its recorded plan."""


@dataclass(frozen=True, slots=True)
class SummariserSpec:
    """How the child makes the run's summariser: ``summarise.make_summariser``'s arguments, and
    for a model the run's budget of model time (``budget.Budgeted``)."""

    kind: str
    base_url: str
    model: str
    api_key: str
    call_s: float
    run_s: float


@dataclass(frozen=True, slots=True)
class Run:
    """One run's arguments to ``job.consolidate`` (but its services), how to summarise, and how
    the child logs: the sidecar's format and level."""

    root: Path
    since: date | None
    until: date
    dry_run: bool
    evergreen: str
    workspace_id: str
    agent_id: str | None
    evergreen_cap_bytes: int
    operator: Any  # job.OperatorModel | None (the job's module is the child's to import)
    archive_cap_bytes: int | None
    summariser: SummariserSpec
    log_format: str
    log_level: int
    section_budget: int = 2000  # characters a summary's section may hold: the job's default


#: The vectors of texts, from the sidecar's embedding model.
Embed = Callable[[list[str]], Awaitable[Any]]
#: A week's ``memory.consolidated`` entry handed to the journal: the week (``weekly.Week``), its id.
Record = Callable[[Any, str], Awaitable[None]]
Progress = Callable[[str, int, int], None]


async def run_in_child(
    run: Run, *, embed: Embed | None = None, record: Record | None = None, progress: Progress | None = None
) -> Report:
    """``job.consolidate`` as ``run`` says, in a process started for it; its report. The child's
    error is raised here as it was raised there (with the child's traceback as a note);
    ``ChildEnded`` when it ended without a report."""
    # The child imports what this process imports: its path, and nothing from the working directory.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    wants = (embed is not None, record is not None, progress is not None)
    argv = [sys.executable, "-P", "-c", _BOOT, str(os.getpid())]
    proc, ended = await _started(argv, env)
    assert proc.stdin is not None and proc.stdout is not None
    loop = asyncio.get_running_loop()
    pipes: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader()
        receiving, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), proc.stdout)
        pipes.append(receiving)
        sending, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), proc.stdin
        )
        pipes.append(sending)
        writer = asyncio.StreamWriter(sending, protocol, None, loop)
        writer.write(_frame((run, wants)))
        while True:
            await writer.drain()
            message = await _receive(reader)
            if message is None:
                raise ChildEnded(
                    f"the consolidation's process ended with {await asyncio.shield(ended)} before its report"
                )
            kind, body = message
            if kind == "done":
                await asyncio.shield(ended)  # (a cancelled wait leaves the exit status to come)
                assert isinstance(body, Report)
                return body
            if kind == "failed":
                raise body
            if kind == "progress" and progress is not None:
                progress(*body)
            elif kind == "embed" and embed is not None:
                writer.write(_frame(await _answered(embed, body)))
            elif kind == "record" and record is not None:
                writer.write(_frame(await _answered(record, *body)))
    finally:
        for pipe in pipes:
            pipe.close()
        proc.stdin.close()  # a pipe no transport took (closing one twice does nothing)
        proc.stdout.close()
        if not ended.done():
            proc.kill()  # the run is left to the next one, from its recorded plan
            await asyncio.shield(ended)


async def _started(argv: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], asyncio.Future[int]]:
    """The child, and its exit status to come. A thread of its own starts it and then waits for
    it: the start (``fork_exec``, then a wait until the new process has exec'd) would hold the loop
    for as long as the host takes to schedule the new process, and ``PR_SET_PDEATHSIG`` ends the
    child when the thread that started it ends, so that thread lives as long as the child. A run
    cancelled while its child starts kills the child once it is started, and ends once it is reaped."""
    started: concurrent.futures.Future[subprocess.Popen[bytes]] = concurrent.futures.Future()
    ended: concurrent.futures.Future[int] = concurrent.futures.Future()

    def start_and_reap() -> None:
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except BaseException as exc:
            started.set_exception(exc)
            ended.set_exception(exc)
            return
        started.set_result(proc)
        ended.set_result(proc.wait())

    threading.Thread(target=start_and_reap, name="consolidate-child", daemon=True).start()
    try:
        proc = await asyncio.shield(asyncio.wrap_future(started))
    except asyncio.CancelledError:
        started.add_done_callback(_kill_started)
        with contextlib.suppress(BaseException):  # reaped before the run ends, unless cancelled again
            await asyncio.shield(asyncio.wrap_future(ended))
        raise
    return proc, asyncio.wrap_future(ended)


def _kill_started(started: concurrent.futures.Future[subprocess.Popen[bytes]]) -> None:
    """Kill a child started for a run cancelled meanwhile (its thread reaps it)."""
    if started.exception() is None:
        proc = started.result()
        proc.kill()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


async def _answered(call: Callable[..., Awaitable[Any]], *args: Any) -> tuple[str, Any]:
    try:
        return "ok", await call(*args)
    except Exception as exc:  # the child raises it where the job made the call
        return "error", _portable(exc)


async def _receive(stream: asyncio.StreamReader) -> tuple[str, Any] | None:
    """The next message, or None at the end of the stream. A long one (the run's report) is
    unpickled on a thread (``ON_THREAD_BYTES``)."""
    try:
        size = _HEADER.unpack(await stream.readexactly(_HEADER.size))[0]
        data = await stream.readexactly(size)
    except asyncio.IncompleteReadError:
        return None
    message: tuple[str, Any] = (
        await asyncio.to_thread(pickle.loads, data) if size >= ON_THREAD_BYTES else pickle.loads(data)
    )
    return message


def _frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _portable(exc: BaseException) -> BaseException:
    """``exc`` as it can cross to the other process: itself when it pickles, else a RuntimeError
    naming it."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")
    return exc


class _Parent:
    """The child's end of the pipes: one request to the sidecar at a time."""

    def __init__(self, read: IO[bytes], write: IO[bytes]) -> None:
        self._read, self._write = read, write
        self._lock = threading.Lock()

    def send(self, kind: str, body: object) -> None:
        with self._lock:
            self._write.write(_frame((kind, body)))
            self._write.flush()

    def receive(self) -> Any:
        header = self._read.read(_HEADER.size)
        if len(header) < _HEADER.size:
            raise EOFError("the sidecar closed the consolidation's pipe")
        return pickle.loads(self._read.read(_HEADER.unpack(header)[0]))

    def _ask(self, kind: str, body: object) -> Any:
        with self._lock:
            self._write.write(_frame((kind, body)))
            self._write.flush()
            status, answer = self.receive()
        if status == "error":
            raise answer
        return answer

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors: npt.NDArray[np.float32] = await asyncio.to_thread(self._ask, "embed", list(texts))
        return vectors

    async def record(self, week: Any, entry_id: str) -> None:
        await asyncio.to_thread(self._ask, "record", (week, entry_id))

    def progress(self, step: str, done: int, total: int) -> None:
        self.send("progress", (step, done, total))


async def _consolidate(run: Run, wants: tuple[bool, bool, bool], parent: _Parent) -> Report:
    from sidecar.consolidate.budget import Budgeted
    from sidecar.consolidate.job import consolidate
    from sidecar.consolidate.summarise import Summariser, make_summariser

    spec = run.summariser
    summariser: Summariser = make_summariser(spec.kind, spec.base_url, spec.model, spec.api_key, spec.call_s)
    if spec.kind != "none":
        summariser = Budgeted(summariser, run_s=spec.run_s, call_s=spec.call_s)
    embed, record, progress = wants
    try:
        return await consolidate(
            run.root,
            since=run.since,
            until=run.until,
            summariser=summariser,
            dry_run=run.dry_run,
            evergreen=run.evergreen,
            record=parent.record if record else None,
            workspace_id=run.workspace_id,
            agent_id=run.agent_id,
            evergreen_cap_bytes=run.evergreen_cap_bytes,
            operator=run.operator,
            progress=parent.progress if progress else None,
            embed=parent.embed if embed else None,
            archive_cap_bytes=run.archive_cap_bytes,
            section_budget=run.section_budget,
        )
    finally:
        await summariser.aclose()


def _die_with(parent_pid: int) -> None:
    """End this process when the sidecar that started it ends (Linux); at once if it has already."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)


def main(argv: list[str]) -> int:
    """The child: read the run, run it, send its report (or its error)."""
    _die_with(int(argv[0]))
    parent = _Parent(os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)  # a stray print goes to the log, never into the pipe
    run, wants = parent.receive()
    from sidecar.logs import configure_logging

    configure_logging(run.log_format, {10: "debug", 20: "info", 30: "warning"}.get(run.log_level, "error"))
    # The process lives for one run: its garbage in cycles goes when it exits, and no collection
    # walks the run's objects meanwhile.
    gc.disable()
    try:
        report = asyncio.run(_consolidate(run, wants, parent))
    except Exception as exc:
        exc.add_note("in the consolidation's process:\n" + "".join(traceback.format_exception(exc)))
        parent.send("failed", _portable(exc))
        return 1
    parent.send("done", report)
    return 0
