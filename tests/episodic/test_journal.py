"""The journal itself: the embedding filter, validation, the FTS5 mirror, migrations, compaction."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from sidecar.episodic import JournalEntry, SqliteJournalStore, compact, should_embed, wants_embedding
from sidecar.episodic import sqlite_sql as qs
from sidecar.episodic.entry import MAX_PAYLOAD_CHARS
from sidecar.episodic.schema import MIGRATIONS
from sidecar.episodic.store import NewEmbedding, Relation
from sidecar.errors import BadRequest, Conflict

NOW = datetime(2025, 6, 1, tzinfo=UTC)
SEVERITIES = ("debug", "info", "warn", "error")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteJournalStore]:
    opened = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    yield opened
    await opened.aclose()


def entry(
    summary: str, *, ws: str = "w1", agent: str = "a1", kind: str = "peer.escalation", **kw: object
) -> JournalEntry:
    return JournalEntry(workspace_id=ws, agent_id=agent, entry_type=kind, summary=summary, **kw)  # type: ignore[arg-type]


# -- which types and severities get embedded, row by row --------------------------------------
ALWAYS = ["peer.escalation", "summary.generated", "memory.consolidated", "approval.denied", "eval.regression_detected"]
WARN_OR_ERROR = ["keeper.decision", "mission.status_change"]
NEVER = [
    "peer.conversation",
    "exec.output_chunk",
    "container.metrics",
    "network.egress",
    "network.dns",
    "memory.updated",
]


@pytest.mark.parametrize("entry_type", ALWAYS)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_always_embedded_types(entry_type: str, severity: str) -> None:
    assert should_embed(entry_type, severity) is True


@pytest.mark.parametrize("entry_type", WARN_OR_ERROR)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_warn_or_error_types(entry_type: str, severity: str) -> None:
    assert should_embed(entry_type, severity) is (severity in ("warn", "error"))


@pytest.mark.parametrize("entry_type", NEVER)
@pytest.mark.parametrize("severity", SEVERITIES)
def test_never_embedded_types(entry_type: str, severity: str) -> None:
    assert should_embed(entry_type, severity) is False


def test_override_is_checked_first() -> None:
    assert wants_embedding("exec.output_chunk", "debug", {"episodic": True}) is True
    assert wants_embedding("peer.conversation", "info", {"episodic": True}) is True
    assert wants_embedding("keeper.decision", "info", {"episodic": True}) is True
    # Only a literal true forces it; anything else leaves the table in charge.
    assert wants_embedding("exec.output_chunk", "error", {"episodic": "yes"}) is False
    assert wants_embedding("peer.escalation", "info", {"episodic": False}) is True


async def test_append_stores_the_embeddable_flag(store: SqliteJournalStore) -> None:
    rows = [
        await store.append(entry("escalated", kind="peer.escalation")),
        await store.append(entry("keeper said ok", kind="keeper.decision", severity="info")),
        await store.append(entry("keeper denied", kind="keeper.decision", severity="error")),
        await store.append(entry("chatter", kind="peer.conversation", refs={"episodic": True})),
        await store.append(entry("log line", kind="exec.output_chunk")),
    ]
    assert [r.embeddable for r in rows] == [True, False, True, True, False]
    assert [r.seq for r in rows] == [1, 2, 3, 4, 5]


# -- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"entry_type": "peer.escalation", "summary": "x"}, "workspace_id is required"),
        ({"workspace_id": "", "entry_type": "peer.escalation", "summary": "x"}, "workspace_id is required"),
        ({"workspace_id": 7, "entry_type": "peer.escalation", "summary": "x"}, "workspace_id must be"),
        ({"workspace_id": "w", "summary": "x"}, "entry_type"),
        ({"workspace_id": "w", "entry_type": "a b", "summary": "x"}, "entry_type"),
        ({"workspace_id": "w", "entry_type": "t", "summary": "  "}, "summary must be a non-empty string"),
        ({"workspace_id": "w", "entry_type": "t", "summary": 3}, "summary must be a non-empty string"),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x", "severity": "fatal"}, "severity must be one of"),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x", "payload": [1]}, "payload must be a JSON object"),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x", "refs": "episodic"}, "refs must be a JSON object"),
        (
            {"workspace_id": "w", "entry_type": "t", "summary": "x", "priority": "urgent"},
            "priority must be an integer from 1 to 10, or one of",
        ),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x", "ts": "yesterday"}, "ts is not an ISO 8601"),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x", "ts": 12}, "ts must be an ISO 8601 string"),
        (
            {"workspace_id": "w", "entry_type": "t", "summary": "x", "colour": "red"},
            "unknown field: colour (this operation takes:",
        ),
        ({"workspace_id": "w", "entry_type": "t", "summary": "x" * 4001}, "longer than 4000"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_invalid_entries_are_clear_bad_requests(body: object, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        JournalEntry.from_json(body)
    assert message in caught.value.message


def test_ts_is_normalised_to_utc() -> None:
    parsed = JournalEntry.from_json(
        {"workspace_id": "w", "entry_type": "t", "summary": "x", "ts": "2025-06-01T02:00:00+02:00"}
    )
    assert parsed.ts == datetime(2025, 6, 1, tzinfo=UTC)


async def test_duplicate_id_is_a_conflict(store: SqliteJournalStore) -> None:
    await store.append(entry("first", id="fixed-id"))
    with pytest.raises(Conflict):
        await store.append(entry("second", id="fixed-id"))


def test_the_payload_limit_is_of_its_json_with_the_default_separators() -> None:
    """The entry keeps its payload's stored (compact) JSON from the one serialisation the check
    makes; the limit stays the one on the JSON with ``", "`` and ``": "``, up to the character,
    whether the separators are most of the text or almost none of it."""
    for make in (lambda n: {"k": [1] * n}, lambda n: {"k": "x" * n}):
        low, high = 0, MAX_PAYLOAD_CHARS  # the largest n whose spaced JSON fits
        while low < high:
            mid = (low + high + 1) // 2
            low, high = (
                (mid, high) if len(json.dumps(make(mid), ensure_ascii=False)) <= MAX_PAYLOAD_CHARS else (low, mid - 1)
            )
        fits, over = make(low), make(low + 1)
        assert entry("x", payload=fits).payload_json == json.dumps(fits, separators=(",", ":"))
        assert len(json.dumps(over, separators=(",", ":"))) <= MAX_PAYLOAD_CHARS  # only the spaced form is over
        with pytest.raises(BadRequest, match="larger than"):
            entry("x", payload=over)
        with pytest.raises(BadRequest, match="larger than"):
            entry("x", refs=over)


async def test_the_journal_stores_the_payload_it_validated(store: SqliteJournalStore) -> None:
    """The row holds the payload as it was checked, in compact JSON with its text unescaped; a
    dict changed after the entry was built (a NaN put in) does not reach the journal."""
    payload: dict[str, object] = {"path": "notes/ünï.md", "seq": 3}
    built = entry("memory updated", payload=payload, refs={"episodic": ["je_1"]})
    payload["seq"] = float("nan")
    stored = await store.append(built)
    assert stored.payload == {"path": "notes/ünï.md", "seq": 3}
    assert stored.refs == {"episodic": ["je_1"]}
    conn = sqlite3.connect(store.path)
    try:
        row = conn.execute("SELECT payload, refs, tags FROM journal_entries WHERE id = ?", (stored.id,)).fetchone()
    finally:
        conn.close()
    assert row == ('{"path":"notes/ünï.md","seq":3}', '{"episodic":["je_1"]}', "[]")
    assert [h.id for h in await store.search("ünï", "w1", 10)] == [stored.id]


# -- FTS mirror -------------------------------------------------------------------------------
def fts_integrity(path: Path) -> None:
    """FTS5's own check that the index matches the content table (raises if not)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("INSERT INTO journal_entries_fts(journal_entries_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        conn.close()


async def test_search_uses_the_fts_mirror_within_the_workspace(store: SqliteJournalStore) -> None:
    await store.append(entry("Checkout pod OOM killed", payload={"pod": "checkout-7f"}))
    await store.append(entry("Checkout pod OOM killed", ws="w2"))
    await store.append(entry("billing cron finished", kind="exec.output_chunk"))
    hits = await store.search("oom checkout", "w1", 10)
    assert [h.summary for h in hits] == ["Checkout pod OOM killed"]
    assert hits[0].workspace_id == "w1"
    assert [h.summary for h in await store.search("checkout-7f", "w1", 10)] == ["Checkout pod OOM killed"]
    assert [h.summary for h in await store.search("billing", "w1", 10)] == ["billing cron finished"]
    assert await store.search("oom billing", "w1", 10) == []  # every word must match


@pytest.mark.parametrize(
    "hostile",
    [
        '"; DROP TABLE journal_entries; --',
        "NEAR(oom checkout)",
        "oom OR",
        "summary:oom",
        "*",
        '"unterminated',
        "-oom ^x",
    ],
)
async def test_user_text_never_reaches_fts_syntax(store: SqliteJournalStore, hostile: str) -> None:
    await store.append(entry("oom checkout"))
    await store.search(hostile, "w1", 10)  # no FTS5 syntax error, whatever the text
    assert len(await store.recent("w1", 10)) == 1


async def test_fts_mirror_follows_update_and_delete(store: SqliteJournalStore) -> None:
    first = await store.append(entry("disk full on builder"))
    second = await store.append(entry("cache warm on builder"))
    assert await store.update("w1", first.id, summary="quota exceeded on builder", payload={"k": "ledger"})
    assert await store.search("disk", "w1", 10) == []
    assert [h.id for h in await store.search("quota", "w1", 10)] == [first.id]
    assert [h.id for h in await store.search("ledger", "w1", 10)] == [first.id]
    assert not await store.update("w2", first.id, summary="other workspace cannot touch it")
    assert await store.delete("w1", second.id)
    assert await store.search("cache", "w1", 10) == []
    assert [h.id for h in await store.search("builder", "w1", 10)] == [first.id]
    fts_integrity(store.path)


def fts_blocks(path: Path) -> list[tuple[int, bytes]]:
    """The FTS5 mirror's stored segments and structure, as they are on disk."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, block FROM journal_entries_fts_data ORDER BY id").fetchall()
    finally:
        conn.close()


async def test_writes_that_leave_summary_and_payload_alone_leave_the_fts_mirror_alone(
    store: SqliteJournalStore,
) -> None:
    """Marking hits referenced, a feedback and a stored vector change no word the mirror holds: its
    segments are not rewritten, and it still matches the entries (an edit of the summary, above, is
    followed)."""
    stored = [await store.append(entry(f"deploy {n} rolled back on builder")) for n in range(3)]
    before = fts_blocks(store.path)
    await store.mark_referenced("w1", [e.id for e in stored], NOW)
    await store.feedback("w1", stored[1].id, False, NOW)
    await store.add_embeddings([NewEmbedding(stored[2].id, np.ones(4, dtype=np.float32), "m", 0.5)], [], NOW)
    assert fts_blocks(store.path) == before
    assert {h.id for h in await store.search("rolled builder", "w1", 10)} == {e.id for e in stored}
    fts_integrity(store.path)


async def test_migrations_are_recorded_and_reapplying_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    for _ in range(2):
        opened = await SqliteJournalStore.open(path)
        await opened.append(entry("hello"))
        await opened.aclose()
    conn = sqlite3.connect(path)
    try:
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()
    assert versions == list(range(1, len(MIGRATIONS) + 1))
    assert mode == "wal"


async def test_a_journal_file_replaced_under_the_store_is_followed_not_written_as_a_ghost(tmp_path: Path) -> None:
    """The memory dir restored from a backup: the next write opens the file there now (migrated),
    and reads answer from it; the replaced file's entries are not served from a stale reader."""
    path = tmp_path / "journal.sqlite"
    opened = await SqliteJournalStore.open(path)
    try:
        before = await opened.append(entry("before the restore"))
        assert await opened.get("w1", before.id) is not None
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        with capture_logs() as logs:
            after = await opened.append(entry("after the restore"))
        assert any(e["event"] == "journal.reopened" for e in logs)
        assert await opened.get("w1", before.id) is None
        assert [e.id for e in await opened.recent("w1", 5)] == [after.id]
    finally:
        await opened.aclose()
    conn = sqlite3.connect(path)
    try:
        assert [r[0] for r in conn.execute("SELECT id FROM journal_entries")] == [after.id]
    finally:
        conn.close()


async def test_append_as_latest_takes_the_agents_own_identity_through_an_index(store: SqliteJournalStore) -> None:
    """Every memory write journals a memory.updated entry under the identity of the agent's newest
    own entry: finding it must not walk back over all of those (it did: a full scan per write)."""
    first = await store.append(entry("before any", ws="w0", agent="a0", kind="memory.updated"), as_latest=True)
    assert (first.workspace_id, first.agent_id) == ("w0", "a0")  # nothing of its own yet: kept as given
    await store.append(entry("mine", ws="w9", agent="a9"))
    for n in range(300):
        await store.append(entry(f"write {n}", ws="w0", agent=None, kind="memory.updated"), as_latest=True)  # type: ignore[arg-type]
    last = await store.append(entry("last", ws="w0", agent=None, kind="memory.updated"), as_latest=True)  # type: ignore[arg-type]
    assert (last.workspace_id, last.agent_id) == ("w9", "a9")
    assert (await store.recent("w0", 5))[0].id == first.id  # only the first stayed where it was put
    plain = await store.append(entry("not as latest", ws="w1", agent="a1"))
    assert (plain.workspace_id, plain.agent_id) == ("w1", "a1")
    conn = sqlite3.connect(store.path)
    try:
        plan = " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + qs.LATEST_IDENTITY))
    finally:
        conn.close()
    # The partial index holds only the agent's own entries: its first row, read backwards, is the answer.
    assert "USING INDEX journal_entries_own" in plan, plan


async def test_record_stores_what_append_stores_and_returns_its_id(store: SqliteJournalStore) -> None:
    """``record`` (what each memory write journals through) skips reading the row back: the row it
    stores is the one ``append`` stores for the same entry, identity taken as latest included."""
    await store.append(entry("mine", ws="w9", agent="a9"))
    appended = await store.append(entry("write", ws="w0", agent=None, kind="memory.updated"), as_latest=True)  # type: ignore[arg-type]
    entry_id = await store.record(entry("write", ws="w0", agent=None, kind="memory.updated"), as_latest=True)  # type: ignore[arg-type]
    recorded = await store.get("w9", entry_id)
    assert recorded is not None and recorded.id == entry_id != appended.id
    same = ("seq", "id", "ts")
    assert dataclasses.replace(recorded, **{k: getattr(appended, k) for k in same}) == appended
    assert recorded.seq == appended.seq + 1
    given = await store.record(entry("named", ws="w1", agent="a1", id="je_given"))
    assert given == "je_given" and (await store.get("w1", "je_given")) is not None


def generation(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(qs.GENERATION).fetchone()[0])
    finally:
        conn.close()


async def test_an_append_moves_the_generation_only_when_it_supersedes_a_served_row(tmp_path: Path) -> None:
    """A new entry has no vector yet, so a plain append (every memory write's ``memory.updated``
    among them) leaves the generation, and every process's cached matrix, as they were; a topic-key
    upsert takes the old holder out of recall, so it moves it, and a second store on the same file
    (the CLI) no longer serves the superseded row."""
    path = tmp_path / "journal.sqlite"
    store = await SqliteJournalStore.open(path)
    other = await SqliteJournalStore.open(path)
    try:
        held = await store.append(entry("deploy window is friday", ws="w", topic_key="deploy", memory_type="fact"))
        await store.add_embeddings([NewEmbedding(held.id, np.ones(4, dtype=np.float32), "m", 0.5)], [], NOW)
        assert set((await other.vectors("w", "m")).row_of) == {held.id}
        before = generation(path)
        await store.append(entry("mine", ws="w", agent="a1"))
        await store.record(entry("memory updated: agent notes.md", ws="w", kind="memory.updated"), as_latest=True)
        assert generation(path) == before
        assert [e.entry_type for e in await store.search("notes", "w", 10)] == ["memory.updated"]  # still searchable
        newer = await store.append(entry("deploy window is monday", ws="w", topic_key="deploy", memory_type="fact"))
        assert newer.supersedes == held.id and generation(path) == before + 1
        assert set((await other.vectors("w", "m")).row_of) == set()
        assert set((await store.vectors("w", "m")).row_of) == set()
    finally:
        await other.aclose()
        await store.aclose()


# -- compaction -------------------------------------------------------------------------------
async def test_compaction_archives_truncates_and_cascades(store: SqliteJournalStore) -> None:
    long_payload = {"log": "x" * 1000, "tag": "zebra"}
    old = await store.append(entry("ancient outage zebra", ts=NOW - timedelta(days=100), payload=long_payload))
    kept = await store.append(entry("permanent rule zebra", ts=NOW - timedelta(days=100), priority="permanent"))
    new = await store.append(entry("fresh outage zebra", ts=NOW - timedelta(days=1)))
    vec = np.array([1.0, 0.0], dtype=np.float32)
    await store.add_embeddings([NewEmbedding(e.id, vec, "m", 0.9) for e in (old, kept, new)], [], NOW)
    await store.add_relations(
        [Relation(new.id, old.id, "similar", 0.9), Relation(kept.id, old.id, "supports", 1.0)], NOW
    )

    assert await compact(store, timedelta(days=90), NOW) == 1

    assert await store.get("w1", old.id) is None
    assert {h.id for h in await store.search("zebra", "w1", 10)} == {kept.id, new.id}
    fts_integrity(store.path)
    conn = sqlite3.connect(store.path)
    try:
        archived = conn.execute("SELECT id, payload, summary FROM journal_entries_archived").fetchall()
        embedded = {r[0] for r in conn.execute("SELECT entry_id FROM journal_embeddings")}
        relations = conn.execute("SELECT COUNT(*) FROM memory_relations").fetchone()[0]
    finally:
        conn.close()
    assert len(archived) == 1 and archived[0][0] == old.id and archived[0][2] == "ancient outage zebra"
    assert len(archived[0][1]) == 400
    assert archived[0][1] == '{"log":"' + "x" * 392
    assert embedded == {kept.id, new.id}
    assert relations == 0


async def test_compaction_refuses_a_non_positive_age(store: SqliteJournalStore) -> None:
    with pytest.raises(BadRequest):
        await compact(store, timedelta(0), NOW)


def test_public_names_are_pinned() -> None:
    import sidecar.episodic

    assert sorted(sidecar.episodic.__all__) == sorted(
        [
            "HealthSnapshot",
            "RecalledEntry",
            "Indexer",
            "JOURNAL_FILE",
            "Journal",
            "JournalEntry",
            "JournalStore",
            "Nudger",
            "Query",
            "Scope",
            "ScopeFilter",
            "SqliteJournalStore",
            "StoredEntry",
            "base_importance",
            "compact",
            "compute_health",
            "decay_and_reinforce",
            "decayed_importance",
            "health_main",
            "hybrid_recall",
            "index_new",
            "latest_health",
            "link_supports",
            "open_journal",
            "recall",
            "record_memory_updated",
            "render_injection",
            "should_embed",
            "wants_embedding",
        ]
    )
    assert all(hasattr(sidecar.episodic, name) for name in sidecar.episodic.__all__)


async def test_unindexed_finds_entries_without_a_vector_or_with_another_models(store: SqliteJournalStore) -> None:
    """What the indexer embeds: new entries, an entry whose text changed, and, after the model
    changed, every entry still holding the old model's vector; nothing once all are current."""
    ids = [(await store.append(entry(f"escalation {n}"))).id for n in range(3)]
    assert [e.id for e in await store.unindexed("m1", 10)] == ids
    vector = np.ones(4, dtype=np.float32)
    await store.add_embeddings([NewEmbedding(i, vector, "m1", 0.5) for i in ids], [], NOW)
    assert await store.unindexed("m1", 10) == []
    await store.update("w1", ids[1], summary="escalation one, edited")
    assert [e.id for e in await store.unindexed("m1", 10)] == [ids[1]]
    await store.add_embeddings([NewEmbedding(ids[1], vector, "m1", 0.5)], [], NOW)
    assert [e.id for e in await store.unindexed("m2", 10)] == ids  # a new model re-embeds them all
    assert [e.id for e in await store.unindexed("m2", 2)] == ids[:2]
    await store.add_embeddings([NewEmbedding(i, vector, "m2", 0.5) for i in ids], [], NOW)
    assert await store.unindexed("m2", 10) == []


async def test_bm25_leg_leaves_out_words_too_common_to_be_evidence(
    store: SqliteJournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidecar.episodic.query import ScopeFilter

    monkeypatch.setattr(qs, "MAX_TERM_DOCS", 3)  # the cap scaled down from 5,000 entries to 3
    common = [(await store.append(entry(f"deploy step {n}"))).id for n in range(4)]
    rare = (await store.append(entry("deploy of the zebra service"))).id
    where = ScopeFilter("w1", agent_id="a1")
    assert await store.bm25_rank(where, "deploy", 10) == []  # in 5 entries: no evidence
    assert await store.bm25_rank(where, "Deploy zebra", 10) == [rare]
    assert set(await store.bm25_rank(where, "step", 10)) == set()  # in 4 entries
    assert await store.bm25_rank(where, "step 2", 10) == [common[2]]


async def test_a_word_too_common_is_evidence_again_once_entries_leave(
    store: SqliteJournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leg remembers which words are too common; an edit or a delete that takes the word out of
    entries makes it count again, and an append that puts it back over the cap leaves it out."""
    from sidecar.episodic.query import ScopeFilter

    monkeypatch.setattr(qs, "MAX_TERM_DOCS", 3)
    ids = [(await store.append(entry(f"deploy step {n}"))).id for n in range(4)]
    where = ScopeFilter("w1", agent_id="a1")
    assert await store.bm25_rank(where, "deploy", 10) == []  # in 4 entries
    assert await store.bm25_rank(where, "deploy", 10) == []
    assert await store.update("w1", ids[0], summary="rollback step 0")
    assert set(await store.bm25_rank(where, "deploy", 10)) == set(ids[1:])  # in 3
    ids.append((await store.append(entry("deploy step 4"))).id)
    assert await store.bm25_rank(where, "deploy", 10) == []  # in 4 again
    assert await store.delete("w1", ids[1])
    assert set(await store.bm25_rank(where, "deploy", 10)) == set(ids[2:])  # in 3


def test_a_large_matrix_ranks_the_same_split_over_two_threads() -> None:
    from sidecar.episodic.query import ScopeFilter
    from sidecar.episodic.vector_set import SPLIT_ROWS, VectorRow, VectorSet

    rng = np.random.default_rng(7)
    rows = SPLIT_ROWS + 501
    matrix = rng.standard_normal((rows, 8)).astype(np.float32)
    vectors = VectorSet.build(
        [VectorRow(f"e{i}", "a", None, "default", "fact", None, 1.0, matrix[i].tobytes(), 8) for i in range(rows)]
    )
    query = rng.standard_normal(8).astype(np.float32)
    expected = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)) @ (query / np.linalg.norm(query))
    ranked = vectors.rank(ScopeFilter("w", agent_id="a"), query, 20, weighted=False, exclude=())
    assert [s.entry_id for s in ranked] == [f"e{i}" for i in np.argsort(-expected, kind="stable")[:20]]
    assert [s.cosine for s in ranked] == pytest.approx(sorted(expected, reverse=True)[:20], abs=1e-5)


async def test_the_indexer_stops_when_a_notify_meets_the_stop(
    store: SqliteJournalStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notify() in the same moment as stop()'s cancel must not leave the loop asleep for hours."""
    import asyncio

    from sidecar import tasks
    from sidecar.episodic.indexer import Indexer

    # stop() cancels again while the task runs on; here it cancels once, so the loop's first cancel
    # must end it (a lost cancel leaves stop() waiting, and the guard below fails the test).
    monkeypatch.setattr(tasks, "RECANCEL_S", 3600.0)
    for delay in range(60):
        indexer = Indexer(store, None, debounce=0.0)
        await indexer.start()
        task = indexer._task
        for _ in range(delay % 6):
            await asyncio.sleep(0)
        indexer.notify()
        for _ in range(delay // 6):
            await asyncio.sleep(0)
        try:
            await asyncio.wait_for(indexer.stop(), timeout=60)
        except TimeoutError:
            pytest.fail(f"the indexer's loop lost stop()'s cancel at step {delay}")
        assert task is not None and task.done(), f"the indexer still runs after stop() at step {delay}"
