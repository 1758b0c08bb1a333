"""The one SQLite ``Database``: writes in submission order on one thread, readers that see what
was committed and nothing in flight, numbered migrations applied once, a crash part-way through
a migration leaving the version before it. Every test uses a real SQLite file; the crash is a
real process that dies inside the migration's transaction."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from sidecar.db import Database, schema_version
from sidecar.errors import TierMissing

LOG = "CREATE TABLE log (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, thread INTEGER NOT NULL);"
SEEDED = (LOG, "CREATE TABLE seeded (x INTEGER); INSERT INTO seeded VALUES (1);")


def _versions(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return [int(v) for (v,) in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
    finally:
        conn.close()


def _tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {str(n) for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        conn.close()


async def test_writes_run_on_one_thread_in_the_order_they_were_submitted(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.sqlite", (LOG,), name="t")
    await db.open()
    gate = threading.Event()
    try:
        held = asyncio.ensure_future(db.on_writer(lambda: gate.wait(30)))  # the writer is busy
        await asyncio.sleep(0)
        futures = [
            db.submit(lambda i=i: db.write_now(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (?, ?)",
                                                                   (i, threading.get_ident()))))
            for i in range(200)
        ]  # fmt: skip
        assert not any(f.done() for f in futures)  # queued behind the held write
        gate.set()
        await held
        await asyncio.gather(*map(asyncio.wrap_future, futures))
        rows = await db.read(lambda c: c.execute("SELECT n, thread FROM log ORDER BY id").fetchall())
    finally:
        gate.set()
        await db.aclose()
    assert [n for n, _ in rows] == list(range(200))
    assert len({t for _, t in rows}) == 1
    assert rows[0][1] != threading.get_ident()  # not the event loop's thread


async def test_a_reader_sees_what_was_committed_and_never_a_write_in_flight(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.sqlite", (LOG,), name="t")
    await db.open()
    inside, release = threading.Event(), threading.Event()

    def slow_insert(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO log (n, thread) VALUES (1, 0)")
        inside.set()
        release.wait(30)

    try:
        write = asyncio.ensure_future(db.write(slow_insert))
        assert await asyncio.to_thread(inside.wait, 30)
        count = "SELECT COUNT(*) FROM log"
        assert await db.read(lambda c: c.execute(count).fetchone()[0]) == 0  # not blocked, not seen
        release.set()
        await write
        assert await db.read(lambda c: c.execute(count).fetchone()[0]) == 1
    finally:
        release.set()
        await db.aclose()


async def test_a_write_that_raises_is_rolled_back_and_the_error_reaches_the_caller(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.sqlite", (LOG,), name="t")
    await db.open()

    def half(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO log (n, thread) VALUES (1, 0)")
        raise ValueError("half done")

    try:
        with pytest.raises(ValueError, match="half done"):
            await db.write(half)
        assert await db.read(lambda c: c.execute("SELECT COUNT(*) FROM log").fetchone()[0]) == 0
        await db.write(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (2, 0)"))  # still writable
        assert await db.read(lambda c: c.execute("SELECT n FROM log").fetchall()) == [(2,)]
    finally:
        await db.aclose()


async def test_readers_cannot_write(tmp_path: Path) -> None:
    db = Database(tmp_path / "t.sqlite", (LOG,), name="t")
    await db.open()
    try:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            await db.read(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (1, 0)"))
    finally:
        await db.aclose()


async def test_migrations_are_numbered_and_each_applied_once(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    for _ in range(2):
        db = Database(path, SEEDED, name="t")
        await db.open()
        await db.aclose()
    assert _versions(path) == [1, 2]
    grown = Database(path, (*SEEDED, "ALTER TABLE seeded ADD COLUMN y INTEGER NOT NULL DEFAULT 7;"), name="t")
    await grown.open()
    try:
        assert schema_version(grown.writer) == 3
        assert await grown.read(lambda c: c.execute("SELECT x, y FROM seeded").fetchall()) == [(1, 7)]
    finally:
        await grown.aclose()
    assert _versions(path) == [1, 2, 3]


async def test_a_migration_that_fails_leaves_the_version_before_it(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    broken = (LOG, "CREATE TABLE half (x INTEGER); INSERT INTO no_such_table VALUES (1);")
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        await Database(path, broken, name="t").open()
    assert _versions(path) == [1]
    assert "half" not in _tables(path)
    fixed = Database(path, (LOG, "CREATE TABLE half (x INTEGER);"), name="t")
    await fixed.open()
    await fixed.aclose()
    assert _versions(path) == [1, 2]


CRASHER = textwrap.dedent(
    """
    import asyncio, os, sys
    from pathlib import Path
    from sidecar.db import Database

    def crash(_: object) -> None:
        os._exit(3)  # the process dies inside the migration's transaction: no rollback, no close

    migrations = (
        "CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (1);",
        "CREATE TABLE lost (x INTEGER); INSERT INTO lost VALUES (1); UPDATE kept SET x = 2; SELECT crash(1);",
    )
    asyncio.run(Database(Path(sys.argv[1]), migrations, name="t", functions={"crash": crash}).open())
    """
)


async def test_a_process_killed_in_the_middle_of_a_migration_leaves_the_version_before_it(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    first = Database(path, ("CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (1);",), name="t")
    await first.open()
    await first.aclose()
    done = subprocess.run([sys.executable, "-c", CRASHER, str(path)], cwd=Path(__file__).parent.parent, check=False)
    assert done.returncode == 3
    assert _versions(path) == [1]
    assert "lost" not in _tables(path)
    again = Database(
        path,
        ("CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (1);", "CREATE TABLE lost (x INTEGER);"),
        name="t",
    )
    await again.open()
    try:
        assert await again.read(lambda c: c.execute("SELECT x FROM kept").fetchall()) == [(1,)]
    finally:
        await again.aclose()
    assert _versions(path) == [1, 2]


async def test_close_runs_what_was_queued_then_refuses_more(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    db = Database(path, (LOG,), name="t")
    await db.open()
    for i in range(50):  # queued, never awaited
        db.submit(lambda i=i: db.write_now(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (?, 0)", (i,))))
    await db.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        db.submit(lambda: None)
    conn = sqlite3.connect(path)
    try:
        assert [n for (n,) in conn.execute("SELECT n FROM log ORDER BY id")] == list(range(50))
    finally:
        conn.close()
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


async def test_the_file_is_private_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    old = os.umask(0o022)
    try:
        db = Database(path, (LOG,), name="t")
        await db.open()
        await db.write(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (1, 0)"))
    finally:
        os.umask(old)
    try:
        for name in (path, Path(f"{path}-wal")):
            assert stat.S_IMODE(name.stat().st_mode) == 0o600
    finally:
        await db.aclose()


async def test_a_file_replaced_under_it_is_followed_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "memory" / "t.sqlite"
    seen: list[Path] = []
    db = Database(path, (LOG,), name="t", on_replaced=seen.append)
    await db.open()
    try:
        await db.write(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (1, 0)"))
        assert await db.read(lambda c: c.execute("SELECT n FROM log").fetchall()) == [(1,)]
        for suffix in ("", "-wal", "-shm"):  # the memory dir restored from an empty backup
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        await db.write(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (2, 0)"))
        assert seen == [path]
        assert await db.read(lambda c: c.execute("SELECT n FROM log").fetchall()) == [(2,)]  # the new file
        assert _versions(path) == [1]
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.parent.rename(tmp_path / "elsewhere")
        with pytest.raises(TierMissing):  # a dir that is gone is not recreated
            await db.write(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (3, 0)"))
    finally:
        await db.aclose()


def test_a_single_threaded_caller_starts_no_thread(tmp_path: Path) -> None:
    before = threading.active_count()
    db = Database(tmp_path / "t.sqlite", (LOG,), name="t")
    db.connect()
    db.write_now(lambda c: c.execute("INSERT INTO log (n, thread) VALUES (1, 0)"))
    assert db.read_now(lambda c: c.execute("SELECT n FROM log").fetchall()) == [(1,)]
    assert threading.active_count() == before
    db.close()
    with pytest.raises(RuntimeError, match="not open"):
        _ = db.writer
