"""The tier index on real files and real SQLite."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from sidecar.errors import BadRequest
from sidecar.index.db import chunks_gen
from sidecar.index.tier_index import INDEX_NAME, Cancelled, TierIndex
from tests.support.memory import write


def paths(index: TierIndex, query: str) -> list[str]:
    return [h.path for h in index.search(query, 10)]


@pytest.fixture
def index(memory_dir: Path) -> TierIndex:
    ix = TierIndex(memory_dir)
    assert ix.open() == "created"
    yield ix
    ix.close()


def test_words_find_their_chunk(index: TierIndex) -> None:
    hits = index.search("invoices cursor", 10)
    assert hits[0].path == "daily/2026-05-14.md"
    assert hits[0].heading == "2026-05-14 > Incident"
    assert (hits[0].line_start, hits[0].line_end) == (4, 4)
    assert "invoices" in hits[0].snippet


def test_heading_hit_outranks_body_hit(memory_dir: Path) -> None:
    write(memory_dir, "topics/a.md", "# Rollback\nsteps are in the runbook\n")
    write(memory_dir, "topics/b.md", "# Runbook\nwe rollback by redeploying the previous tag\n")
    ix = TierIndex(memory_dir)
    ix.open()
    hits = ix.search("rollback", 10)
    assert [h.path for h in hits[:2]] == ["topics/a.md", "topics/b.md"]
    assert hits[0].score > hits[1].score
    ix.close()


def test_porter_stemming_and_diacritics(index: TierIndex, memory_dir: Path) -> None:
    write(memory_dir, "AGENT.md", "# Notes\nThe café deploys nightly.\n")
    index.reconcile()
    assert paths(index, "deploying cafe") == ["AGENT.md"]


def test_edits_and_deletions_are_reflected_after_reconcile(index: TierIndex, memory_dir: Path) -> None:
    assert paths(index, "screenshot") == ["AGENT.md"]
    write(memory_dir, "AGENT.md", "# Identity\nnothing about images any more\n")
    (memory_dir / "daily/2026-05-14.md").unlink()
    result = index.reconcile()
    assert result.updated == ["AGENT.md"] and result.removed == ["daily/2026-05-14.md"]
    assert paths(index, "screenshot") == []
    assert paths(index, "invoices") == []
    assert paths(index, "images") == ["AGENT.md"]
    assert index.status()["files"] == 1


def test_unchanged_files_are_not_touched(index: TierIndex, memory_dir: Path) -> None:
    before = index.writer.execute("SELECT id FROM chunks ORDER BY id").fetchall()
    agent = memory_dir / "AGENT.md"
    os.utime(agent, ns=(agent.stat().st_atime_ns, agent.stat().st_mtime_ns + 10**9))  # touch, same bytes
    result = index.reconcile()
    assert result.changed == [] and result.unchanged == 2
    assert index.writer.execute("SELECT id FROM chunks ORDER BY id").fetchall() == before


def test_only_md_files_outside_hidden_names_are_indexed(index: TierIndex, memory_dir: Path) -> None:
    write(memory_dir, "notes.txt", "zebra")
    write(memory_dir, ".AGENT.md.tmp", "# x\nzebra")
    write(memory_dir, ".hidden/x.md", "zebra")
    write(memory_dir, "deep/er/z.md", "zebra")
    index.reconcile()
    assert paths(index, "zebra") == ["deep/er/z.md"]


def test_symlink_out_of_the_tier_is_not_indexed(index: TierIndex, memory_dir: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere", "secret.md", "# s\nplatypus\n")
    (memory_dir / "link.md").symlink_to(outside)
    index.reconcile()
    assert paths(index, "platypus") == []


def results(index: TierIndex) -> list[tuple[str, int, float]]:
    return [(h.path, h.line_start, round(h.score, 6)) for h in index.search("postgres database memory", 10)]


def test_deleted_index_is_rebuilt_with_the_same_results(memory_dir: Path) -> None:
    first = TierIndex(memory_dir)
    first.open()
    expected = results(first)
    first.close()
    (memory_dir / INDEX_NAME).unlink()
    again = TierIndex(memory_dir)
    assert again.open() == "created"
    assert results(again) == expected
    again.close()


@pytest.mark.parametrize("damage", ["garbage", "truncate", "fts_shadow"])
def test_corrupt_index_is_rebuilt_with_the_same_results(memory_dir: Path, damage: str) -> None:
    first = TierIndex(memory_dir)
    first.open()
    expected = results(first)
    first.close()
    db = memory_dir / INDEX_NAME
    if damage == "garbage":
        db.write_bytes(b"this is not a database" * 100)
    elif damage == "truncate":
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 3])
    else:
        conn = sqlite3.connect(db)
        conn.execute("DELETE FROM chunks_fts_data WHERE id > 10")
        conn.commit()
        conn.close()
    again = TierIndex(memory_dir)
    assert again.open().startswith("rebuilt")
    assert results(again) == expected
    assert again.status()["integrity"].startswith("rebuilt")
    again.close()


def test_index_deleted_while_open_is_recovered(index: TierIndex, memory_dir: Path) -> None:
    expected = results(index)
    for suffix in ("", "-wal", "-shm"):
        Path(str(memory_dir / INDEX_NAME) + suffix).unlink(missing_ok=True)
    assert index.recover_if_lost() is True
    assert results(index) == expected


def test_a_rebuilt_index_numbers_its_generation_past_the_postings_it_replaces(
    index: TierIndex, memory_dir: Path
) -> None:
    """A search that took the postings of the old file as the rebuilt one replaced it meets another
    generation in the new file, and FTS5 answers it: never the old postings' chunk ids read
    against the new file's rows."""
    index.enable_postings()
    old = index.postings.snapshot
    assert old is not None
    for suffix in ("", "-wal", "-shm"):
        Path(str(memory_dir / INDEX_NAME) + suffix).unlink(missing_ok=True)
    assert index.recover_if_lost() is True
    gen = chunks_gen(index.writer)
    assert gen is not None and gen > old.gen, (gen, old.gen)
    assert index.postings.snapshot is not None and index.postings.snapshot.gen == gen
    words = ["postgres"]
    assert index.bm25.from_snapshot(old, words, index.bm25.query_tokens(words), 10) is None


def test_cancelled_rebuild_keeps_the_previous_index(index: TierIndex, memory_dir: Path) -> None:
    expected = results(index)
    write(memory_dir, "more.md", "# More\npostgres again\n")
    calls = iter(range(100))

    def cancel() -> bool:
        return next(calls) >= 1  # let the first file through, then stop

    with pytest.raises(Cancelled):
        index.rebuild(cancel)
    assert results(index) == expected


def test_readers_see_the_old_index_during_a_rebuild(index: TierIndex, memory_dir: Path) -> None:
    expected = results(index)
    seen: list[list[tuple[str, int, float]]] = []

    def cancel() -> bool:
        seen.append(results(index))  # a reader query in the middle of the rebuild transaction
        return False

    index.rebuild(cancel)
    assert seen and all(s == expected for s in seen)


def test_raw_fts_syntax_is_opt_in_and_its_errors_are_400(index: TierIndex) -> None:
    assert paths(index, "screensh*") == []
    assert [h.path for h in index.search("screensh*", 10, raw_fts=True)] == ["AGENT.md"]
    with pytest.raises(BadRequest):
        index.search('"unbalanced', 10, raw_fts=True)


def test_status_counts(index: TierIndex, memory_dir: Path) -> None:
    status = index.status()
    size = sum(p.stat().st_size for p in memory_dir.rglob("*.md"))
    assert (status["files"], status["bytes"]) == (2, size)
    assert status["chunks"] == 6  # 3 sections + the bare date heading + 2 sections
    assert status["integrity"] == "created"


def test_rebuild_keeps_the_fts_index_consistent_and_the_delete_trigger(index: TierIndex, memory_dir: Path) -> None:
    index.rebuild()
    index.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")  # raises if not
    assert index.writer.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_ad'").fetchone() == (1,)
    (memory_dir / "daily/2026-05-14.md").unlink()
    index.reconcile()
    assert paths(index, "invoices") == []
    index.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")


def _rows(ix: TierIndex) -> dict[tuple[str, int], tuple[int, str, str, int, int, str]]:
    sql = "SELECT path, ord, id, heading, body, line_start, line_end, hash FROM chunks"
    return {(r[0], r[1]): r[2:] for r in ix.writer.execute(sql)}


def test_an_edit_rewrites_only_the_chunks_that_changed(tmp_path: Path) -> None:
    root = tmp_path / "m"
    text = "# Day\n\n## Morning\n\nstandup notes\n\n## Noon\n\nlunch with the infra team\n"
    write(root, "daily/d.md", text)
    ix = TierIndex(root)
    ix.open(postings=True)
    before = _rows(ix)
    with (root / "daily/d.md").open("a", encoding="utf-8") as f:
        f.write("\n## Evening\n\nthe deploy went out\n")
    ix.apply_paths(["daily/d.md"])
    after = _rows(ix)
    kept = [k for k in before if k in after and after[k][0] == before[k][0]]
    assert kept and len(after) == len(before) + 1, (before, after)
    assert all(after[k] == before[k] for k in kept)  # untouched rows, same ids
    snap = ix.postings.snapshot
    assert snap is not None and snap.delta_slots == len(after) - len(kept)
    assert [h.heading for h in ix.search("deploy")] == ["Day > Evening"]
    # An edit near the top moves every later chunk's lines: those are rewritten too.
    (root / "daily/d.md").write_text("# Day\n\nintro line\n\n" + (root / "daily/d.md").read_text()[6:])
    ix.apply_paths(["daily/d.md"])
    # Whatever was kept, the table is exactly what indexing the file from scratch gives.
    fresh = TierIndex(tmp_path / "copy")
    write(tmp_path / "copy", "daily/d.md", (root / "daily/d.md").read_text())
    fresh.open()
    mine = {k: v[1:] for k, v in _rows(ix).items()}
    assert mine == {k: v[1:] for k, v in _rows(fresh).items()}
    assert ix.writer.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')").fetchall() == []
    fresh.close()
    ix.close()


@pytest.mark.slow
def test_readers_survive_the_writer_closing_their_connections(tmp_path: Path) -> None:
    """A rebuild from the files (lost or corrupt index) closes every reader connection; a reader
    in the middle of a statement must finish first (this crashed the process with SIGSEGV)."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "tests.support.race_stress", str(tmp_path / "m"), "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    line = proc.stdout.strip().splitlines()[-1].split()
    assert int(line[1]) >= 5 and int(line[3]) > 100, line  # it rebuilt while searches ran


def test_idle_release_shrinks_reader_caches_but_never_one_in_use(index: TierIndex) -> None:
    import threading

    index.search("postgres")  # this thread now has a reader connection
    assert index.release_reader_memory() == 1
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with index.db.reading():
            held.set()
            done.wait(60)

    worker = threading.Thread(target=hold)
    worker.start()
    assert held.wait(60)
    try:
        assert index.release_reader_memory() == 1  # ours; the one in use is left alone
    finally:
        done.set()
        worker.join()
    assert index.release_reader_memory() == 2


def test_a_rewrite_with_the_same_size_and_mtime_is_seen_by_reconcile(tmp_path: Path) -> None:
    """File times tick at a coarse clock: two versions of one size written within one tick share
    an mtime (the crash campaign met it: a version written and the writer killed before indexing
    it). A file indexed that soon after its write is hashed again by the next reconcile."""
    root = tmp_path / "m"
    path = write(root, "daily/d.md", "# Day\n\nversion one of the note\n")
    ix = TierIndex(root)
    ix.open()
    st = path.stat()
    path.write_text("# Day\n\nversion two of the note\n", encoding="utf-8")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same tick
    assert path.stat().st_size == st.st_size
    ix.reconcile()
    assert [h.path for h in ix.search("two")] == ["daily/d.md"]
    assert ix.search("one") == []
    ix.close()


def test_chunks_store_whether_their_snippet_text_is_plain(memory_dir: Path) -> None:
    """``chunks.plain`` is ``is_plain`` of the snippet source (body, or heading when the body is
    empty), and a snippet made with the flag is the snippet made without it."""
    from sidecar.index.snippet import is_plain, window

    write(memory_dir, "topics/ws.md", "# Spaced\n\nrunbook  with a double space\n\n# Tabbed\n\nrunbook\twith a tab\n")
    write(memory_dir, "topics/fine.md", "# Fine\n\nrunbook with\nsingle breaks\n\n# Heading only runbook\n")
    ix = TierIndex(memory_dir)
    ix.open()
    try:
        rows = ix.writer.execute("SELECT heading, body, plain FROM chunks").fetchall()
        assert {bool(p) for _, _, p in rows} == {True, False}, "expected both kinds in the fixture"
        for heading, body, plain in rows:
            assert bool(plain) == is_plain(body or heading), (heading, body)
            words = ["runbook"]
            assert window(body or heading, words, plain=bool(plain)) == window(body or heading, words)
        found = {h.path: h.snippet for h in ix.search("runbook", 20)}
        assert found["topics/ws.md"] in ("runbook with a double space", "runbook with a tab")
        assert found["topics/fine.md"] in (
            "runbook with single breaks",
            "Fine > Heading only runbook",
            "Heading only runbook",
        )
    finally:
        ix.close()


def test_migration_5_sets_plain_on_an_existing_index_without_retokenizing(memory_dir: Path) -> None:
    """An index made before migration 5 gets the flag for every chunk when it is opened, and the
    FTS5 table is left as it was (the update trigger no longer fires on the new column)."""
    from sidecar.index import db
    from sidecar.index.snippet import is_plain

    write(memory_dir, "topics/ws.md", "# Spaced\n\nrunbook  with a double space\n")
    path = memory_dir / INDEX_NAME
    old = sqlite3.connect(path, isolation_level=None)
    db.migrate(old, db.MIGRATIONS[:4])
    old.execute("INSERT INTO files VALUES ('topics/ws.md', 'x', 1, 1, 0)")
    old.execute(
        "INSERT INTO chunks (path, ord, heading, body, line_start, line_end, hash) VALUES "
        "('topics/ws.md', 0, 'Spaced', 'runbook  with a double space', 3, 3, 'h1'), "
        "('topics/ws.md', 1, 'Plain', 'runbook with\nlines', 4, 5, 'h2'), "
        "('topics/ws.md', 2, 'Heading only', '', 6, 6, 'h3')"
    )
    (segments_before,) = old.execute("SELECT count(*) FROM chunks_fts_data").fetchone()
    old.close()
    conn = db.connect_writer(path)
    try:
        assert db.migrate(conn) == len(db.MIGRATIONS)
        got = conn.execute("SELECT heading, body, plain FROM chunks ORDER BY ord").fetchall()
        (segments_after,) = conn.execute("SELECT count(*) FROM chunks_fts_data").fetchone()
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')")  # raises if out of step
    finally:
        conn.close()
    assert [(h, bool(p)) for h, _, p in got] == [("Spaced", False), ("Plain", True), ("Heading only", True)]
    assert all(bool(p) == is_plain(b or h) for h, b, p in got)
    assert segments_after == segments_before


def test_scan_tier_takes_md_files_and_links_inside_and_nothing_else(tmp_path: Path) -> None:
    """What a tier is made of, on an awkward tree: hidden names, a directory named like a file,
    a fifo, and symlinks that lead in, out, to a directory, and nowhere."""
    from sidecar.index.files import scan_tier

    root = tmp_path / "memory"
    (root / "a" / "b").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "dir.md").mkdir()
    (root / "a" / "one.md").write_text("1")
    (root / "a" / "b" / "two.md").write_text("22")
    (root / ".hidden" / "h.md").write_text("h")
    (root / ".dot.md").write_text("d")
    (root / "dir.md" / "in.md").write_text("in!")
    (root / "notes.txt").write_text("t")
    os.mkfifo(root / "fifo.md")
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (root / "out.md").symlink_to(outside)
    (root / "in-link.md").symlink_to(root / "a" / "one.md")
    (root / "linkdir").symlink_to(root / "a", target_is_directory=True)
    (root / "linkdir.md").symlink_to(root / "a", target_is_directory=True)
    (root / "dangling.md").symlink_to(root / "missing.md")
    found = {rel: st.size for rel, st in scan_tier(root).items()}
    assert found == {"a/one.md": 1, "a/b/two.md": 2, "dir.md/in.md": 3, "in-link.md": 1}
    assert all(st.rel == rel and st.mtime_ns > 0 for rel, st in scan_tier(root).items())
    assert scan_tier(tmp_path / "nowhere") == {}


def test_a_file_that_is_not_utf8_is_indexed_and_named_in_a_warning(index: TierIndex, memory_dir: Path) -> None:
    from structlog.testing import capture_logs

    (memory_dir / "topics").mkdir(exist_ok=True)
    (memory_dir / "topics" / "latin1.md").write_bytes("# Caf\xe9\n\nThe caf\xe9 opens at nine.\n".encode("latin-1"))
    with capture_logs() as logs:
        index.reconcile()
    warned = [e for e in logs if e["event"] == "index.not_utf8"]
    assert [(e["path"], e["offset"]) for e in warned] == [("topics/latin1.md", 5)]
    assert [h.path for h in index.search("opens nine", 5)] == ["topics/latin1.md"]
