"""The in-memory BM25 postings answer exactly as FTS5's bm25() does: same chunks, same order, the
same scores to the last bit, through edits, deletions, id reuse, compaction, rebuilds, and another
process writing the index file."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from sidecar.index import postings_base
from sidecar.index.db import chunks_gen
from sidecar.index.postings import (
    SmallSnapshot,
    Snapshot,
    apply_changes,
    build_snapshot,
    compact,
    count_terms,
)
from sidecar.index.query import terms
from sidecar.index.snippet import window
from sidecar.index.tier_index import TierIndex
from sidecar.retrieval.standing import SLACK, by_standing
from tests.support.corpus import VOCAB, make_corpus, make_queries
from tests.support.memory import write
from tests.support.procs import start_sidecar
from tests.support.waiting import wait_until

HOSTILE = [
    '"hello',
    "AND",
    "hello AND",
    "*",
    "hello^",
    "(hello",
    "()",
    "multi-agent",
    "-hello",
    "col:x",
    "{a}:x",
    "GB/s",
    "don't",
    "@x",
    "#x",
    "a=b",
    "50%",
    "x\\y",
    "+x",
    "a.b",
    ":",
    "NEAR(a b)",
    "hel*",
    "🙂 deploy",
    "日本語 メモ",
    "Café résumé",
    "2025-01-05 rollback",
    "postgres postgres deploy deployment",
    "x" * 300,
    # porter is not idempotent (agreed -> agre -> agr): a word of several tokens must reach FTS5 as typed
    "agreed-deployments",
    "decided-agreed",
    "suggested/reported",
    "noted.agreed",
]


def _pairs(hits: list) -> list[tuple[int, float]]:  # type: ignore[type-arg]
    return [(h.id, h.score) for h in hits]


def assert_same_as_fts(index: TierIndex, queries: list[str], limit: int = 10) -> None:
    """Every query: the postings answer (not a fallback) and it equals FTS5's, scores exactly."""
    snap = index.postings.snapshot
    assert snap is not None, "postings were not built"
    for q in queries:
        words = terms(q)
        mine = index.bm25.from_snapshot(snap, words, index.bm25.query_tokens(words), limit) if words else []
        assert mine is not None, f"postings could not answer {q!r}"
        theirs = index.bm25.search_fts(q, limit, raw_fts=False)
        assert _pairs(mine) == _pairs(theirs), q
        assert [h.snippet for h in mine] == [h.snippet for h in theirs]


def _queries(rng: random.Random, n: int) -> list[str]:
    out = make_queries(n, seed=rng.randint(0, 10**6))
    out += [" ".join(rng.choices(VOCAB[:400], k=rng.randint(1, 6))) for _ in range(n)]
    out += [f"{rng.choice(VOCAB[60:600])}-{rng.choice(VOCAB[60:600])}" for _ in range(n // 4)]
    return out + HOSTILE


@pytest.fixture(scope="module")
def corpus_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("postings") / "memory"
    make_corpus(root, 1200, seed=4)
    write(root, "notes/punct.md", "# ---\n\n---\n\n***\n\nmulti-agent crews share one lead; don't deploy on friday.\n")
    write(root, "notes/accents.md", "# Café\n\nRésumé of the naïve café plan. 日本語 メモ\n")
    write(
        root, "notes/stems.md", "# Agreed\n\nagreed-deployments and decided-agreed; suggested/reported noted.agreed\n"
    )
    built = TierIndex(root)  # the index built once: each test opens a copy (its files unchanged, so
    built.open()  # the copy's reconcile reads none of them) instead of indexing 1,200 chunks again
    built.close()
    return root


@pytest.fixture
def corpus(corpus_template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(corpus_template, tmp_path / "memory"))


@pytest.fixture(params=["arrays", "numpy"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each layout of the postings: ``array``s scored in Python (a tier of at most
    ``SMALL_CHUNKS`` chunks, as these are), and numpy's (every tier, with the limit at 0)."""
    if request.param == "numpy":
        monkeypatch.setattr(postings_base, "SMALL_CHUNKS", 0)
    return str(request.param)


@pytest.fixture
def index(corpus: Path, engine: str) -> Iterator[TierIndex]:
    ix = TierIndex(corpus)
    ix.open(postings=True)
    assert isinstance(ix.postings.snapshot, SmallSnapshot) == (engine == "arrays")
    yield ix
    ix.close()


def test_postings_rank_exactly_like_fts5(index: TierIndex) -> None:
    assert index.status()["bm25"]["engine"] == "postings"
    assert_same_as_fts(index, _queries(random.Random(1), 150))
    assert_same_as_fts(index, make_queries(40, seed=2), limit=50)
    assert_same_as_fts(index, make_queries(20, seed=3), limit=1)


def test_many_tied_scores_are_ordered_by_id_with_dead_chunks_among_them(index: TierIndex, corpus: Path) -> None:
    """Sixty identical chunks tie on every score: the best are the lowest ids, as FTS5 orders
    them, with some of the tied chunks deleted (dead slots) and some re-added (delta slots)."""
    for n in range(60):
        write(corpus, f"twins/t{n:02d}.md", "# Twin\n\nzygotwin marker paragraph\n")
    index.apply_paths([f"twins/t{n:02d}.md" for n in range(60)])
    gone = [f"twins/t{n:02d}.md" for n in range(0, 60, 7)]
    for rel in gone:
        (corpus / rel).unlink()
    write(corpus, "twins/t03.md", "# Twin\n\nzygotwin marker paragraph, edited\n")
    index.apply_paths([*gone, "twins/t03.md"])
    snap = index.postings.snapshot
    assert snap is not None and len(snap.dead) > 0, "expected dead slots in the snapshot"
    for limit in (1, 5, 10, 40):
        assert_same_as_fts(index, ["zygotwin", "zygotwin marker", "twin zygotwin"], limit=limit)


def test_edits_deletes_and_new_files_follow_as_a_delta(index: TierIndex, corpus: Path) -> None:
    rng = random.Random(5)
    files = sorted(p.relative_to(corpus).as_posix() for p in corpus.rglob("*.md"))
    write(corpus, files[3], "# Zorblax\n\nzorblax quarantine procedure for the payments cluster\n")
    (corpus / files[7]).unlink()
    write(corpus, "topics/brand-new.md", "# Quillfeather\n\nquillfeather retention policy, deploy friday\n")
    with (corpus / files[11]).open("a", encoding="utf-8") as f:
        f.write("\n## Appended\n\nappended note about the grommet rollout\n")
    index.apply_paths([files[3], files[7], "topics/brand-new.md", files[11]])
    snap = index.postings.snapshot
    assert snap is not None and snap.delta_slots > 0, "expected an incremental update, not a rebuild"
    assert index.search("zorblax")[0].path == files[3]
    assert index.search("quillfeather")[0].path == "topics/brand-new.md"
    assert index.search("grommet")[0].path == files[11]
    assert all(h.path != files[7] for h in index.search(" ".join(VOCAB[50:60]), 50))
    assert_same_as_fts(index, [*_queries(rng, 60), "zorblax quarantine", "quillfeather deploy", "grommet"])


def test_reused_chunk_ids_and_a_file_changed_twice_in_one_batch(index: TierIndex, corpus: Path) -> None:
    # SQLite hands out max(rowid) + 1: deleting the file holding the highest ids and adding
    # another reuses them for different text.
    (top_path,) = index.writer.execute("SELECT path FROM chunks ORDER BY id DESC LIMIT 1").fetchone()
    (corpus / top_path).unlink()
    write(corpus, "zz-reuse.md", "# Reused\n\nvelveteen ids are handed out again\n\nsecond velveteen paragraph\n")
    index.apply_paths([top_path, "zz-reuse.md"])

    def twice() -> Iterator[str]:
        yield "zz-reuse.md"
        write(corpus, "zz-reuse.md", "# Reused again\n\nmarmalade replaced the velveteen text\n")
        yield "zz-reuse.md"

    index.apply_paths(twice())
    assert [h.path for h in index.search("marmalade")] == ["zz-reuse.md"]
    assert index.search("velveteen")[0].heading.endswith("Reused again")
    assert_same_as_fts(index, ["velveteen", "marmalade", "reused", *make_queries(40, seed=6)])


@pytest.mark.slow
def test_a_large_delta_is_compacted_into_a_new_base(index: TierIndex, corpus: Path) -> None:
    snap = index.postings.snapshot
    assert snap is not None
    base = snap.base_slots
    shutil.copytree(corpus / "daily", corpus / "bulk")  # ~1,100 new chunks: past the delta limit
    index.reconcile()
    after = index.postings.snapshot
    assert after is not None and after.delta_slots == 0 and after.base_slots > base
    assert_same_as_fts(index, _queries(random.Random(9), 50))


def test_rebuild_and_a_corrupted_index_rebuild_the_postings(index: TierIndex, corpus: Path) -> None:
    index.rebuild()
    assert index.postings.snapshot is not None and index.postings.snapshot.delta_slots == 0
    assert_same_as_fts(index, make_queries(30, seed=10))
    index.close()
    (corpus / "index.sqlite").write_bytes(b"this is not a database" * 100)
    ix = TierIndex(corpus)
    assert ix.open(postings=True).startswith("rebuilt")
    assert_same_as_fts(ix, make_queries(30, seed=11))
    ix.close()


def test_another_process_writing_the_index_is_noticed(index: TierIndex, corpus: Path) -> None:
    """The CLI (``memory-sidecar reindex``, or a search that reconciles) may write the index while
    the server runs: the server must not keep answering from postings of the old file."""
    write(corpus, "outside.md", "# Outside\n\nperiwinkle written while the server ran\n")
    other = TierIndex(corpus)
    other.open()  # reconciles: indexes outside.md in this second connection
    other.close()
    stale = index.postings.snapshot
    assert stale is not None
    words = ["periwinkle"]
    assert index.bm25.from_snapshot(stale, words, index.bm25.query_tokens(words), 10) is None  # generation moved
    hits = index.search("periwinkle")  # FTS5 answers, and a refresh is asked for (run at once here)
    assert [h.path for h in hits] == ["outside.md"]
    assert index.postings.snapshot is not None and index.postings.snapshot is not stale
    assert_same_as_fts(index, ["periwinkle", *make_queries(30, seed=12)])
    # And the server's own next write starts from the fresh postings, not the stale ones.
    write(corpus, "outside.md", "# Outside\n\nperiwinkle and heliotrope\n")
    index.apply_paths(["outside.md"])
    assert_same_as_fts(index, ["periwinkle heliotrope", "heliotrope"])


def test_empty_tier(tmp_path: Path) -> None:
    ix = TierIndex(tmp_path / "empty")
    ix.open(postings=True)
    assert ix.search("anything") == []
    write(tmp_path / "empty", "a.md", "# A\n\nfirst words\n")
    ix.apply_paths(["a.md"])
    assert [h.path for h in ix.search("first")] == ["a.md"]
    assert_same_as_fts(ix, ["first", "words", "a"])
    ix.close()


def test_ascii_snippets_find_the_same_window_as_the_regex(tmp_path: Path) -> None:
    text = ("Padding words here. " * 30) + "The PostgreSQL Migration ran on Friday. " + ("tail " * 40)
    snippet = window(text, ["postgresql", "migration"]).text
    assert "PostgreSQL Migration" in snippet and snippet.startswith("…") and snippet.endswith("…")
    accented = text.replace("Padding", "Pädding")
    assert window(accented, ["postgresql"]).text.find("PostgreSQL") == snippet.find("PostgreSQL")


@pytest.mark.slow
def test_server_builds_postings_after_ready_and_answers_from_them(corpus: Path) -> None:
    side = start_sidecar(corpus, "--watch", "false")
    try:
        status = wait_until(
            lambda: (s := httpx.get(f"{side.url}/memory/status").json())["bm25"]["engine"] == "postings" and s,
            timeout=60,
            interval=0.05,
            message="the server to answer from postings",
        )
        assert status["bm25"]["postings"] > 0
        cli = TierIndex(corpus)
        cli.open()  # FTS5 only, a second process's view of the same file
        for q in [*make_queries(20, seed=13), "multi-agent", "don't deploy"]:
            # A hang guard, not a deadline: the first search loads the scanner's rules, which takes
            # seconds of wall clock on a busy host.
            found = httpx.post(f"{side.url}/memory/search", json={"query": q, "limit": 10}, timeout=120)
            got = found.json()["results"]
            # The server's BM25 answer ranks by score times standing (dated notes' recency prior):
            # the same ranking over FTS5's hits, read with the server's slack beyond the limit.
            stood = by_standing(cli.search(q, 10 + SLACK))[:10]
            want = [(h.path, h.line_start, round(score, 6)) for h, _, score in stood]
            assert [(r["path"], r["line_start"], r["score"]) for r in got] == want, q
        cli.close()
    finally:
        side.stop()


def test_scratch_tokenizer_matches_the_index(tmp_path: Path) -> None:
    """Query words are tokenized by FTS5 itself: porter stems and folded diacritics as indexed."""
    from sidecar.index.tokens import QueryTokens

    tokens = QueryTokens()
    assert tokens(["deployments", "multi-agent", "café", "🙂", "don't"]) == [
        ("deploy",),
        ("multi", "agent"),
        ("cafe",),
        ("🙂",),  # unicode61 keeps symbols as tokens; sidecar.index.query drops word-less tokens first
        ("don", "t"),
    ]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    conn.execute("INSERT INTO f VALUES ('Deployments of the multi-agent CAFÉ: don''t deploy')")
    indexed = {r[0] for r in conn.execute("SELECT term FROM v")}
    words = ["Deployments", "of", "the", "multi-agent", "CAFÉ:", "don't", "deploy"]
    assert indexed == {t for toks in tokens(words) for t in toks}
    assert tokens(["deploy"]) == [("deploi",)]  # porter's own quirk, kept: FTS5 is the reference


def test_flatten_is_split_and_join() -> None:
    from sidecar.index.snippet import flatten

    rng = random.Random(3)
    alphabet = "ab .,\n\t\r\x0b\x0c\x1c\x1d\x1e\x1f\x01\x7f é\u00a0\u2003"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert flatten(text) == " ".join(text.split()), repr(text)


def test_the_snippet_window_holds_the_best_cluster_of_exact_terms() -> None:
    """Against a brute force over every window a little narrower than the snippet's: no other
    window shows more distinct query words exactly, and the snippet shows one whenever the text has
    one (words whose stems overlap inside one text word, like "eps" in "epsilon", match nothing)."""

    rng = random.Random(6)
    vocab = ["alpha", "Beta", "gamma", "delta", "epsilon", "zeta", "x"]
    for _ in range(2000):
        tokens = [rng.choice(vocab) for _ in range(80)]
        text = " ".join(tokens)
        pool = ["alphabet", "beta", "gammas", "delta", "zeta", "omega", "eps", "psilon", "lphabet", "amma"]
        words = rng.sample(pool, rng.randint(1, 5))
        wanted = {w for w in words if w in {t.lower() for t in tokens}}
        snippet = window(text, words)
        exact = {snippet.text[a:b].lower() for a, b in snippet.highlights} & wanted
        starts = [i for i, ch in enumerate(text) if i == 0 or text[i - 1] == " "]
        lowered = text.lower()  # ASCII: each word lowered in place, the same slices
        best = 0
        for start in starts:
            inside = lowered[start : start + 240 - 32].split(" ")[:-1]
            best = max(best, len(wanted.intersection(inside)))
        assert len(exact) >= best, (words, text, snippet.text)
        assert bool(exact) == bool(wanted), (words, text, snippet.text)


def test_a_plain_text_makes_the_same_snippet_with_the_flag() -> None:
    from sidecar.index.snippet import is_plain

    rng = random.Random(4)
    alphabet, weights = "abcdé .,\n\t\x0b\x1f\x01\u00a0", [9, 9, 9, 9, 2, 8, 2, 2, 2, 0.1, 0.1, 0.1, 0.1, 0.1]
    plain = 0
    for _ in range(3000):
        text = "".join(rng.choices(alphabet, weights, k=rng.randint(0, 400)))
        if is_plain(text):
            plain += 1
            assert " ".join(text.split()) == text.replace("\n", " "), repr(text)
            for width in (5, 40, 240):
                assert window(text, ["ab"], width, plain=True) == window(text, ["ab"], width), repr(text)
        elif text.strip():
            assert " ".join(text.split()) != text.replace("\n", " "), repr(text)
    assert plain > 100, "the generator must make plain texts too"


def test_a_search_between_commit_and_swap_uses_the_pending_snapshot(index: TierIndex, corpus: Path) -> None:
    """COMMIT gives up the GIL; a search may meet the new generation before the writer swaps the
    postings. It must answer from the snapshot being committed, not fall back to FTS5."""
    old = index.postings.snapshot
    write(corpus, "notes/new.md", "# New\n\ntamarind arrived after the commit\n")
    index.apply_paths(["notes/new.md"])
    new = index.postings.snapshot
    assert old is not None and new is not None and new.gen == old.gen + 1
    index.postings.snapshot, index.postings.pending = old, new  # the moment between COMMIT and the swap
    try:
        hits = index.search_postings("tamarind", 10)
        assert hits is not None and [h.path for h in hits] == ["notes/new.md"]
        assert _pairs(hits) == _pairs(index.bm25.search_fts("tamarind", 10, raw_fts=False))
        index.postings.pending = None  # without it: no answer from postings (FTS5 answers instead)
        assert index.search_postings("tamarind", 10) is None
    finally:
        index.postings.snapshot, index.postings.pending = new, None


def test_the_event_loop_leaves_words_of_several_tokens_to_a_reader_thread(index: TierIndex) -> None:
    """``phrases=False`` (the event loop): a word FTS5 must score is not searched there."""
    assert index.search_postings("multi-agent deploy", 10, phrases=False) is None
    hits = index.search_postings("multi-agent deploy", 10)
    assert hits is not None and hits == index.search("multi-agent deploy", 10)
    assert index.search_postings("deploy", 10, phrases=False) == index.search("deploy", 10)


class _Walk:
    """A seeded random walk over a small tier: appends, rewrites, deletes, new files (SQLite hands
    the highest ids out again), whole-tier reconciles and rebuilds."""

    def __init__(self, root: Path, seed: int) -> None:
        self.rng = random.Random(seed)
        self.root = root
        self.words = VOCAB[50:400]
        for n in range(12):
            write(root, f"f{n}.md", self.text())
        self.index = TierIndex(root)
        self.index.open(postings=True)
        self.probes = [" ".join(self.rng.choices(self.words, k=self.rng.randint(1, 4))) for _ in range(25)]

    def text(self) -> str:
        rng, words = self.rng, self.words
        paras = [" ".join(rng.choices(words, k=rng.randint(3, 40))) for _ in range(rng.randint(1, 6))]
        return f"# {rng.choice(words).title()}\n\n" + "\n\n".join(paras) + "\n"

    def step(self, rebuilds: bool = True) -> None:
        rng, root, ix = self.rng, self.root, self.index
        files = sorted(p.name for p in root.glob("*.md"))
        op = rng.random()
        name = rng.choice(files) if files else "f0.md"
        if op < 0.35 and files:
            with (root / name).open("a", encoding="utf-8") as f:
                f.write("\n" + " ".join(rng.choices(self.words, k=rng.randint(2, 30))) + "\n")
            ix.apply_paths([name])
        elif op < 0.55 and files:
            write(root, name, self.text())
            ix.apply_paths([name])
        elif op < 0.7 and files:
            (root / name).unlink()
            ix.apply_paths([name])
        elif op < 0.85:
            new = f"g{rng.randint(0, 30)}.md"
            write(root, new, self.text())
            ix.apply_paths([new])
        elif op < 0.95 or not rebuilds:
            write(root, name, self.text())
            ix.reconcile()
        else:
            ix.rebuild()


def test_random_edit_sequences_keep_postings_equal_to_fts5(tmp_path: Path, engine: str) -> None:
    """After every step of a random walk the postings rank exactly as FTS5 does."""
    walk = _Walk(tmp_path / "walk", 77)
    for _step in range(150):
        walk.step()
        assert_same_as_fts(walk.index, walk.rng.sample(walk.probes, 5))
    walk.index.close()


# -- compaction: the delta merged into a fresh base from the arrays alone ----------------------
Contents = tuple[list[str], list[int], list[int], list[int], list[int], list[float], int, float]


def _spans(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    """The indices of the ranges ``[starts[i], starts[i] + counts[i])``, one range after another."""
    ends = np.cumsum(counts)
    return np.repeat(starts - ends + counts, counts) + np.arange(int(ends[-1]) if len(ends) else 0)


def _contents(snap: Snapshot) -> Contents:
    """What a snapshot says, whatever its layout: each term's live (chunk id -> frequency), each
    live chunk's tokens, the live count and the total tokens. Read with numpy from either layout's
    arrays: the terms holding a live posting (sorted), then the live postings as (term's place
    among them, chunk id, frequency) sorted by term and id, then the live chunks' ids and tokens
    sorted by id."""
    alive = np.asarray(snap.alive).astype(bool)
    ids = np.asarray(snap.ids).astype(np.int64)
    offsets = np.asarray(snap.offsets).astype(np.int64)
    rows = max(len(offsets) - 1, 0)
    base = list(snap.vocab.items())
    names = [term for term, _ in base] + list(snap.delta)
    everyone = sorted(set(names))
    place = {term: n for n, term in enumerate(everyone)}
    term_of_row = np.zeros(rows, dtype=np.int64)
    term_of_row[np.array([row for _, row in base], dtype=np.int64)] = [place[term] for term, _ in base]
    counts = np.diff(offsets) if rows else np.zeros(0, dtype=np.int64)
    at = _spans(offsets[:-1] if rows else counts, counts)
    terms_of = [np.repeat(term_of_row, counts)]
    slots_of = [np.asarray(snap.slots).astype(np.int64)[at]]
    freqs_of = [np.asarray(snap.freqs).astype(np.int64)[at]]
    for term, (slots, freqs) in snap.delta.items():
        terms_of.append(np.full(len(slots), place[term], dtype=np.int64))
        slots_of.append(np.asarray(slots).astype(np.int64))
        freqs_of.append(np.asarray(freqs).astype(np.int64))
    term, slot, freq = (np.concatenate(parts) for parts in (terms_of, slots_of, freqs_of))
    live = alive[slot]
    term, chunk, freq = term[live], ids[slot[live]], freq[live]
    held = np.unique(term)
    term = np.searchsorted(held, term)
    order = np.lexsort((chunk, term))
    live_ids = ids[alive]
    by_id = np.argsort(live_ids, kind="stable")
    tokens = np.asarray(snap.lengths).astype(np.float64)[alive]
    return (
        [everyone[n] for n in held.tolist()],
        term[order].tolist(),
        chunk[order].tolist(),
        freq[order].tolist(),
        live_ids[by_id].tolist(),
        tokens[by_id].tolist(),
        snap.live,
        snap.total_tokens,
    )


def _fresh(index: TierIndex) -> Snapshot:
    """The postings as a full scan of the index builds them now."""
    conn = index.writer
    conn.execute("BEGIN")
    try:
        return build_snapshot(conn, chunks_gen(conn) or 0)
    finally:
        conn.execute("COMMIT")


def _assert_compacts_to_a_fresh_build(index: TierIndex) -> Snapshot:
    snap = index.postings.snapshot
    assert snap is not None
    merged = compact(snap)
    assert merged.delta == {} and merged.delta_ids == {} and all(merged.alive)
    assert type(merged) is type(snap)
    assert merged.base_slots == merged.live == snap.live and merged.gen == snap.gen
    assert np.all(np.diff(merged.ids) > 0), "a base's slots are in ascending id order"
    fresh = _fresh(index)
    assert _contents(merged) == _contents(fresh) == _contents(snap)
    assert set(merged.vocab) == set(fresh.vocab), "a term without live postings is dropped"
    assert np.array_equal(merged.ids, fresh.ids) and np.array_equal(merged.norm, fresh.norm)
    # Laid out as a build lays it: each term's slots (ascending) and frequencies are the fresh build's.
    names = list(fresh.vocab)
    mine = np.array([merged.vocab[term] for term in names], dtype=np.int64)
    theirs = np.array([fresh.vocab[term] for term in names], dtype=np.int64)
    m_off, f_off = (np.asarray(snap.offsets).astype(np.int64) for snap in (merged, fresh))
    counts = f_off[theirs + 1] - f_off[theirs]
    assert np.array_equal(m_off[mine + 1] - m_off[mine], counts), "each term holds as many postings"
    at_mine, at_theirs = _spans(m_off[mine], counts), _spans(f_off[theirs], counts)
    for name in ("slots", "freqs"):
        got, want = np.asarray(getattr(merged, name))[at_mine], np.asarray(getattr(fresh, name))[at_theirs]
        differ = np.flatnonzero(got != want)
        assert len(differ) == 0, (name, names[int(np.searchsorted(np.cumsum(counts), differ[0], side="right"))])
    return merged


@pytest.mark.slow
def test_compaction_equals_a_fresh_build_through_many_merges(tmp_path: Path, engine: str) -> None:
    """A random walk where the postings are now and then merged into a new base (deltas of one
    to several commits, on bases that were themselves merged): every merge holds what a fresh
    scan of the index holds, and ranks exactly as FTS5 does."""
    walk = _Walk(tmp_path / "walk", 78)
    merges = 0
    for _step in range(120):
        walk.step(rebuilds=False)
        if walk.rng.random() < 0.3:
            walk.index.postings.snapshot = _assert_compacts_to_a_fresh_build(walk.index)
            merges += 1
        assert_same_as_fts(walk.index, walk.rng.sample(walk.probes, 5))
    assert merges > 20
    walk.index.close()


def test_compaction_of_a_delta_chunk_that_sorts_inside_the_base(index: TierIndex) -> None:
    """SQLite hands out ids above every live one, so delta chunks usually sort after the base; a
    chunk whose id sorts inside it (here: the lowest id, rewritten in place) must be merged into
    the middle of each of its terms' postings."""
    conn = index.writer
    (low,) = conn.execute("SELECT min(id) FROM chunks").fetchone()
    heading, body = "Kumquat", "kumquat deploy rollback postgres and the lowest id rewritten in place"
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE chunks SET heading = ?, body = ? WHERE id = ?", (heading, body, low))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_gen'")
    conn.execute("COMMIT")
    snap = index.postings.snapshot
    assert snap is not None
    moved = apply_changes(snap, chunks_gen(conn) or 0, [low], count_terms([(low, heading, body)]))
    assert moved.delta_ids == {low: len(snap.ids)}
    index.postings.snapshot = moved
    merged = _assert_compacts_to_a_fresh_build(index)
    assert int(merged.ids[0]) == low
    index.postings.snapshot = merged
    assert_same_as_fts(index, ["kumquat", "kumquat deploy", "rollback postgres", *make_queries(30, seed=14)])


@pytest.mark.slow
def test_a_base_holds_one_byte_a_frequency_where_every_one_fits(index: TierIndex, corpus: Path) -> None:
    """Weighted frequencies of at most 255 are kept as uint8 (with uint16 slots: 3 bytes a posting);
    a term that weighs more in one chunk widens the next base to uint16, ranked exactly as before."""
    snap = index.postings.snapshot
    assert snap is not None and snap.freqs.itemsize == 1
    assert snap.slots.itemsize + snap.freqs.itemsize == 3
    assert _fresh(index).freqs.itemsize == 1
    # 70 times in a heading and once in the body: 4 * 70 + 1 = 281, more than a byte holds.
    write(corpus, "notes/loud.md", "# " + "zyzzyva " * 70 + "\n\nzyzzyva deploy once in the body\n")
    index.apply_paths(["notes/loud.md"])
    widened = _assert_compacts_to_a_fresh_build(index)
    assert widened.freqs.itemsize == 2 and _fresh(index).freqs.itemsize == 2
    assert max(widened.freqs) == 281
    index.postings.snapshot = widened
    assert_same_as_fts(index, ["zyzzyva", "zyzzyva deploy", *make_queries(30, seed=15)])
    (corpus / "notes/loud.md").unlink()
    index.apply_paths(["notes/loud.md"])
    assert _fresh(index).freqs.itemsize == 1, "narrow again once no frequency needs 2 bytes"
    assert_same_as_fts(index, ["zyzzyva", *make_queries(10, seed=16)])


class _Sized(postings_base.Tidiness):
    """Only the sizes a snapshot's tidiness is read from: for asking what a delta of a size means."""

    def __init__(self, ids: range, base_slots: int) -> None:
        self.ids, self.base_slots = ids, base_slots


def _lower_the_compaction_floor(monkeypatch: pytest.MonkeyPatch, snap: Snapshot | None = None) -> None:
    """The compaction floor (``COMPACT_MIN``) at 64 slots instead of the shipped 256, for a stream of
    writes that must go through compactions: on a tier of this corpus's size each layout's limit is
    the floor's (three times it for ``array``s), met after a quarter of the writes it took at the
    shipped floor, through the same code. What the shipped limit adds to such a stream, that a delta
    as large as it is not outgrown (no rebuild), is asked of ``snap``'s layout at the shipped floor."""
    from sidecar.index import postings, postings_numpy

    if snap is not None:
        assert not _Sized(range(snap.base_slots + snap.untidy_limit), snap.base_slots).delta_outgrown()
    for module in (postings, postings_numpy):
        monkeypatch.setattr(module, "COMPACT_MIN", 64)
    if snap is not None:
        assert snap.untidy_limit < 256, "the lowered floor sets this tier's limit"


@pytest.mark.slow
def test_a_steady_stream_of_writes_keeps_the_delta_small(
    index: TierIndex, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appends that rewrite a chunk each (a dead slot and a delta chunk per write) are merged into
    the base as they come: the delta never grows past the compaction limit, no rebuild is needed."""
    snap = index.postings.snapshot
    assert snap is not None
    _lower_the_compaction_floor(monkeypatch, snap)
    limit = snap.untidy_limit
    merges = 0
    for i in range(2 * limit + 100):  # rewrites of a delta chunk: one untidy slot each
        with (corpus / "topics" / f"stream-{i % 7}.md").open("a", encoding="utf-8") as f:
            f.write(f"- streamtoken{i}x noted during the run\n")
        index.apply_paths([f"topics/stream-{i % 7}.md"])
        nxt = index.postings.snapshot
        assert nxt is not None and nxt.untidy_slots <= limit and not nxt.wants_rebuild()
        merges += nxt.base_slots != snap.base_slots or nxt.untidy_slots < snap.untidy_slots
        snap = nxt
    assert merges >= 2
    assert_same_as_fts(index, ["streamtoken5x", "streamtoken399x noted", *make_queries(30, seed=15)])
    assert _contents(snap) == _contents(_fresh(index))


# -- the two layouts: arrays scored in Python for a small tier, numpy above SMALL_CHUNKS ----------
def test_both_layouts_hold_the_same_postings_and_score_alike(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build in ``array``s holds exactly what numpy's holds, row for row (each term's chunks and
    weighted frequencies, the chunks' ids, tokens and norms), and every query ranks the same chunks
    with the same scores to the last bit."""
    ix = TierIndex(corpus)
    ix.open()
    small = _fresh(ix)
    monkeypatch.setattr(postings_base, "SMALL_CHUNKS", 0)
    large = _fresh(ix)
    assert isinstance(small, SmallSnapshot) and not isinstance(large, SmallSnapshot)
    assert list(small.vocab.items()) == list(large.vocab.items())
    for name in ("offsets", "slots", "freqs", "ids", "lengths", "norm"):
        assert getattr(small, name).tolist() == getattr(large, name).tolist(), name
    assert (small.live, small.total_tokens) == (large.live, large.total_tokens)
    for q in _queries(random.Random(21), 60):
        words = terms(q)
        if words:
            tokens = ix.bm25.query_tokens(words)
            mine, theirs = (ix.bm25.from_snapshot(snap, words, tokens, 20) for snap in (small, large))
            assert mine is not None and theirs is not None and _pairs(mine) == _pairs(theirs), q
    ix.close()


@pytest.mark.slow
def test_a_tier_moves_to_numpy_past_the_limit_and_back_at_half_of_it(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings_base, "SMALL_CHUNKS", 1400)  # the corpus holds some 1,300 chunks
    ix = TierIndex(corpus)
    ix.open(postings=True)
    assert isinstance(ix.postings.snapshot, SmallSnapshot)
    shutil.copytree(corpus / "daily", corpus / "bulk")  # ~1,100 chunks more: past the limit
    ix.reconcile()
    assert ix.postings.snapshot is not None and not isinstance(ix.postings.snapshot, SmallSnapshot)
    assert_same_as_fts(ix, make_queries(30, seed=22))
    shutil.rmtree(corpus / "bulk")
    ix.reconcile()  # back under the limit, above half of it: numpy still (no build back and forth)
    assert ix.postings.snapshot is not None and not isinstance(ix.postings.snapshot, SmallSnapshot)
    monkeypatch.setattr(postings_base, "SMALL_CHUNKS", 2700)  # now the tier is at most half of it
    write(corpus, "notes/after.md", "# After\n\nsassafras noted once the tier shrank\n")
    ix.apply_paths(["notes/after.md"])
    assert isinstance(ix.postings.snapshot, SmallSnapshot)
    assert_same_as_fts(ix, ["sassafras", *make_queries(30, seed=23)])
    ix.close()


@pytest.mark.parametrize("held", [True, False], ids=["numpy-held", "as-sized"])
def test_a_tier_held_in_numpy_stays_so_through_commits_and_compactions(
    corpus: Path, monkeypatch: pytest.MonkeyPatch, held: bool
) -> None:
    """A tier held in numpy's layout (a process with an embedder has numpy loaded anyway) is built
    in it whatever its size, and stays in it through a steady stream of writes and the compactions
    they make, with no build after the first; a tier not held keeps the ``array`` layout its size
    asks for. The answers are FTS5's either way."""
    from sidecar.index import postings

    builds: list[bool] = []
    real_build = postings.build_snapshot

    def counted(conn: sqlite3.Connection, gen: int, **kwargs: bool) -> Snapshot:
        builds.append(kwargs.get("numpy", False))
        return real_build(conn, gen, **kwargs)

    monkeypatch.setattr(postings, "build_snapshot", counted)
    _lower_the_compaction_floor(monkeypatch)
    ix = TierIndex(corpus)
    if held:
        ix.hold_postings_in_numpy()
    ix.open(postings=True)
    first = ix.postings.snapshot
    assert first is not None and first.live <= postings_base.SMALL_CHUNKS // 2
    assert isinstance(first, SmallSnapshot) != held
    assert builds == [held]
    merges = 0
    snap = first
    for i in range(2 * first.untidy_limit + 100):  # a rewritten chunk a write: one untidy slot each
        with (corpus / "topics" / f"held-{i % 7}.md").open("a", encoding="utf-8") as f:
            f.write(f"- heldtoken{i}x noted during the run\n")
        ix.apply_paths([f"topics/held-{i % 7}.md"])
        nxt = ix.postings.snapshot
        assert nxt is not None and isinstance(nxt, SmallSnapshot) != held
        merges += nxt.base_slots != snap.base_slots or nxt.untidy_slots < snap.untidy_slots
        snap = nxt
    assert merges >= 2, "the stream went through compactions"
    (corpus / "topics" / "held-3.md").unlink()
    ix.apply_paths(["topics/held-3.md"])
    assert isinstance(ix.postings.snapshot, SmallSnapshot) != held
    assert builds == [held], "no build after the first"
    assert_same_as_fts(ix, ["heldtoken5x", "heldtoken399x noted", *make_queries(30, seed=24)])
    ix.close()


def test_a_tier_held_in_numpy_after_its_build_is_built_again_once(corpus: Path) -> None:
    """Asked to hold numpy's layout once its postings are built in ``array``s, the tier builds them
    again in numpy's, then keeps them there."""
    ix = TierIndex(corpus)
    ix.open(postings=True)
    assert isinstance(ix.postings.snapshot, SmallSnapshot)
    ix.hold_postings_in_numpy()
    built = ix.postings.snapshot
    assert built is not None and not isinstance(built, SmallSnapshot)
    ix.hold_postings_in_numpy()
    assert ix.postings.snapshot is built, "already numpy's: not built again"
    assert_same_as_fts(ix, make_queries(20, seed=25))
    ix.close()


@pytest.mark.slow
def test_a_small_tier_never_loads_numpy(corpus: Path) -> None:
    """Built, searched, written (a delta and a compaction) and rebuilt, a small tier's postings
    leave numpy unimported: an idle sidecar does not hold its 10-15 MB."""
    probe = f"""
import shutil, sys
from pathlib import Path
from sidecar.index.tier_index import TierIndex
root = Path({str(corpus)!r})
ix = TierIndex(root)
ix.open(postings=True)
assert ix.status()["bm25"]["engine"] == "postings"
assert ix.search_postings("deploy rollback postgres", 10)
shutil.copytree(root / "daily", root / "more")
ix.reconcile()
assert ix.postings.snapshot.delta_slots == 0, "compacted"
(root / "notes" / "n.md").write_text("# N\\n\\nnasturtium\\n")
ix.apply_paths(["notes/n.md"])
assert [h.path for h in ix.search("nasturtium")] == ["notes/n.md"]
ix.rebuild()
assert ix.search_postings("nasturtium", 10)
ix.close()
print("numpy" in sys.modules)
"""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert done.stdout.split()[-1] == "False", done.stdout + done.stderr


def test_a_small_tier_s_postings_weigh_twice_for_the_event_loop(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scored in Python, a posting costs about twice what numpy's vectorised pass does: the event
    loop leaves a small tier's search to a reader thread at half the postings."""
    from sidecar.index.bm25 import _postings_count

    ix = TierIndex(corpus)
    ix.open()
    small = _fresh(ix)
    monkeypatch.setattr(postings_base, "SMALL_CHUNKS", 0)
    large = _fresh(ix)
    tokens = ix.bm25.query_tokens(VOCAB[:6])
    assert _postings_count(small, tokens) == 2 * _postings_count(large, tokens) > 0
    ix.close()


def test_a_chunk_id_beyond_32_bits_is_read_and_ranked(index: TierIndex) -> None:
    """A build reads chunk ids as fixed-width numbers: one past 2**32 (SQLite's rowids go to 2**63)
    takes the wide form, and ranks as FTS5 ranks it."""
    conn = index.writer
    cols = [r[1] for r in conn.execute("PRAGMA table_info(chunks)")]
    (low,) = conn.execute("SELECT min(id) FROM chunks").fetchone()
    others = ", ".join(c for c in cols if c != "id")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(f"INSERT INTO chunks (id, {others}) SELECT ?, {others} FROM chunks WHERE id = ?", (1 << 33, low))
    conn.execute("DELETE FROM chunks WHERE id = ?", (low,))
    conn.execute("UPDATE chunks SET heading = 'Wideid', body = 'wideid ocelot rollback' WHERE id = ?", (1 << 33,))
    conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'chunks_gen'")
    conn.execute("COMMIT")
    index.postings.snapshot = fresh = _fresh(index)
    assert fresh.ids[-1] == 1 << 33
    hits = index.search_postings("wideid ocelot", 10)
    assert hits is not None and hits[0].id == 1 << 33
    assert_same_as_fts(index, ["wideid", "ocelot rollback", *make_queries(20, seed=24)])


def test_the_build_empties_the_writer_s_page_cache_after_it(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build reads the whole index through the writer connection: a sidecar nobody has asked
    anything yet would keep that page cache (the idle release follows responses)."""
    from sidecar.index import tier_index

    shrunk: list[sqlite3.Connection] = []
    real = tier_index.shrink_memory
    monkeypatch.setattr(tier_index, "shrink_memory", lambda conn: (shrunk.append(conn), real(conn)))
    ix = TierIndex(corpus)
    ix.open()
    assert shrunk == []
    ix.enable_postings()
    assert shrunk == [ix.writer] and ix.postings.snapshot is not None
    ix.close()
