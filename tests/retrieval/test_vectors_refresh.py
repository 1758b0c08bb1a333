"""How a VectorIndex follows its tier index: vectors stored are picked up at once, a change to the
chunks is reread (and may be put off by ``max_age`` while writes stream in), and a search never
sees a chunk's vector under a hash the index no longer has once the view is current."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.index.tier_index import TierIndex
from sidecar.retrieval.vectors import VectorIndex
from tests.retrieval.test_vectors import DIM, embed_all, fake_vector
from tests.support.memory import write


@pytest.fixture
def index(memory_dir: Path) -> Iterator[TierIndex]:
    ix = TierIndex(memory_dir)
    ix.open()
    yield ix
    ix.close()


@pytest.fixture
def vi(index: TierIndex) -> Iterator[VectorIndex]:
    v = VectorIndex(index.path, "m1", DIM)
    yield v
    v.close()


def test_stored_vectors_are_picked_up_at_once(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    write(index.root, "topics/new.md", "# New\n\nA fresh note about otters.\n")
    index.apply_paths(["topics/new.md"])
    assert vi.refresh() is True
    assert vi.backlog == 1
    before = vi.size
    # The chunks stay as they are: a refresh after the store only appends the new row.
    (pending,) = vi.missing(10)
    VectorIndex.store(index.writer, "m1", DIM, [(pending.hash, fake_vector(pending.text))])
    assert vi.refresh() is True
    assert (vi.size, vi.backlog) == (before + 1, 0)
    hits = vi.search(fake_vector(pending.text), 1)
    assert hits and hits[0][1] == pytest.approx(1.0, abs=1e-5)


def test_a_chunk_change_waits_for_max_age_then_is_read(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    size = vi.size
    write(index.root, "topics/later.md", "# Later\n\nBadgers dig at dusk.\n")
    index.apply_paths(["topics/later.md"])
    assert vi.refresh(max_age=60.0) is False  # the view was read just now: the change waits
    assert vi.backlog == 0 and vi.size == size
    assert vi.refresh(max_age=60.0) is False  # and keeps waiting, however often it is asked
    assert vi.refresh() is True  # without max_age it is read at once
    assert vi.backlog == 1


def test_max_age_lets_the_change_in_once_the_view_is_old_enough(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    write(index.root, "topics/later.md", "# Later\n\nBadgers dig at dusk.\n")
    index.apply_paths(["topics/later.md"])
    time.sleep(0.06)
    assert vi.refresh(max_age=0.05) is True
    assert vi.backlog == 1


def test_a_removed_file_leaves_the_matrix_once_reread(index: TierIndex, vi: VectorIndex) -> None:
    write(index.root, "topics/gone.md", "# Gone\n\nThis note will be deleted.\n")
    index.apply_paths(["topics/gone.md"])
    embed_all(index, vi)
    gone = {cid for (cid,) in index.writer.execute("SELECT id FROM chunks WHERE path = 'topics/gone.md'")}
    assert gone and gone <= set(vi.scores(fake_vector("x"), gone))
    (index.root / "topics/gone.md").unlink()
    index.apply_paths(["topics/gone.md"])
    assert vi.refresh() is True
    assert not set(vi.scores(fake_vector("x"), gone))
