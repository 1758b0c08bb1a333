"""Sidecar processes forked from one that has already imported the server, for the tests.

A ``memory-sidecar serve`` process spends most of its CPU before ready importing the server's
modules (about 0.8 s on this project's CI host: ``INDEX_PARTS=process python -m tests.bench index``,
"its imports before ready"), and the suite starts a hundred or more of them. Here a zygote process
imports what ``serve`` imports once (as ``serve`` does: one BLAS thread, rich absent) and does what
every sidecar does within a second of ready (``_warm``), then forks a child per start; the child
sets the environment, working dir, argv and output the start asked for and runs
``sidecar.cli.main`` as ``python -m sidecar`` would, then exits as the interpreter does (non-daemon
threads joined, ``atexit`` run). The child is a real process of its own: its pid takes signals, it
holds its locks, it can crash or be killed, it runs its own event loop, threads and children. What
it does not do is import the server anew, so a test about the process's own start (its imports,
its CPU or memory at start) starts it with ``fork=False`` (``procs.start_sidecar``), as does any
start whose environment differs from the zygote's outside ``MEMORY_SIDECAR_*`` and
``PYTEST_CURRENT_TEST`` (a variable read at import could make the imported modules differ).
``TESTS_EXEC_SIDECARS=1`` starts every sidecar of a run as a new interpreter. Only the test suite
forks (tests/conftest.py turns it on); the benchmarks measure new interpreters.

The child is the zygote's child, not the test process's: ``Forked`` answers what tests use of a
``subprocess.Popen`` (``pid``, ``poll``, ``wait``, ``send_signal``, ``kill``, ``returncode``) from
the exit statuses the zygote reaps and reports. Its CPU is counted in ``forked_cpu_s()`` when it is
reaped (``tests/support/cpu_times.py`` adds it to the children's).

The protocol is one JSON object a line: the test process writes ``{"argv", "env", "cwd", "log"}``
(and ``"err"``, a file of its own for the child's stderr, for a command whose output is read apart)
to the zygote's stdin and reads ``{"pid"}`` (or ``{"error"}``) back, and later ``{"exit": pid,
"code", "cpu"}`` for each child reaped. The zygote ends when its stdin closes (the test process
ends), killing children still running.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any, NoReturn

__all__ = ["UNUSABLE", "Forked", "fork_sidecar", "forkable", "forked_cpu_s"]

ROOT = Path(__file__).resolve().parents[2]
#: The environment variables a start may set differently from the zygote's: the sidecar reads its
#: own when it loads its settings, after the fork, never at import; pytest names the test running.
_FREE = ("MEMORY_SIDECAR_", "PYTEST_CURRENT_TEST")


# -- the zygote ----------------------------------------------------------------------------------
def _imports() -> None:
    """What ``memory-sidecar serve`` has imported by ready, imported as it does."""
    sys.modules.setdefault("rich", None)  # type: ignore[arg-type]  # sidecar.cli.main does this first
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # serve sets it before numpy's import
    import sidecar.cli
    import sidecar.http.connections
    import sidecar.http.guards
    import sidecar.server.app
    import sidecar.server.serve  # noqa: F401


def _warm() -> None:
    """What every sidecar does within a second of ready, done once here: the modules it imports
    then (the index's postings, the graph's extraction, the consolidation schedule, the file
    watcher) and the injection scanner's patterns, compiled on the first text it reads."""
    import watchfiles  # noqa: F401

    import sidecar.consolidate.schedule
    import sidecar.index.postings
    import sidecar.kg.extract
    import sidecar.scanner.scan

    with contextlib.suppress(Exception):  # a scanner that fails fails in the sidecar, where tests see it
        sidecar.scanner.scan.scan("A plain note: the office cat sleeps on the build server.")


def _send(message: dict[str, Any]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _exit_code(code: object) -> int:
    """The status ``raise SystemExit(code)`` gives a Python process."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _child(request: dict[str, Any], wakeup: tuple[int, int]) -> NoReturn:
    """In the forked child: become ``python -m sidecar ARGV`` and never return."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in wakeup:
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, path in ((1, request["log"]), (2, request.get("err", request["log"]))):
            log = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.dup2(log, fd)
            os.close(log)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [str(ROOT / "sidecar" / "__main__.py"), *request["argv"]]
        sys.path[0] = request["cwd"]  # as ``python -m`` puts the working dir first
    except BaseException:  # nothing to report to but the exit status
        os._exit(127)
    code = 1
    try:
        from sidecar.cli import main

        code = _exit_code(main())
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException:  # as the interpreter reports an uncaught exception
        sys.excepthook(*sys.exc_info())
    try:  # what the interpreter does at exit, in its order
        threading._shutdown()  # type: ignore[attr-defined]  # joins the non-daemon threads
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _reap(children: set[int]) -> None:
    while children:
        try:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            children.clear()
            return
        if pid == 0:
            return
        children.discard(pid)
        code = os.waitstatus_to_exitcode(status)
        _send({"exit": pid, "code": code, "cpu": usage.ru_utime + usage.ru_stime})


def serve_forks() -> None:
    """The zygote's main loop (``python -c 'from tests.support.zygote import serve_forks; ...'``)."""
    import select

    try:
        _imports()
        _warm()
    except BaseException as exc:
        _send({"error": f"the server's imports failed: {exc!r}"})
        return
    if threading.active_count() != 1:
        _send({"error": f"{threading.active_count()} threads after the imports: a fork would lose them"})
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.set_wakeup_fd(write_end)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    _send({"ready": os.getpid()})
    children: set[int] = set()
    pending = b""
    try:
        while True:
            ready, _, _ = select.select([0, read_end], [], [])
            if read_end in ready:
                os.read(read_end, 4096)
            _reap(children)
            if 0 not in ready:
                continue
            data = os.read(0, 1 << 16)
            if not data:
                return
            pending += data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(request, (read_end, write_end))
                children.add(pid)
                _send({"pid": pid})
    finally:
        for pid in children:  # the test process is gone: nothing will stop these
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


# -- the test process's side -----------------------------------------------------------------------
class _Zygote:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self._lock = threading.Lock()
        self._started: queue.Queue[dict[str, Any]] = queue.Queue()
        self._exited: dict[int, int] = {}
        self._changed = threading.Condition()
        self.cpu_s = 0.0
        code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.support.zygote import serve_forks; serve_forks()"
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in: IO[bytes] = self._proc.stdin
        first = json.loads(self._proc.stdout.readline() or b'{"error": "the zygote exited"}')
        if "error" in first:
            self._proc.wait(timeout=30)
            raise RuntimeError(first["error"])
        threading.Thread(target=self._read, args=(self._proc.stdout,), name="zygote-reader", daemon=True).start()

    def _read(self, out: IO[bytes]) -> None:
        for line in out:
            message = json.loads(line)
            if "exit" in message:
                with self._changed:
                    self._exited[message["exit"]] = message["code"]
                    self.cpu_s += message["cpu"]
                    self._changed.notify_all()
            else:
                self._started.put(message)
        with self._changed:  # the zygote is gone: so are its children
            self._changed.notify_all()

    def spawn(self, argv: list[str], env: dict[str, str], log: Path, err: Path | None = None) -> Forked:
        request = {"argv": argv, "env": env, "cwd": os.getcwd(), "log": str(log)}
        if err is not None:
            request["err"] = str(err)
        with self._lock:
            self._in.write((json.dumps(request) + "\n").encode())
            self._in.flush()
            answer = self._started.get(timeout=60)
        if "pid" not in answer:
            raise RuntimeError(f"the zygote did not fork: {answer}")
        return Forked(self, answer["pid"], [sys.executable, "-m", "sidecar", *argv])

    def returncode(self, pid: int) -> int | None:
        with self._changed:
            return self._exited.get(pid)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._exited or self._proc.poll() is not None, timeout)
            return self._exited.get(pid)

    def close(self) -> None:
        try:
            self._in.close()
        finally:
            self._proc.wait(timeout=60)


class Forked:
    """What the tests use of a ``subprocess.Popen``, for a sidecar the zygote forked."""

    def __init__(self, zygote: _Zygote, pid: int, args: list[str]) -> None:
        self._zygote = zygote
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._zygote.returncode(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._zygote.wait(self.pid, timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):  # exited, not reaped yet
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


#: This process's zygote, once made.
_ZYGOTE: dict[str, _Zygote] = {}
_ZYGOTE_LOCK = threading.Lock()
#: Why this process's zygote could not be made (its imports failed, or left a thread running): its
#: sidecars are then started as new interpreters.
UNUSABLE: list[str] = []


def forkable(env: dict[str, str]) -> bool:
    """Whether a sidecar with environment ``env`` can be forked from the zygote: forking is not
    turned off, and ``env`` differs from the zygote's only in ``MEMORY_SIDECAR_*`` variables and
    the name of the test running."""
    if os.environ.get("TESTS_EXEC_SIDECARS", "") not in ("", "0") or UNUSABLE:
        return False
    base = _ZYGOTE["made"].env if _ZYGOTE else _zygote_env()
    keys = {k for k in set(env) | set(base) if not k.startswith(_FREE)}
    return all(env.get(k) == base.get(k) for k in keys)


def _zygote_env() -> dict[str, str]:
    return {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}


def fork_sidecar(argv: list[str], env: dict[str, str], log: Path, err: Path | None = None) -> Forked | None:
    """``python -m sidecar ARGV`` with environment ``env`` and its output appended to ``log`` (its
    stderr to ``err`` when given), forked from this process's zygote (made on first use); None when
    no zygote could be made (why is kept in ``UNUSABLE``, and the caller starts a new interpreter,
    which fails as it would)."""
    with _ZYGOTE_LOCK:
        if UNUSABLE:
            return None
        if not _ZYGOTE:
            try:
                _ZYGOTE["made"] = _Zygote({k: v for k, v in _zygote_env().items() if not k.startswith(_FREE)})
            except RuntimeError as exc:
                UNUSABLE.append(str(exc))
                return None
            atexit.register(_ZYGOTE["made"].close)
        zygote = _ZYGOTE["made"]
    return zygote.spawn(argv, env, log, err)


def forked_cpu_s() -> float:
    """CPU seconds of the forked sidecars reaped so far (they are not this process's children)."""
    return _ZYGOTE["made"].cpu_s if _ZYGOTE else 0.0
