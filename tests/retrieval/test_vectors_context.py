"""``VectorIndex.context`` under writes: a write re-reads the neighbours and turns of the files it
changed and keeps every other file's, and what it answers is what a fresh index would."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from sidecar.index.tier_index import TierIndex
from sidecar.retrieval.vectors import VectorIndex
from tests.support.memory import write

REACH = 2

NOTES = "# Garden\n\n## Roses\nPrune in March.\n\n## Beans\nSow in May.\n\n## Mint\nKeep it in a pot.\n"
CALL = (
    "# Call\n\n## Ana\nShall we paint the hall?\n\n## Ben\nBlue, I think.\n\n## Ana\nBlue it is.\n\n"
    "## Ben\nSaturday then.\n"
)


@pytest.fixture
def index(memory_dir: Path) -> Iterator[TierIndex]:
    ix = TierIndex(memory_dir)
    ix.open()
    yield ix
    ix.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The chunk ids whose neighbours and turns were read from the index (observation only)."""
    seen: list[int] = []
    read = VectorIndex._read_context

    def counted(conn: object, chunk_ids: Sequence[int], reach: int) -> object:
        seen.extend(chunk_ids)
        return read(conn, chunk_ids, reach)  # type: ignore[arg-type]

    monkeypatch.setattr(VectorIndex, "_read_context", staticmethod(counted))
    return seen


def ids_of(index: TierIndex, rel: str) -> list[int]:
    return [cid for (cid,) in index.writer.execute("SELECT id FROM chunks WHERE path = ? ORDER BY ord", (rel,))]


def fresh_context(index: TierIndex, chunk_ids: Sequence[int]) -> object:
    other = VectorIndex(index.path)
    try:
        return other.context(chunk_ids, REACH)
    finally:
        other.close()


def test_a_write_rereads_its_own_files_context_and_keeps_the_others(index: TierIndex, reads: list[int]) -> None:
    write(index.root, "topics/garden.md", NOTES)
    write(index.root, "daily/2026-05-11.md", CALL)
    index.apply_paths(["topics/garden.md", "daily/2026-05-11.md"])
    garden, call = ids_of(index, "topics/garden.md"), ids_of(index, "daily/2026-05-11.md")
    vi = VectorIndex(index.path)
    before = vi.context(garden + call, REACH)
    assert sorted(reads) == sorted(garden + call) and before[1], "the call's turns are read"
    reads.clear()

    # A section inserted after Roses: the chunks before it keep their ids and get a new neighbour.
    write(index.root, "topics/garden.md", NOTES.replace("## Beans", "## Leeks\nThin in June.\n\n## Beans"))
    index.apply_paths(["topics/garden.md"])
    moved = ids_of(index, "topics/garden.md")
    asked = list(dict.fromkeys(garden + moved + call))
    after = vi.context(asked, REACH)
    assert set(garden) & set(moved), "some of the file's chunks kept their ids"
    assert set(reads) == set(garden) | set(moved), "the written file is read again, the other one is not"
    assert after == fresh_context(index, asked)
    assert after[0][garden[0]] != before[0][garden[0]]
    reads.clear()
    assert vi.context(asked, REACH) == after and not reads, "within a generation nothing is read twice"

    # The call goes away: its chunks have no neighbours or turns any more.
    (index.root / "daily/2026-05-11.md").unlink()
    index.apply_paths(["daily/2026-05-11.md"])
    gone = vi.context(asked, REACH)
    # The call's chunks, and the garden's that left the index (an absent chunk is asked again).
    assert set(reads) == set(call) | (set(garden) - set(moved))
    assert gone == fresh_context(index, asked) and not gone[1]
    vi.close()


def test_a_file_written_back_as_it_was_is_read_again(index: TierIndex, reads: list[int]) -> None:
    """The same content again does not mean the same chunks: those after an edit got new ids."""
    write(index.root, "topics/garden.md", NOTES)
    index.apply_paths(["topics/garden.md"])
    first = ids_of(index, "topics/garden.md")
    vi = VectorIndex(index.path)
    vi.context(first, REACH)
    write(index.root, "topics/garden.md", NOTES.replace("## Beans", "## Leeks\nThin in June.\n\n## Beans"))
    index.apply_paths(["topics/garden.md"])
    write(index.root, "daily/2026-05-11.md", CALL)  # takes the next ids
    index.apply_paths(["daily/2026-05-11.md"])
    write(index.root, "topics/garden.md", NOTES)
    index.apply_paths(["topics/garden.md"])
    last = ids_of(index, "topics/garden.md")
    assert set(first) - set(last), "the chunks after the edit were written again, under new ids"
    reads.clear()
    asked = list(dict.fromkeys(first + last))
    assert vi.context(asked, REACH) == fresh_context(index, asked)
    assert set(reads) == set(asked)
    vi.close()


def test_a_chunk_not_in_the_index_is_asked_again_after_a_write(index: TierIndex) -> None:
    write(index.root, "topics/garden.md", NOTES)
    index.apply_paths(["topics/garden.md"])
    vi = VectorIndex(index.path)
    after_last = max(ids_of(index, "topics/garden.md")) + 1
    assert vi.context([after_last], REACH) == ({}, {})
    write(index.root, "daily/2026-05-11.md", CALL)  # its chunks take the next ids
    index.apply_paths(["daily/2026-05-11.md"])
    assert after_last in ids_of(index, "daily/2026-05-11.md")
    answer = vi.context([after_last], REACH)
    assert answer == fresh_context(index, [after_last]) and answer[0]
    vi.close()
