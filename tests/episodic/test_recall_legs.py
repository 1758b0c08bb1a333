"""A typed recall runs its two legs at once: BM25 reads while the query's model runs, and the answer
is the one the legs give either way."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from sidecar.clock import utcnow
from sidecar.episodic import SqliteJournalStore, index_new
from sidecar.episodic.entry import JournalEntry, StoredEntry
from sidecar.episodic.memories import Identity, RecallRequest, recall_memories
from sidecar.episodic.query import ScopeFilter
from sidecar.retrieval.embed.onnx import OnnxEmbedder
from tests.support.embedding import needs_model

LINES = [
    "The user prefers dark mode in every editor",
    "Invoices are generated on the first of the month",
    "Deploys to production need two approvals",
    "Alice owns the billing pipeline",
    "Search latency regressed after the index rebuild",
    "Rollbacks are done with the deploy tool, never by hand",
    "Bob prefers tabs over spaces",
    "Auth tokens expire after twelve hours",
]
QUERIES = ["what theme does the user like", "who is responsible for billing", "how do we undo a bad deploy", "zebra"]


class BM25Seen:
    """The real store, noting when a recall's BM25 leg has asked the reader for its rows."""

    def __init__(self, store: SqliteJournalStore) -> None:
        self.store = store
        self.asked = asyncio.Event()

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    async def bm25_entries(self, where: ScopeFilter, q: str, limit: int) -> list[StoredEntry]:
        read = asyncio.ensure_future(self.store.bm25_entries(where, q, limit))
        await asyncio.sleep(0)  # the read is on the reader thread's queue
        self.asked.set()
        return await read


class AfterBM25:
    """The real model, which starts the query's run only once the BM25 leg has asked for its rows:
    a recall that waited for the vector before reading BM25 would never get one."""

    def __init__(self, model: OnnxEmbedder, seen: BM25Seen) -> None:
        self.model = model
        self.seen = seen

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    async def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        async with asyncio.timeout(60):  # a bound for the failure only: the wait is on the event
            await self.seen.asked.wait()
        return await self.model.embed(texts)


@needs_model
async def test_bm25_reads_while_the_query_is_embedded_and_the_answer_is_the_same(
    tmp_path: Path, onnx_model: OnnxEmbedder
) -> None:
    built = await SqliteJournalStore.open(tmp_path / "journal.sqlite")
    for n, line in enumerate(LINES * 4):
        entry = JournalEntry(
            workspace_id="w", agent_id="a", entry_type="memory.fact", summary=f"{line} ({n})", memory_type="fact"
        )
        await built.append(entry)
    await index_new(built, onnx_model)
    await built.aclose()
    shutil.copy(tmp_path / "journal.sqlite", tmp_path / "copy.sqlite")  # each way marks its own hits referenced
    who = Identity("w", "a", None, "default")
    now = utcnow()
    answers: list[list[list[tuple[str, float, str]]]] = []
    for path, waits in (("journal.sqlite", False), ("copy.sqlite", True)):
        store = await SqliteJournalStore.open(tmp_path / path)
        try:
            answers.append([])
            for text in QUERIES:
                seen = BM25Seen(store)
                embedder = AfterBM25(onnx_model, seen) if waits else onnx_model
                req = RecallRequest.from_json({"query": text}, who, default_scope="own", default_scoring="importance")
                hits, dense = await recall_memories(seen, embedder, req, crew_id=None, now=now)  # type: ignore[arg-type]
                assert dense == "ok"
                answers[-1].append([(h.entry.id, h.parts.score, h.via) for h in hits])
        finally:
            await store.aclose()
    assert answers[0] == answers[1]
    assert sum(map(len, answers[0])) >= 3  # not a comparison of empty answers
    assert any(via == "both" for answer in answers[0] for _, _, via in answer)  # both legs took part
