"""An index's checks (``PRAGMA quick_check`` and FTS5's integrity check, each a read of the whole
file) run at every open unless the file is the one they last passed on and nothing wrote it since:
then the open remembers them (``index.sqlite-checked``). Real index files, real writes; the racy
window is left behind by moving the file's mtime into the past, as an index last written minutes
ago has it."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from sidecar.index.tier_index import CHECKED_SUFFIX, INDEX_NAME, TierIndex
from tests.support.memory import write


def _words(index: TierIndex) -> list[str]:
    return [hit.path for hit in index.search("invoices quarterly", 5)]


def _open(root: Path) -> TierIndex:
    index = TierIndex(root)
    index.open()
    return index


def _age(path: Path, seconds: int = 60) -> None:
    """Move the file's mtime into the past (its bytes untouched), out of the racy window."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 10**9))


def _old_notes(root: Path) -> None:
    """Memory files last written a minute ago: a reconcile finds them clean without writing (one
    written within the racy window is hashed and its entry written again)."""
    write(root, "daily/2026-05-14.md", "# Invoices\n\n- quarterly invoices go out on the 14th\n")
    write(root, "AGENT.md", "# Agent\n\n- keep notes short\n")
    for path in root.rglob("*.md"):
        _age(path)


def _remembered_index(root: Path) -> list[str]:
    """An index whose checks passed on the file as it is now, remembered; its answer."""
    _old_notes(root)
    first = _open(root)  # created: written, so nothing is remembered
    expected = _words(first)
    first.close()
    assert not Path(f"{root / INDEX_NAME}{CHECKED_SUFFIX}").exists()
    _age(root / INDEX_NAME)
    second = _open(root)
    assert second.checked == "checked"
    second.close()
    return expected


def test_an_unwritten_index_is_not_checked_again(memory_dir: Path) -> None:
    expected = _remembered_index(memory_dir)
    checked = Path(f"{memory_dir / INDEX_NAME}{CHECKED_SUFFIX}")
    assert stat.S_IMODE(checked.stat().st_mode) == 0o600  # it names the index file: private as the index
    again = _open(memory_dir)
    assert (again.checked, again.integrity) == ("remembered", "ok")
    assert _words(again) == expected
    again.close()
    assert _open(memory_dir).checked == "remembered"  # and stays so while nothing writes it


def test_any_write_to_the_index_and_its_checks_run_again(memory_dir: Path) -> None:
    expected = _remembered_index(memory_dir)
    conn = sqlite3.connect(memory_dir / INDEX_NAME)  # another program damages the FTS5 index
    conn.execute("DELETE FROM chunks_fts_data WHERE id > 1")
    conn.commit()
    conn.close()
    again = TierIndex(memory_dir)
    assert again.open().startswith("rebuilt")
    assert again.checked == "rebuilt"
    assert _words(again) == expected
    again.close()


def test_a_write_by_the_index_itself_forgets_the_checks(memory_dir: Path) -> None:
    _remembered_index(memory_dir)
    index = _open(memory_dir)
    assert index.checked == "remembered"
    write(memory_dir, "topics/new.md", "# New\n\n- a new note\n")
    index.reconcile()  # the index writes the new file's chunks
    index.close()
    assert not Path(f"{memory_dir / INDEX_NAME}{CHECKED_SUFFIX}").exists()
    assert _open(memory_dir).checked == "checked"


def test_a_touched_index_or_wal_frames_beside_it_are_checked(memory_dir: Path) -> None:
    _remembered_index(memory_dir)
    db = memory_dir / INDEX_NAME
    st = db.stat()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # same bytes, another mtime
    assert _open(memory_dir).checked == "checked"
    _remembered_index(memory_dir)
    held = sqlite3.connect(db)  # a writer that has not checkpointed: its frames are in the WAL
    held.execute("PRAGMA wal_autocheckpoint = 0")
    held.execute("CREATE TABLE IF NOT EXISTS scratch (x)")
    try:
        assert os.stat(f"{db}-wal").st_size > 0
        index = TierIndex(memory_dir)
        index.open()
        assert index.checked == "checked"
        index.db.close_connections()
    finally:
        held.close()


def test_checks_that_passed_within_the_racy_window_are_not_remembered(memory_dir: Path) -> None:
    """A file written in the clock tick its checks ran in could be written again, same size, same
    mtime: such a stamp is kept but not trusted."""
    _old_notes(memory_dir)
    _open(memory_dir).close()
    again = _open(memory_dir)  # the index file was written just now
    assert again.checked == "checked"
    again.close()
    assert Path(f"{memory_dir / INDEX_NAME}{CHECKED_SUFFIX}").exists()
    assert _open(memory_dir).checked == "checked"


def test_a_rebuild_forgets_the_checks(memory_dir: Path) -> None:
    _remembered_index(memory_dir)
    (memory_dir / INDEX_NAME).write_bytes(b"not a database" * 300)
    index = TierIndex(memory_dir)
    assert index.open().startswith("rebuilt")
    index.close()
    assert not Path(f"{memory_dir / INDEX_NAME}{CHECKED_SUFFIX}").exists()
