"""An append is chunked from the file's last heading section on, on a real index: after every one
of the repository's benign memory notes appended to one note (headings, lists, fences, tables), the
file's chunk rows are exactly a whole chunking of the file, the chunks before the last section keep
their rows, the in-memory postings and FTS5 find the appended words, and the chunker reads a small
part of what chunking the whole file each time reads. Anything but an append is chunked whole."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.index.chunker import chunk_markdown
from sidecar.index.tier_index import INDEX_NAME, TierIndex
from tests.support.corpus import benign_notes

REL = "daily/2026-03-02.md"


def rows(root: Path, rel: str) -> list[tuple[int, int, str, str, int, int]]:
    with sqlite3.connect(root / INDEX_NAME) as db:
        return db.execute(
            "SELECT ord, id, heading, body, line_start, line_end FROM chunks WHERE path = ? ORDER BY ord", (rel,)
        ).fetchall()


def whole(text: str) -> list[tuple[int, str, str, int, int]]:
    return [(i, c.heading, c.body, c.line_start, c.line_end) for i, c in enumerate(chunk_markdown(text))]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[TierIndex]:
    (tmp_path / "memory" / "daily").mkdir(parents=True)
    ix = TierIndex(tmp_path / "memory")
    ix.open(postings=True)
    yield ix
    ix.close()


@pytest.mark.slow
def test_appends_are_chunked_from_the_last_section(index: TierIndex) -> None:
    file = index.root / REL
    notes = benign_notes()
    chunked_whole = 0  # the lines chunking the whole file each time would read
    for n, note in enumerate(notes):
        before = rows(index.root, REL)
        with file.open("a", encoding="utf-8") as fh:
            fh.write(note + f"marker{n}x\n")
        text = file.read_text(encoding="utf-8")
        chunked_whole += len(text.splitlines())
        index.apply_paths([REL])
        after = rows(index.root, REL)
        assert [r[:1] + r[2:] for r in after] == whole(text), n
        # The rows of the chunks that did not change are the same rows (their ids kept).
        kept = {r[0]: r[1] for r in before}
        assert sum(1 for r in after if kept.get(r[0]) == r[1]) >= len(before) - 2, n
        if n % 40 == 0:
            assert index.search_postings(f"marker{n}x", 5, phrases=False) is not None
            assert [h.path for h in index.search(f"marker{n}x", 5)] == [REL]
    lines = len(file.read_text(encoding="utf-8").splitlines())
    # These notes have few headings, so the last section is long: 50,283 lines against 176,893.
    assert index.sync.lines_chunked < chunked_whole / 3, (index.sync.lines_chunked, chunked_whole, lines)


@pytest.mark.parametrize("change", ["edit before the end", "last heading run on", "truncated and regrown"])
def test_what_is_not_an_append_is_chunked_whole(index: TierIndex, change: str) -> None:
    file = index.root / REL
    first = "# Day\n\n## Deploy\nrolled back the api\n\n## Review\nasked for an index\n"
    file.write_text(first + ("## Revi" if change == "last heading run on" else ""), encoding="utf-8")
    index.apply_paths([REL])
    chunked = index.sync.lines_chunked
    second = {
        "edit before the end": first.replace("rolled back", "redeployed") + "more review notes\n",
        "last heading run on": first + "## Review of the queue\nthe worker retries\n",
        "truncated and regrown": "# Day\n\n## Other\n" + "x" * len(first) + "\n",
    }[change]
    file.write_text(second, encoding="utf-8")
    index.apply_paths([REL])
    assert [r[:1] + r[2:] for r in rows(index.root, REL)] == whole(second)
    read = index.sync.lines_chunked - chunked
    if change == "last heading run on":  # an append: chunked again from its last section
        assert read == len(second.splitlines()) - 7
    else:
        assert read == len(second.splitlines())
