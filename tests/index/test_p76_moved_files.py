"""A note moved with the same bytes (consolidation moves ``daily/X.md`` to ``archive/daily/X.md``)
takes its chunk rows to the new path without being chunked again, on a real index and real files:
the same rows (and hashes, the vectors' keys) under new ids, the ids chunking the file again would
give (a tie in BM25 keeps id order, so search answers as before); the in-memory postings and FTS5
find it at the new path and no longer at the old one. Whether the reindex queue reconciles the
tier (after a run) or applies the two paths (a watcher's events), the index is as a whole
chunking of the files would make it. A file that changed on the way is chunked again."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sidecar.index.chunker import chunk_markdown
from sidecar.index.sync import ReconcileResult
from sidecar.index.tier_index import INDEX_NAME, TierIndex

OLD = "daily/2026-03-02.md"
NEW = "archive/daily/2026-03-02.md"
NOTE = (
    "# 2026-03-02\n\n## Log\n- Deployed the zanzibar gateway to staging.\n- Lunch with Priya.\n\n"
    "## Decisions\n- Keep the quokka cache at 20 minutes.\n- Invoices go out on Fridays.\n"
)
OTHER = "# 2026-03-03\n\n## Log\n- Reviewed the budget.\n"

Apply = Callable[[TierIndex], ReconcileResult]


def max_id(root: Path) -> int:
    with sqlite3.connect(root / INDEX_NAME) as db:
        return int(db.execute("SELECT MAX(id) FROM chunks").fetchone()[0])


def rows(root: Path, rel: str) -> list[tuple[int, int, str, str, int, int, str]]:
    with sqlite3.connect(root / INDEX_NAME) as db:
        return db.execute(
            "SELECT id, ord, heading, body, line_start, line_end, hash FROM chunks WHERE path = ? ORDER BY ord", (rel,)
        ).fetchall()


def files(root: Path) -> dict[str, str]:
    with sqlite3.connect(root / INDEX_NAME) as db:
        return dict(db.execute("SELECT path, hash FROM files"))


def whole(text: str) -> list[tuple[int, str, str, int, int]]:
    return [(i, c.heading, c.body, c.line_start, c.line_end) for i, c in enumerate(chunk_markdown(text))]


def found(index: TierIndex, word: str) -> tuple[list[str], list[str]]:
    """The paths the in-memory postings and FTS5 give for ``word``."""
    postings = index.search_postings(word, 10, phrases=False)
    assert postings is not None  # the postings follow the index: no rebuild pending
    return [h.path for h in postings], [h.path for h in index.search(word, 10, raw_fts=True)]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[TierIndex]:
    root = tmp_path / "memory"
    (root / "daily").mkdir(parents=True)
    (root / OLD).write_text(NOTE, encoding="utf-8")
    (root / "daily" / "2026-03-03.md").write_text(OTHER, encoding="utf-8")
    ix = TierIndex(root)
    ix.open(postings=True)
    yield ix
    ix.close()


def move(root: Path, old: str, new: str) -> None:
    (root / new).parent.mkdir(parents=True, exist_ok=True)
    os.replace(root / old, root / new)


def reconcile(index: TierIndex) -> ReconcileResult:
    return index.reconcile()


def apply_both(index: TierIndex) -> ReconcileResult:
    return index.apply_paths([OLD, NEW])


def apply_new_first(index: TierIndex) -> ReconcileResult:
    return index.apply_paths([NEW, OLD])


@pytest.mark.parametrize("apply", [reconcile, apply_both, apply_new_first])
def test_a_note_moved_as_it_is_keeps_its_chunk_rows(index: TierIndex, apply: Apply) -> None:
    before = rows(index.root, OLD)
    assert before and found(index, "quokka") == ([OLD], [OLD])
    other = rows(index.root, "daily/2026-03-03.md")
    lines = index.sync.lines_chunked
    last = max_id(index.root)  # the other note's, inserted after this one's
    move(index.root, OLD, NEW)
    result = apply(index)
    assert (result.added, result.updated, result.removed) == ([NEW], [], [OLD])
    after = rows(index.root, NEW)
    assert [r[1:] for r in after] == [r[1:] for r in before]  # the same rows and hashes (the same vectors)
    assert [r[0] for r in after] == list(range(last + 1, last + 1 + len(before)))  # as chunking gives them
    assert rows(index.root, OLD) == []
    assert [r[1:6] for r in before] == whole(NOTE)
    assert index.sync.lines_chunked == lines  # nothing chunked again
    assert sorted(files(index.root)) == [NEW, "daily/2026-03-03.md"]
    assert rows(index.root, "daily/2026-03-03.md") == other
    assert found(index, "quokka") == ([NEW], [NEW])
    assert found(index, "zanzibar") == ([NEW], [NEW])
    # The index reads as a fresh one would: nothing left for a reconcile to do.
    assert index.reconcile().changed == []


def test_an_append_after_the_move_is_chunked_from_its_last_section(index: TierIndex) -> None:
    move(index.root, OLD, NEW)
    index.reconcile()
    lines = index.sync.lines_chunked
    with (index.root / NEW).open("a", encoding="utf-8") as fh:
        fh.write("- Late note about the wombat rota.\n")
    index.apply_paths([NEW])
    text = (index.root / NEW).read_text(encoding="utf-8")
    assert [r[1:6] for r in rows(index.root, NEW)] == whole(text)
    assert index.sync.lines_chunked - lines < len(text.splitlines())  # the last section only
    assert found(index, "wombat") == ([NEW], [NEW])


def test_a_note_changed_on_the_way_is_chunked_again(index: TierIndex) -> None:
    before = {r[0] for r in rows(index.root, OLD)}
    (index.root / "archive" / "daily").mkdir(parents=True)
    (index.root / NEW).write_text(NOTE + "- Added when it was archived.\n", encoding="utf-8")
    (index.root / OLD).unlink()
    result = index.reconcile()
    assert (result.added, result.removed) == ([NEW], [OLD])
    after = rows(index.root, NEW)
    assert [r[1:6] for r in after] == whole((index.root / NEW).read_text(encoding="utf-8"))
    assert not before & {r[0] for r in after}
    assert found(index, "quokka") == ([NEW], [NEW])


def test_two_notes_with_the_same_bytes_each_keep_rows_of_their_own(index: TierIndex) -> None:
    lines = index.sync.lines_chunked
    twin = "daily/2026-03-04.md"
    (index.root / twin).write_text(NOTE, encoding="utf-8")
    index.reconcile()
    twin_rows = rows(index.root, twin)
    old_rows = rows(index.root, OLD)
    move(index.root, OLD, NEW)
    result = index.reconcile()
    assert (result.added, result.removed) == ([NEW], [OLD])
    assert [r[1:] for r in rows(index.root, NEW)] == [r[1:] for r in old_rows]
    assert rows(index.root, twin) == twin_rows
    assert sorted(found(index, "quokka")[1]) == sorted([NEW, twin])
    assert index.sync.lines_chunked == lines + len(NOTE.splitlines())  # the twin, not the moved note


def test_a_note_copied_rather_than_moved_is_indexed_under_both_paths(index: TierIndex) -> None:
    old_rows = rows(index.root, OLD)
    (index.root / "archive" / "daily").mkdir(parents=True)
    (index.root / NEW).write_bytes((index.root / OLD).read_bytes())
    result = index.apply_paths([OLD, NEW])
    assert (result.added, result.removed) == ([NEW], [])
    assert rows(index.root, OLD) == old_rows
    assert [r[1:6] for r in rows(index.root, NEW)] == whole(NOTE)
    assert sorted(found(index, "quokka")[1]) == sorted([NEW, OLD])
