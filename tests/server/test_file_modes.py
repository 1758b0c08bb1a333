"""Memory is private to the sidecar's user whatever the umask: tier dirs and the directories a
write makes are 0700, memory files, the lock and the databases (with their WAL and shared-memory
files) 0600. A real server in process, real files, under umask 000."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.memory import ClientFactory, write


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 000 for the test: every mode the sidecar gets, it sets itself."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


async def test_what_the_sidecar_creates_is_private_under_umask_000(
    sidecar_client: ClientFactory, tmp_path: Path, open_umask: None
) -> None:
    memory = tmp_path / "memory"  # does not exist yet: the sidecar makes it
    client = await sidecar_client()
    resp = await client.post("/memory/write", json={"path": "topics/deploys/canary.md", "content": "- green first"})
    assert resp.status == 201
    resp = await client.post(
        "/journal", json={"workspace_id": "w", "agent_id": "a", "entry_type": "note", "summary": "x"}
    )
    assert resp.status == 201
    dirs = [memory, memory / "topics", memory / "topics" / "deploys"]
    assert {d.name: oct(mode(d)) for d in dirs} == {d.name: "0o700" for d in dirs}
    files = [memory / "topics" / "deploys" / "canary.md", memory / ".sidecar.lock"]
    files += [p for p in memory.iterdir() if p.name.startswith(("index.sqlite", "journal.sqlite"))]
    assert {p.name for p in files} >= {"index.sqlite", "index.sqlite-wal", "journal.sqlite", "journal.sqlite-wal"}
    assert {p.name: oct(mode(p)) for p in files} == {p.name: "0o600" for p in files}


async def test_an_existing_file_is_made_private_by_a_write_and_old_databases_at_start(
    sidecar_client: ClientFactory, memory_dir: Path, open_umask: None
) -> None:
    (memory_dir / "AGENT.md").chmod(0o644)
    write(memory_dir, "index.sqlite", "")
    (memory_dir / "index.sqlite").chmod(0o644)
    client = await sidecar_client()
    assert oct(mode(memory_dir / "index.sqlite")) == "0o600"
    resp = await client.post("/memory/write", json={"path": "AGENT.md", "content": "- private now"})
    assert resp.status == 201
    assert oct(mode(memory_dir / "AGENT.md")) == "0o600"
