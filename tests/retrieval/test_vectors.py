"""VectorIndex on a real tier index: the embeddings table as a cache, model isolation, refresh, search.

Vectors here are made up (seeded random unit rows): what is tested is storage and bookkeeping,
not embedding quality (tests/retrieval/test_hybrid.py uses the real model).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from sidecar.index.db import chunks_gen
from sidecar.index.tier_index import TierIndex
from sidecar.retrieval import vectors as vectors_module
from sidecar.retrieval.vectors import VectorIndex, embed_text, from_blob, to_blob
from tests.support.memory import write

DIM = 8


def fake_vector(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def embed_all(index: TierIndex, vi: VectorIndex, model: str = "m1") -> int:
    """Embed the backlog the way the batcher does (fake vectors), return how many were embedded."""
    vi.refresh()
    pending = vi.missing(10_000)
    VectorIndex.store(index.writer, model, DIM, [(p.hash, fake_vector(p.text)) for p in pending])
    vi.refresh()
    return len(pending)


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


def chunk_count(index: TierIndex) -> int:
    return int(index.writer.execute("SELECT COUNT(DISTINCT hash) FROM chunks").fetchone()[0])


def test_public_names_are_pinned() -> None:
    assert sorted(vectors_module.__all__) == [
        "ChunkRow",
        "PendingChunk",
        "VectorIndex",
        "dialogue_turns",
        "embed_text",
        "from_blob",
        "to_blob",
    ]


def test_blobs_are_little_endian_float32() -> None:
    v = np.array([1.0, -2.5, 3.25], dtype=np.float32)
    blob = to_blob(v)
    assert blob == np.array([1.0, -2.5, 3.25], dtype="<f4").tobytes()
    assert np.array_equal(from_blob(blob, 3), v)
    assert from_blob(blob, 4) is None


def test_embed_text_is_heading_then_body() -> None:
    assert embed_text("Deploy > Rollback", "steps") == "Deploy > Rollback\nsteps"
    assert embed_text("", "steps") == "steps"
    assert embed_text("Only heading", "") == "Only heading"


def test_backlog_then_search_matches_brute_force(index: TierIndex, vi: VectorIndex) -> None:
    vi.refresh()
    assert vi.backlog == chunk_count(index) > 0
    assert embed_all(index, vi) == chunk_count(index)
    assert vi.backlog == 0 and vi.size == index.status()["chunks"]
    query = fake_vector("what about the postgres index")
    rows = index.writer.execute("SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash").fetchall()
    expected = sorted(((cid, float(np.dot(from_blob(b, DIM), query))) for cid, b in rows), key=lambda r: -r[1])
    got = vi.search(query, 3)
    assert [cid for cid, _ in got] == [cid for cid, _ in expected[:3]]
    assert [c for _, c in got] == pytest.approx([c for _, c in expected[:3]], abs=1e-5)
    assert vi.scores(query, [expected[0][0], 999_999]) == {expected[0][0]: pytest.approx(expected[0][1], abs=1e-5)}


def test_refresh_is_a_no_op_without_commits(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    assert vi.refresh() is False
    write(index.root, "topics/new.md", "# New\nfresh words\n")
    index.reconcile()
    assert vi.refresh() is True
    assert vi.backlog == 1


def test_only_changed_chunks_need_vectors_and_rebuild_reuses_them(
    index: TierIndex, vi: VectorIndex, memory_dir: Path
) -> None:
    embed_all(index, vi)
    text = (memory_dir / "AGENT.md").read_text()
    write(memory_dir, "AGENT.md", text.replace("Dark mode in every screenshot.", "Light mode, please."))
    index.reconcile()
    vi.refresh()
    assert vi.backlog == 1  # only the edited paragraph's chunk
    assert embed_all(index, vi) == 1
    index.rebuild()  # every chunk gets a new id, the hashes stay
    vi.refresh()
    assert vi.backlog == 0 and vi.size == index.status()["chunks"]


def test_vectors_of_another_model_are_never_loaded(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi, model="m1")
    other = VectorIndex(index.path, "m2", DIM)
    other.refresh()
    assert other.size == 0 and other.backlog == chunk_count(index)
    vi.set_model("m2", DIM)
    vi.refresh()
    assert vi.size == 0 and vi.search(fake_vector("x"), 5) == []
    other.close()


def test_rows_of_the_wrong_width_count_as_missing(index: TierIndex, vi: VectorIndex) -> None:
    vi.refresh()
    first = vi.missing(1)[0]
    VectorIndex.store(index.writer, "m1", 4, [(first.hash, np.ones(4, dtype=np.float32))])
    vi.refresh()
    assert first.hash in {p.hash for p in vi.missing(100)}
    assert VectorIndex.store(index.writer, "m1", DIM, [(first.hash, np.ones(3, dtype=np.float32))]) == 0


def test_width_is_learned_from_stored_rows(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    learner = VectorIndex(index.path, "m1", 0)  # a remote embedder that has not answered yet
    learner.refresh()
    assert learner.dim == DIM and learner.size == vi.size
    learner.close()


def test_prune_drops_orphans_and_other_models(index: TierIndex, vi: VectorIndex, memory_dir: Path) -> None:
    embed_all(index, vi, model="m1")
    VectorIndex.store(index.writer, "m0", DIM, [(vi.missing(1)[0].hash if vi.backlog else "h", fake_vector("z"))])
    (memory_dir / "daily/2026-05-14.md").unlink()
    index.reconcile()
    removed = VectorIndex.prune(index.writer, "m1")
    assert removed >= 3  # two daily chunks + the other model's row
    models = {m for (m,) in index.writer.execute("SELECT DISTINCT model FROM embeddings")}
    assert models == {"m1"}
    orphans = index.writer.execute("SELECT COUNT(*) FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)")
    assert orphans.fetchone()[0] == 0


def test_neighbours_and_rows(index: TierIndex, vi: VectorIndex, memory_dir: Path) -> None:
    write(memory_dir, "topics/t.md", "# T\none\n\n## A\ntwo\n\n## B\nthree\n\n## C\nfour\n")
    index.reconcile()
    ids = [r[0] for r in index.writer.execute("SELECT id FROM chunks WHERE path = 'topics/t.md' ORDER BY ord")]
    near = vi.neighbours([ids[1]], 2)
    assert near[ids[1]] == {-1: ids[0], 1: ids[2], 2: ids[3]}
    rows = vi.chunk_rows([ids[2], 123_456])
    assert list(rows) == [ids[2]]
    assert (rows[ids[2]].heading, rows[ids[2]].body, rows[ids[2]].path) == ("T > B", "three", "topics/t.md")


def test_shown_rows_are_the_rows_and_their_sentence_vectors_read_apart(
    index: TierIndex, vi: VectorIndex, memory_dir: Path
) -> None:
    write(memory_dir, "topics/t.md", "# T\none. two.\n\n## A\nthree. four.\n\n## B\nfive\n\n## A\nthree. four.\n")
    index.reconcile()
    vi.refresh()
    pending = vi.missing(100)
    sentences = {p.hash: np.stack([fake_vector(f"{p.text}/{a}") for a, _ in p.sentences]) for p in pending}
    with_sentences = {h: v for h, v in sentences.items() if len(v) > 1}  # "five" is stored without them
    VectorIndex.store(index.writer, "m1", DIM, [(p.hash, fake_vector(p.text)) for p in pending], with_sentences)
    vi.refresh()
    ids = [r[0] for r in index.writer.execute("SELECT id FROM chunks WHERE path = 'topics/t.md' ORDER BY ord")]
    asked = [ids[3], 123_456, ids[2], ids[1], ids[0]]  # a gone chunk; the two A sections are one hash
    rows, stored = vi.shown_rows(asked)
    assert rows == vi.chunk_rows(asked) and rows.keys() == {ids[3], ids[2], ids[1], ids[0]}
    assert rows[ids[1]].hash == rows[ids[3]].hash
    apart = vi.sentence_vectors([r.hash for r in rows.values()])
    assert stored.keys() == apart.keys() == {rows[ids[0]].hash, rows[ids[1]].hash}
    for digest, vectors in apart.items():
        assert stored[digest].dtype == np.float32 and np.array_equal(stored[digest], vectors)
    assert vi.shown_rows([]) == ({}, {})
    other = VectorIndex(index.path, "m2", DIM)  # another model's sentence vectors are not its own
    try:
        assert other.shown_rows(asked) == (rows, {})
    finally:
        other.close()


def test_a_replaced_index_file_is_reopened(index: TierIndex, vi: VectorIndex, memory_dir: Path) -> None:
    embed_all(index, vi)
    before = vi.size
    index.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(index.path) + suffix).unlink(missing_ok=True)
    fresh = TierIndex(memory_dir)
    fresh.open()
    vi.refresh()
    assert vi.size == 0 and vi.backlog == chunk_count(fresh) and before > 0
    fresh.close()


def test_reads_never_write(index: TierIndex, vi: VectorIndex) -> None:
    vi.refresh()
    conn = vi._connection()
    with pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM embeddings")
    assert os.path.exists(index.path)


def test_appending_vectors_never_changes_a_matrix_a_search_holds(index: TierIndex, vi: VectorIndex) -> None:
    vi.refresh()
    pending = vi.missing(100)
    half = len(pending) // 2
    VectorIndex.store(index.writer, "m1", DIM, [(p.hash, fake_vector(p.text)) for p in pending[:half]])
    vi.refresh()
    held = vi.matrix
    before = held.copy()
    VectorIndex.store(index.writer, "m1", DIM, [(p.hash, fake_vector(p.text)) for p in pending[half:]])
    vi.refresh()
    assert vi.backlog == 0 and len(vi.matrix) == len(held) + len(pending) - half
    assert np.array_equal(held, before)
    assert np.array_equal(vi.matrix[: len(held)], before)


# -- following the index: vectors stored at once, chunk changes reread (max_age) -----------------


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


def test_a_search_never_waits_behind_another_refresh(index: TierIndex, vi: VectorIndex) -> None:
    embed_all(index, vi)
    write(index.root, "topics/later.md", "# Later\n\nBadgers dig at dusk.\n\n## Dawn\n\nOtters swim at dawn.\n")
    index.apply_paths(["topics/later.md"])
    ids = [cid for (cid,) in index.writer.execute("SELECT id FROM chunks WHERE path = 'topics/later.md' ORDER BY ord")]
    with vi._lock, ThreadPoolExecutor(1) as pool:  # another thread is in the middle of a refresh
        assert vi.refresh(wait=False) is False  # a search scores the view it has
        assert vi.backlog == 0
        # What a search reads beside the matrix has a connection of its own: it does not wait.
        rows = pool.submit(vi.chunk_rows, ids).result(timeout=10)
        near = pool.submit(vi.neighbours, ids, 1).result(timeout=10)
    assert {r.path for r in rows.values()} == {"topics/later.md"} and len(rows) == len(ids) == 2
    assert near == {ids[0]: {1: ids[1]}, ids[1]: {-1: ids[0]}}
    assert vi.refresh(wait=False) is True  # the lock is free again: the change is read
    assert vi.backlog == 2


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


@pytest.mark.parametrize("seed", range(6))
def test_a_refresh_from_the_index_deltas_equals_a_refresh_reading_every_chunk(
    index: TierIndex, memory_dir: Path, seed: int
) -> None:
    """With the in-memory postings on, each commit of the index records what it did to the chunks
    (``ChunkDeltas``), and a matrix refreshed from those reads only the changed chunks. Over random
    appends, rewrites, new and deleted files, some of the backlog embedded between the changes and
    some refreshes skipped, its rows, hashes, backlog and search answers equal those of a matrix
    that reads every chunk again; a rebuild of the index file breaks the run of deltas (the next
    refresh reads whole)."""
    import random

    rng = random.Random(seed)
    index.enable_postings()
    deltas = index.sync.deltas
    fast = VectorIndex(index.path, "m1", DIM, deltas=deltas)
    whole = VectorIndex(index.path, "m1", DIM)
    read_whole: list[int] = []
    load = VectorIndex._load

    def counting(self: VectorIndex, conn: sqlite3.Connection, old: object, gen: int | None) -> object:
        if self is fast and getattr(old, "gen", None) is not None and gen != getattr(old, "gen", None):
            read_whole.append(deltas.since(old.gen, gen) is None)  # type: ignore[attr-defined]
        return load(self, conn, old, gen)  # type: ignore[arg-type]

    words = "deploy ledger canary invoice rollout standup vendor budget alert latency".split()
    files = [f"topics/t{i}.md" for i in range(6)]
    try:
        vectors_module.VectorIndex._load = counting  # type: ignore[method-assign,assignment]
        embed_all(index, whole)
        for step in range(40):
            path = rng.choice(files)
            target = memory_dir / path
            kind = rng.random()
            if kind < 0.5 and target.exists():  # an append, often to the last section
                with target.open("a") as fh:
                    fh.write(f"- {rng.choice(words)} {rng.choice(words)} step {step}\n")
            elif kind < 0.7:  # rewritten
                body = "\n".join(f"- {rng.choice(words)} {i} {step}" for i in range(rng.randint(1, 30)))
                write(memory_dir, path, f"# {path}\n\n## Notes\n{body}\n")
            elif kind < 0.8 and target.exists():
                target.unlink()
            else:
                write(memory_dir, path, f"# {path}\n\n- {rng.choice(words)} first line {step}\n")
            index.reconcile()
            if step == 25:
                before = chunks_gen(index.writer)
                index.rebuild()  # a new file: the deltas do not run on
                assert before is not None and deltas.since(before, chunks_gen(index.writer) or 0) is None
            if rng.random() < 0.3:
                continue  # this refresh skipped: the next one applies two commits' deltas
            if rng.random() < 0.6:  # the background embedder caught up on part of the backlog
                whole.refresh()
                pending = whole.missing(rng.randint(1, 5))
                VectorIndex.store(index.writer, "m1", DIM, [(p.hash, fake_vector(p.text)) for p in pending])
            fast.refresh()
            whole.refresh()
            a, b = fast._snap, whole._snap
            assert a.hashes == b.hashes
            assert a.missing == b.missing
            rows_a = {int(c): a.matrix[r].tolist() for c, r in a.row_of.items()}
            rows_b = {int(c): b.matrix[r].tolist() for c, r in b.row_of.items()}
            assert rows_a == rows_b
            assert sorted(a.ids.tolist()) == sorted(rows_a) and len(a.serials) == len(a.ids)
            query = fake_vector(rng.choice(words))
            found, expected = dict(fast.search(query, 5)), dict(whole.search(query, 5))
            assert found.keys() == expected.keys()  # the same chunks; cosines to float rounding (rows laid out apart)
            assert all(abs(found[c] - expected[c]) < 1e-5 for c in found)
        assert read_whole.count(False) >= 10  # most refreshes read the deltas
    finally:
        vectors_module.VectorIndex._load = load  # type: ignore[method-assign]
        fast.close()
        whole.close()
