"""Hybrid search and background embedding with the real in-process model, on real tiers.

The tier, its index, the reindex queue and the batcher are the real ones; the embedder is the
real MiniLM model, wrapped in a class that counts calls and delegates. Outages use a real local
aiohttp server standing in for Ollama (500, 429 with Retry-After, a hang), answering with the
real model's vectors once it recovers.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest
from aiohttp import web
from pytest_aiohttp import AiohttpServer

from sidecar.http.state import SIDECAR
from sidecar.index.queue import ReindexQueue
from sidecar.index.tier import Tier
from sidecar.retrieval import batcher as embed_batcher_module
from sidecar.retrieval import hybrid as hybrid_module
from sidecar.retrieval.batcher import EmbedBatcher, embed_status
from sidecar.retrieval.embed import Backoff, OllamaEmbedder, OnnxEmbedder, Vectors
from sidecar.retrieval.embed.availability import EmbedderHealth
from sidecar.retrieval.hybrid import HybridSearcher
from sidecar.retrieval.vectors import VectorIndex
from tests.support.embedding import needs_model
from tests.support.lag import PathStopwatch
from tests.support.memory import ClientFactory, write
from tests.support.waiting import HANG_GUARD_S, async_wait_until

pytestmark = needs_model

HOUSEHOLD = """# Household

Our feline companion Miso refuses to eat anything except salmon.

The boiler service is booked for the first Monday of every month.
"""
WORK = """# Work

The deploy pipeline runs nightly once the smoke tests are green.

Use PostgreSQL 16 for every new database; the sqlite driver name is sqlite.
"""
TRAVEL = """# Travel

Booked the train to Lisbon for the conference in March, window seat.
"""


class Counting:
    """The real model behind a counter (and, for the model-change test, another model id)."""

    def __init__(self, inner: OnnxEmbedder, model_id: str | None = None) -> None:
        self.inner = inner
        self._model_id = model_id or inner.model_id
        self.calls = 0
        self.texts: list[str] = []
        self.gate: asyncio.Event | None = None  # when a test sets it, batches (not queries) wait for it
        self.query_gate: asyncio.Event | None = None  # the same for single texts (a query)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self.inner.dim

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts.extend(texts)
        if self.gate is not None and len(texts) > 1:
            await self.gate.wait()
        if self.query_gate is not None and len(texts) == 1:
            await self.query_gate.wait()
        return await asyncio.to_thread(self.inner.embed_sync, list(texts))

    async def aclose(self) -> None:
        return None


class Rig:
    """A tier with its queue, vectors, batcher and searcher, as open_embedding wires them."""

    def __init__(
        self,
        root: Path,
        embedder: Any,
        *,
        fusion: str = "weighted",
        query_timeout: float = 1.0,
        prune_every_s: float = embed_batcher_module.PRUNE_EVERY_S,
    ) -> None:
        self.tier = Tier("agent", root)
        self.queue = ReindexQueue({"agent": self.tier})
        self.embedder = embedder
        self.health = EmbedderHealth(embedder, Backoff(base=0.05, max_delay=2.0, jitter=0.0), confirmed=True)
        self.vectors = VectorIndex(self.tier.index.path, embedder.model_id if embedder else None, 0)
        vectors = {"agent": self.vectors} if embedder else {}
        self.searcher = HybridSearcher(embedder, self.health, vectors, fusion=fusion, query_timeout=query_timeout)
        self.batcher = (
            EmbedBatcher(embedder, self.health, {"agent": self.tier}, vectors, poll_s=0.2, prune_every_s=prune_every_s)
            if embedder
            else None
        )

    async def __aenter__(self) -> Rig:
        await self.tier.open()
        self.queue.start()
        if self.batcher is not None:
            self.queue.hooks.append(self.batcher.on_update)
            self.batcher.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.batcher is not None:
            await self.batcher.stop()
        await self.queue.drain_and_stop()
        self.vectors.close()
        await self.tier.close()

    async def settle(self, within: float = HANG_GUARD_S) -> None:
        """Wait until every chunk has a vector of the current model."""

        async def settled() -> bool:
            await asyncio.to_thread(self.vectors.refresh)
            return bool(self.vectors.size and self.vectors.backlog == 0)

        await async_wait_until(
            settled, timeout=within, interval=0.02, message=lambda: f"the backlog to empty: {self.vectors.backlog}"
        )

    async def search(self, query: str, limit: int = 5, explain: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
        return await self.searcher.search(self.tier, query, limit, explain)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write(root, "topics/household.md", HOUSEHOLD)
    write(root, "topics/work.md", WORK)
    write(root, "topics/travel.md", TRAVEL)
    return root


def test_public_names_are_pinned() -> None:
    assert sorted(hybrid_module.__all__) == sorted(
        [
            "CANDIDATES",
            "CONTEXT_AFTER",
            "CONTEXT_BEFORE",
            "DENSE_FLOOR",
            "DENSE_MATCH",
            "DENSE_PIVOT",
            "DENSE_WEIGHT",
            "FUSIONS",
            "QUERY_TIMEOUT_S",
            "SENTENCE_BUDGET",
            "HybridSearcher",
            "Scored",
            "fuse_rrf",
            "fuse_weighted",
            "sentences",
        ]
    )
    assert sorted(embed_batcher_module.__all__) == sorted(
        [
            "IN_PROCESS_BATCH",
            "REMOTE_BATCH",
            "STATES",
            "EmbedBatcher",
            "embed_status",
            "open_embedding",
        ]
    )


def test_weighted_fusion_scores_exactly() -> None:
    from sidecar.retrieval.hybrid import DENSE_FLOOR, DENSE_PIVOT, DENSE_WEIGHT, fuse_weighted

    bm25, dense = [(1, 10.0), (2, 5.0)], [(2, 0.9), (1, 0.5)]
    fused = fuse_weighted(bm25, dense, {1: 0.5, 2: 0.9}, {})
    weight = DENSE_WEIGHT * 0.9 / DENSE_PIVOT  # the best cosine sets the dense weight
    expected = {1: 1.0 + weight * (0.5 - DENSE_FLOOR), 2: 0.5 + weight * (0.9 - DENSE_FLOOR)}
    assert [s.id for s in fused] == [2, 1]
    assert {s.id: s.score for s in fused} == pytest.approx(expected)
    assert fused[0].bm25_rank == 2 and fused[0].dense_rank == 1 and fused[0].context == 0.0


def test_a_vague_best_dense_match_lends_dense_less_say() -> None:
    from sidecar.retrieval.hybrid import fuse_weighted

    bm25 = [(1, 10.0), (2, 6.5)]
    confident = fuse_weighted(bm25, [(2, 0.9), (1, 0.75)], {1: 0.75, 2: 0.9}, {})
    vague = fuse_weighted(bm25, [(2, 0.6), (1, 0.45)], {1: 0.45, 2: 0.6}, {})  # same gaps, 0.3 lower
    assert [s.id for s in confident] == [2, 1]
    assert [s.id for s in vague] == [1, 2]


async def test_semantic_match_that_bm25_cannot_find(memory: Path, model: OnnxEmbedder) -> None:
    query = "which pet food does the cat like"
    async with Rig(memory, Counting(model)) as rig:
        await rig.settle()
        bm25 = await rig.tier.search(query, 10)
        assert not any("Miso" in h.snippet for h in bm25), "the query must share no word with the target"
        results, degraded = await rig.search(query)
    assert degraded == []
    assert "Miso" in results[0]["snippet"]
    assert results[0]["path"] == "topics/household.md" and results[0]["heading"] == "Household"
    assert set(results[0]) == {"source", "path", "heading", "line_start", "line_end", "snippet", "highlights", "score"}


NOTES = """# Notes

She naps on the windowsill most afternoons.
The vet visit is booked for the spring.
Our feline companion Miso refuses to eat anything except salmon.
"""


async def test_a_dense_only_hit_shows_its_sentence_closest_to_the_query(tmp_path: Path, model: OnnxEmbedder) -> None:
    root = tmp_path / "memory"
    write(root, "topics/notes.md", NOTES)
    query = "which pet food does the cat like"
    embedder = Counting(model)
    async with Rig(root, embedder) as rig:
        await rig.settle()
        assert not await rig.tier.search(query, 10), "the query must share no word with the notes"
        calls = embedder.calls
        results, degraded = await rig.search(query)
        between = embedder.calls
        again, _ = await rig.search(query)
        assert embedder.calls == between, "the query's and the sentences' vectors come from their caches"
        assert again == results
    assert degraded == [] and results[0]["path"] == "topics/notes.md"
    assert results[0]["snippet"].startswith("Our feline companion Miso"), results[0]["snippet"]
    assert results[0]["highlights"] == []
    # One call for the query vector and one batch for the sentences of every dense-only hit.
    assert between - calls == 2


async def test_a_dense_only_hit_takes_its_stored_sentence_without_a_model_call(
    tmp_path: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "memory"
    write(root, "topics/notes.md", NOTES)
    query = "which pet food does the cat like"
    calls: list[int] = []
    embed, embed_here = model.embed, model.embed_here

    async def counted(texts: Sequence[str]) -> Vectors:
        calls.append(len(texts))
        return await embed(texts)

    def counted_here(texts: Sequence[str]) -> Vectors:
        calls.append(len(texts))
        return embed_here(texts)

    # Still the in-process embedder: the batcher pools sentences, and a search embeds its query on
    # the thread that ranks. Every model call is counted, on either path.
    monkeypatch.setattr(model, "embed", counted)
    monkeypatch.setattr(model, "embed_here", counted_here)
    # The query is embedded for sure: a loaded host may take over the default second for it.
    async with Rig(root, model, query_timeout=30.0) as rig:
        await rig.settle()
        assert not await rig.tier.search(query, 10), "the query must share no word with the notes"
        results, degraded = await rig.search(query)
    assert degraded == [] and results[0]["path"] == "topics/notes.md"
    assert results[0]["snippet"].startswith("Our feline companion Miso"), results[0]["snippet"]
    assert results[0]["highlights"] == []
    assert calls == [1], "the query's vector is the only model call a search makes"


def test_sentences_split_after_stops_and_at_line_breaks() -> None:
    from sidecar.retrieval.hybrid import sentences

    assert sentences("One. Two? Three!\nFour\n\n five") == ["One.", "Two?", "Three!", "Four", "five"]
    assert sentences("x" * 500) == ["x" * 240]


async def test_no_embedder_means_plain_bm25_without_a_degraded_flag(memory: Path) -> None:
    async with Rig(memory, None) as rig:
        results, degraded = await rig.search("salmon boiler", explain=True)
        expected = [h.as_json("agent") for h in await rig.tier.search("salmon boiler", 5)]
    assert degraded == []
    assert [{k: v for k, v in r.items() if k != "explain"} for r in results] == expected
    assert results[0]["explain"]["dense"] == {"rank": None, "score": None}
    assert results[0]["explain"]["bm25"]["rank"] == 1


async def test_unchanged_chunks_are_never_embedded_twice(memory: Path, model: OnnxEmbedder) -> None:
    first = Counting(model)
    async with Rig(memory, first) as rig:
        await rig.settle()
        chunks = (await rig.tier.status())["chunks"]
        assert len(first.texts) == chunks == 3
        await rig.tier.rebuild()  # a full reindex: new chunk ids, same hashes
        await rig.settle()
    assert len(first.texts) == chunks
    again = Counting(model)  # a restart: a new process, the same index file
    async with Rig(memory, again) as rig:
        await rig.settle()
        await asyncio.sleep(0.3)  # a poll or two: still nothing to embed
        assert again.calls == 0
        write(memory, "topics/travel.md", TRAVEL.replace("window seat", "aisle seat"))
        seq = rig.queue.put("agent", "topics/travel.md", "write")
        assert await rig.queue.wait_for(seq, 60)
        await rig.settle()
        assert again.texts == ["Travel\nBooked the train to Lisbon for the conference in March, aisle seat."]
        results, _ = await rig.search("aisle seat on the train")
    assert "aisle seat" in results[0]["snippet"]


async def test_a_new_model_reembeds_and_never_mixes_vectors(memory: Path, model: OnnxEmbedder) -> None:
    async with Rig(memory, Counting(model, "minilm-a")) as rig:
        await rig.settle()
    fresh = Counting(model, "minilm-b")
    async with Rig(memory, fresh) as rig:
        fresh.gate = asyncio.Event()  # hold the re-embedding: search while the new model has nothing
        await async_wait_until(lambda: fresh.calls >= 1, message="the batcher to reach the held embedder")
        await asyncio.to_thread(rig.vectors.refresh)
        assert rig.vectors.size == 0 and rig.vectors.backlog == 3
        results, degraded = await rig.search("salmon")
        assert degraded == [] and "salmon" in results[0]["snippet"]
        fresh.gate.set()
        await rig.settle()
        assert len(fresh.texts) == 3  # every chunk once; no query: the new model had no vector to score

        async def old_vectors_pruned() -> bool:  # once the backlog is done
            models = await rig.tier.write_with(
                lambda c: {m for (m,) in c.execute("SELECT DISTINCT model FROM embeddings")}
            )
            return bool(models == {"minilm-b"})

        await async_wait_until(old_vectors_pruned, timeout=60)


@pytest.mark.parametrize("every", [3600.0, 0.0])
async def test_orphan_vectors_are_pruned_at_most_once_a_while(memory: Path, model: OnnxEmbedder, every: float) -> None:
    async with Rig(memory, Counting(model), prune_every_s=every) as rig:
        await rig.settle()  # the first backlog done: the first prune runs next (waited for, not assumed)
        assert rig.batcher is not None
        batcher = rig.batcher

        async def first_pruned() -> bool:
            return batcher.prunes >= 1

        await async_wait_until(first_pruned, timeout=60, message="the first prune")

        async def stored() -> set[str]:
            return await rig.tier.write_with(lambda c: {h for (h,) in c.execute("SELECT hash FROM embeddings")})

        before = await stored()
        write(memory, "topics/travel.md", TRAVEL.replace("window seat", "aisle seat"))
        assert await rig.queue.wait_for(rig.queue.put("agent", "topics/travel.md", "write"), 60.0)
        await rig.settle()
        current = await rig.tier.write_with(lambda c: {h for (h,) in c.execute("SELECT hash FROM chunks")})
        orphans = before - current
        assert len(orphans) == 1  # the travel note's old text
        if every:
            await asyncio.sleep(1.0)  # five of the batcher's polls: none prunes again within the hour
            assert orphans <= await stored()
        else:

            async def pruned() -> bool:
                return not orphans & await stored()

            await async_wait_until(pruned, timeout=60, message="the orphan to be pruned")


async def test_explain_shows_both_legs_and_the_fused_score(memory: Path, model: OnnxEmbedder) -> None:
    async with Rig(memory, Counting(model)) as rig:
        await rig.settle()
        weighted, _ = await rig.search("what does Miso eat", explain=True)
    top = weighted[0]
    assert "Miso" in top["snippet"]
    ex = top["explain"]
    assert ex["fusion"] == "weighted"
    assert ex["bm25"]["rank"] == 1 and ex["bm25"]["score"] > 0
    assert ex["dense"]["rank"] == 1 and 0 < ex["dense"]["score"] <= 1
    assert ex["fused"] == top["score"]
    assert all(set(r["explain"]) == {"fusion", "bm25", "dense", "context", "standing", "fused"} for r in weighted)
    assert all(r["explain"]["standing"] == 1.0 for r in weighted)  # live text: nothing archived or superseded
    async with Rig(memory, Counting(model), fusion="rrf") as rig:
        await rig.settle()
        fused, _ = await rig.search("what does Miso eat", explain=True)
    ex = fused[0]["explain"]
    assert ex["fusion"] == "rrf"
    expected = sum(1 / (60 + leg["rank"]) for leg in (ex["bm25"], ex["dense"]) if leg["rank"] is not None)
    assert fused[0]["score"] == pytest.approx(expected, abs=1e-6)


async def test_the_batcher_never_blocks_writes(memory: Path, model: OnnxEmbedder) -> None:
    slow = Counting(model)
    slow.gate = asyncio.Event()  # every batch hangs until released
    async with Rig(memory, slow) as rig:
        await async_wait_until(lambda: slow.calls >= 1, message="the batcher to call the embedder")
        assert slow.calls == 1  # the batcher is stuck inside the embedder
        watch = PathStopwatch()
        for n in range(5):
            write(memory, f"daily/2026-06-0{n + 1}.md", f"# Day {n}\nquokka sighting number {n}\n")
            seq = rig.queue.put("agent", f"daily/2026-06-0{n + 1}.md", "write")
        # The embedder stays held until the gate opens below: writes and a search that wait on the
        # batcher never end, so the bounds here are hang guards and the clock is the sidecar's own time.
        assert await rig.queue.wait_for(seq, 60.0)
        results, _ = await asyncio.wait_for(rig.search("quokka", limit=10), 60.0)
        assert not slow.gate.is_set() and slow.calls == 1  # all of it while the batcher was stuck
        assert watch.own() < 2.0, (watch.own(), watch.wall())
        assert len([r for r in results if "quokka" in r["snippet"]]) == 5
        await asyncio.to_thread(rig.vectors.refresh)
        assert rig.vectors.backlog == 3 + 5
        slow.gate.set()
        await rig.settle()


async def test_searches_of_one_query_share_its_model_run(memory: Path, model: OnnxEmbedder) -> None:
    query = "which pet food does the cat like"
    counting = Counting(model)
    async with Rig(memory, counting) as rig:
        await rig.settle()
        counting.query_gate = asyncio.Event()  # the query's model run holds until released
        first = asyncio.create_task(rig.search(query))
        second = asyncio.create_task(rig.search(query))
        await async_wait_until(lambda: query in counting.texts, message="the query's model run to start")
        first.cancel()  # its client went away: the run goes on for the other search
        counting.query_gate.set()
        results, degraded = await second
        with pytest.raises(asyncio.CancelledError):
            await first
    assert degraded == [] and "Miso" in results[0]["snippet"]
    assert counting.texts.count(query) == 1


async def test_a_prefetched_query_is_embedded_once(memory: Path, model: OnnxEmbedder) -> None:
    query = "which pet food does the cat like"
    counting = Counting(model)
    async with Rig(memory, counting) as rig:
        await rig.settle()
        rig.searcher.prefetch(query)
        rig.searcher.prefetch(query)  # already on its way: not started twice
        results, degraded = await rig.search(query)
        rig.searcher.prefetch(query)  # already known: nothing to do
        await asyncio.sleep(0)
    assert degraded == [] and "Miso" in results[0]["snippet"]
    assert counting.texts.count(query) == 1


class HeldHere:
    """``embed_here`` of the in-process model behind a gate and a counter: each call waits on its
    worker thread until ``release`` is set (or fails with ``error``)."""

    def __init__(self, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inner = model.embed_here
        self.release = threading.Event()
        self.texts: list[str] = []
        self.error: Exception | None = None
        monkeypatch.setattr(model, "embed_here", self)

    def __call__(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        assert self.release.wait(30), "never released"
        if self.error is not None:
            raise self.error
        return self.inner(texts)


async def test_the_in_process_model_ranks_on_the_thread_that_embedded_the_query(
    memory: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["which pet food does the cat like", "salmon boiler", "boiler service monday", "train to the coast"]
    async with Rig(memory, model, query_timeout=30.0) as rig:
        await rig.settle()
        ranked_on: list[str] = []
        rank = rig.searcher._rank

        def recorded(*args: Any) -> Any:
            ranked_on.append(threading.current_thread().name)
            return rank(*args)

        monkeypatch.setattr(rig.searcher, "_rank", recorded)
        held = HeldHere(model, monkeypatch)
        held.release.set()
        one_call = [await rig.search(q, explain=True) for q in queries]
        assert held.texts == queries and len(ranked_on) == len(queries)
        # The same searches with each query's vector known beforehand: the ranking hops on its own.
        two_calls = [await rig.search(q, explain=True) for q in queries]
        assert held.texts == queries and len(ranked_on) == 2 * len(queries)
    assert one_call == two_calls
    assert all(degraded == [] for _, degraded in one_call)
    assert "Miso" in one_call[0][0][0]["snippet"]


async def test_an_in_process_query_run_past_its_timeout_answers_bm25_and_is_not_kept(
    memory: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = "boiler service monday"
    async with Rig(memory, model, query_timeout=0.3) as rig:
        await rig.settle()
        held = HeldHere(model, monkeypatch)
        bm25 = [h.as_json("agent") for h in await rig.tier.search(query, 5)]
        results, degraded = await rig.search(query)  # its run is held past the 0.3 s
        assert (results, degraded) == (bm25, ["dense"])
        assert "took over 0.3 s" in (rig.health.last_error or "")
        held.release.set()
        await async_wait_until(lambda: not rig.searcher._embedding, message="the held run to end")
        assert rig.searcher._queries.find((model.model_id, query)) is None


async def test_an_in_process_query_run_shared_by_two_searches_and_a_failing_one(
    memory: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sidecar.retrieval.embed import EmbedderError

    query = "which pet food does the cat like"
    async with Rig(memory, model, query_timeout=30.0) as rig:
        await rig.settle()
        held = HeldHere(model, monkeypatch)
        first = asyncio.create_task(rig.search(query))
        await async_wait_until(lambda: held.texts == [query], message="the query's run to start")
        second = asyncio.create_task(rig.search(query))
        await asyncio.sleep(0.05)
        first.cancel()  # its client went away: the run goes on for the other search
        held.release.set()
        results, degraded = await second
        with pytest.raises(asyncio.CancelledError):
            await first
        assert degraded == [] and "Miso" in results[0]["snippet"]
        assert held.texts == [query], "one model run for both searches"
        assert rig.searcher._queries.find((model.model_id, query)) is not None

        held.error = EmbedderError("the model failed")
        bm25 = [h.as_json("agent") for h in await rig.tier.search("salmon boiler", 5)]
        assert await rig.search("salmon boiler") == (bm25, ["dense"])
        assert rig.health.last_error is not None and "the model failed" in rig.health.last_error


async def test_a_ranking_that_fails_after_an_in_process_run_answers_bm25(
    memory: Path, model: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Rig(memory, model, query_timeout=30.0) as rig:
        await rig.settle()

        def broken(*args: Any) -> Any:
            raise RuntimeError("the matrix is gone")

        monkeypatch.setattr(rig.searcher, "_rank", broken)
        bm25 = [h.as_json("agent") for h in await rig.tier.search("salmon boiler", 5)]
        assert await rig.search("salmon boiler") == (bm25, ["dense"])
        assert rig.health.state == "ready", "the model answered: the embedder is not to blame"


async def test_a_lifted_line_stays_below_the_newer_line_that_restates_it_in_a_fused_answer(
    tmp_path: Path, model: OnnxEmbedder
) -> None:
    from datetime import UTC, datetime, timedelta

    from sidecar.kg.boost import BoostPlan

    today = datetime.now(UTC).date()
    root = tmp_path / "memory"
    old_path, new_path = f"daily/{today - timedelta(days=70)}.md", f"daily/{today - timedelta(days=10)}.md"
    write(root, old_path, "# Log\n\n- The annual boiler service is done by Alder Heating.\n")
    write(root, new_path, "# Log\n\n- The boiler service went to Birchway when Alder Heating retired.\n")
    plan = BoostPlan(["annual"], names=["annual"])  # a name only the older line holds
    async with Rig(root, model, query_timeout=30.0) as rig:
        await rig.settle()
        lifted, degraded = await rig.searcher.search(rig.tier, "boiler service", 2, False, plan)
        plain, _ = await rig.searcher.search(rig.tier, "boiler service", 2, False)
    assert degraded == []
    assert [hit["path"] for hit in plain] == [new_path, old_path]
    assert [hit["path"] for hit in lifted] == [new_path, old_path]


async def test_a_search_after_a_write_embeds_its_query_while_the_write_is_indexed(
    sidecar_client: ClientFactory, memory: Path
) -> None:
    client = await sidecar_client(embedder="onnx", memory_dir=str(memory))
    app = client.server.app
    hybrid, tier = app[SIDECAR].hybrid, app[SIDECAR].tiers["agent"]
    await async_wait_until(lambda: hybrid.vectors["agent"].size == 3, timeout=60)
    released = threading.Event()
    held = asyncio.ensure_future(tier.write_with(lambda _: released.wait(30)))  # the index's writer is busy
    try:
        resp = await client.post("/memory/write", json={"path": "topics/pets.md", "content": "Miso likes tuna now."})
        seq = (await resp.json())["seq"]
        query = "tuna for the cat"
        search = asyncio.ensure_future(client.post("/memory/search", json={"query": query, "after_seq": seq}))
        key = (hybrid.embedder.model_id, query)
        await async_wait_until(lambda: key in hybrid._queries, timeout=60, message="the query's vector")
        assert app[SIDECAR].queue.indexed_seq < seq  # computed while the write still waits to be indexed
    finally:
        released.set()
        await held
    body = await (await search).json()
    assert body["index"]["after_seq_met"] is True and "degraded" not in body
    assert any(hit["path"] == "topics/pets.md" for hit in body["results"])


class FakeOllama:
    """A real HTTP server answering like Ollama's /api/embed, with vectors from the real model."""

    def __init__(self, model: OnnxEmbedder) -> None:
        self.model = model
        self.mode = "ok"
        self.hits: list[float] = []
        self.release = asyncio.Event()
        self.url = ""

    async def embed(self, request: web.Request) -> web.StreamResponse:
        payload = await request.json()
        self.hits.append(time.monotonic())
        if self.mode == "500":
            return web.Response(status=500, text="model crashed")
        if self.mode == "429":
            return web.Response(status=429, text="slow down", headers={"Retry-After": "1"})
        if self.mode == "hang":
            await asyncio.wait_for(self.release.wait(), timeout=10)
        vectors = await asyncio.to_thread(self.model.embed_sync, payload["input"])
        return web.json_response({"model": payload["model"], "embeddings": vectors.tolist()})


@pytest.fixture
async def ollama(aiohttp_server: AiohttpServer, model: OnnxEmbedder) -> AsyncIterator[FakeOllama]:
    fake = FakeOllama(model)
    app = web.Application()
    app.router.add_post("/api/embed", fake.embed)
    server = await aiohttp_server(app)
    fake.url = str(server.make_url("")).rstrip("/")
    yield fake
    fake.release.set()


async def test_outages_degrade_to_bm25_and_the_backlog_resumes(memory: Path, ollama: FakeOllama) -> None:
    ollama.mode = "500"
    embedder = OllamaEmbedder(ollama.url, "nomic-embed-text", timeout=httpx.Timeout(5.0, connect=0.5))
    async with Rig(memory, embedder, query_timeout=0.3) as rig:
        bm25 = [h.as_json("agent") for h in await rig.tier.search("salmon boiler", 5)]
        await async_wait_until(lambda: rig.health.state == "degraded", timeout=60)
        results, degraded = await rig.search("salmon boiler")
        assert (results, degraded) == (bm25, ["dense"])

        ollama.mode = "429"  # Retry-After: 1 is honoured although the backoff base is 50 ms
        waits: list[tuple[str, float]] = []
        failed = rig.health.failed

        def recorded(exc: Exception) -> float:
            delay = failed(exc)
            waits.append((rig.health.last_error or "", delay))
            return delay

        rig.health.failed = recorded  # type: ignore[method-assign]
        # "HTTP 429", not "429": the fake server's port may hold those digits.
        await async_wait_until(lambda: "HTTP 429" in (rig.health.last_error or ""), timeout=60)
        after_429 = len(ollama.hits)
        not_before = rig.health.backoff.not_before
        assert next(delay for error, delay in waits if "HTTP 429" in error) >= 1.0
        await asyncio.sleep(0.6)  # inside the 1 s Retry-After: no call may come
        # A call the fake server saw before the wait ended was made inside it (a busy host can make
        # the sleep outlast the wait, and a call after it is allowed).
        early = [hit - not_before for hit in ollama.hits[after_429:] if hit < not_before]
        assert early == [], f"called again {early} s before Retry-After passed"
        assert (await rig.search("salmon boiler"))[1] == ["dense"]

        ollama.mode = "hang"  # no chunk has a vector yet: the query needs none, the hang is not waited on
        await async_wait_until(rig.health.usable, timeout=60)
        watch = PathStopwatch()
        results, degraded = await rig.search("salmon boiler")
        assert degraded == [] and "salmon" in results[0]["snippet"]
        assert watch.own() < 2.0, (watch.own(), watch.wall())

        ollama.mode = "ok"
        ollama.release.set()
        await rig.settle()
        assert rig.health.state == "ready"
        results, degraded = await rig.search("which pet food does the cat like")
        assert degraded == [] and "Miso" in results[0]["snippet"]

        ollama.release.clear()
        ollama.mode = "hang"  # with vectors: the search gives up after its 0.3 s query timeout, not httpx's 5 s
        bm25 = [h.as_json("agent") for h in await rig.tier.search("boiler service monday", 5)]
        watch = PathStopwatch()
        results, degraded = await rig.search("boiler service monday")
        assert degraded == ["dense"] and results == bm25
        assert watch.own() < 2.0, (watch.own(), watch.wall())
        ollama.release.set()
    await embedder.aclose()


async def test_the_sidecar_wires_the_searcher_batcher_and_status(sidecar_client: ClientFactory, memory: Path) -> None:
    client = await sidecar_client(embedder="onnx", memory_dir=str(memory))
    app = client.server.app
    assert isinstance(app[SIDECAR].embedder, OnnxEmbedder)
    # What is wired, not how fast: on a host kept busy a query's embedding may take over the
    # default second, and the answer is then rightly BM25 alone ("degraded").
    app[SIDECAR].hybrid.query_timeout = HANG_GUARD_S
    batcher = app[SIDECAR].batcher
    assert batcher is not None
    index = app[SIDECAR].hybrid.vectors["agent"]
    await async_wait_until(lambda: index.size == 3 and index.backlog == 0, timeout=60)
    status = embed_status(app[SIDECAR].hybrid, app[SIDECAR].batcher)["embedder"]
    assert status == {
        "state": "ready",
        "model": "minilm-l6-v2-int8",
        "dim": 384,
        "search": "hybrid",
        "fusion": "weighted",
        "vectors": 3,
        "backlog": 0,
    }
    results, degraded = await app[SIDECAR].hybrid.search(
        app[SIDECAR].tiers["agent"], "which pet food does the cat like", 3, False
    )
    assert degraded == [] and "Miso" in results[0]["snippet"]
    # The same through the HTTP API, with explain, and the status route.
    resp = await client.post("/memory/search", json={"query": "which pet food does the cat like", "explain": True})
    body = await resp.json()
    assert resp.status == 200 and "degraded" not in body and "Miso" in body["results"][0]["snippet"]
    assert {"bm25", "dense", "fused"} <= set(body["results"][0]["explain"])
    status = await (await client.get("/memory/status")).json()
    assert status["embedder"]["search"] == "hybrid" and status["embedder"]["backlog"] == 0


async def test_the_sidecar_without_an_embedder_says_bm25_only(sidecar_client: ClientFactory) -> None:
    client = await sidecar_client(embedder="none")
    app = client.server.app
    assert app[SIDECAR].batcher is None
    assert embed_status(app[SIDECAR].hybrid, app[SIDECAR].batcher)["embedder"] == {
        "state": "none",
        "model": None,
        "dim": None,
        "search": "bm25",
        "fusion": None,
        "vectors": 0,
        "backlog": 0,
    }


async def test_a_dense_only_hit_shows_its_closest_sentence_over_http(
    sidecar_client: ClientFactory, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    write(root, "topics/notes.md", NOTES)
    client = await sidecar_client(embedder="onnx", memory_dir=str(root))
    index = client.server.app[SIDECAR].hybrid.vectors["agent"]
    await async_wait_until(lambda: index.size > 0 and index.backlog == 0, timeout=60)
    query = "which pet food does the cat like"
    resp = await client.post("/memory/search", json={"query": query, "explain": True})
    hit = (await resp.json())["results"][0]
    assert hit["explain"]["bm25"]["rank"] is None, "the query shares no word with the notes"
    assert hit["snippet"].startswith("Our feline companion Miso"), hit["snippet"]
    assert hit["highlights"] == []
