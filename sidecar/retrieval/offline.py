"""The server's search over a tier dir in this process, for ``memory-sidecar search``: the same
``SearchService`` and ``HybridSearcher`` a server builds (hybrid with the configured embedder,
BM25 without one, the archive's standing applied, injection flags marked), so a hit has the same
rank and score on the command line as over HTTP. Dense scores come from the vectors stored in the
tier's index (a sidecar or ``reindex --embed`` stores them); chunks without one are ranked by BM25
alone, and the answer says how many that is. While no chunk of the tier has a vector, the dense
leg is empty whatever the query: the in-process model is then loaded only if an answer needs a
vector after all (a dialogue turn shown for its neighbour's words shows its sentence closest to
the query), and the answer is the same."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.contract import SearchRequest
from sidecar.index.files import read_tier_file
from sidecar.index.tier import Tier
from sidecar.retrieval.flags import CLEAN_FILES, FlagCache, load_clean, save_clean
from sidecar.retrieval.search import SearchService
from sidecar.write.scan_tail import file_digest

# The embedders' modules (numpy among them) are imported when an embedder is configured, so a BM25
# search (embedder none) starts without them.
if TYPE_CHECKING:
    from sidecar.retrieval.embed import Embedder
    from sidecar.retrieval.embed.base import Vectors
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.retrieval.vectors import VectorIndex
    from sidecar.settings import Settings

__all__ = ["CLEAN_FILES", "LoadedOnUse", "RememberedFlags", "search_dir"]


async def search_dir(root: Path, scope: str, query: str, limit: int, settings: Settings) -> dict[str, Any]:
    """The search answer a sidecar serving ``root`` as ``scope`` would give, plus ``engine``: which
    search answered (``hybrid`` or ``bm25``), the model, why dense was left out, and how many
    chunks have a vector (``backlog``: texts still without one, ranked by BM25 alone)."""
    tier = Tier(scope, root)
    await tier.open(postings=False)
    embedder = await asyncio.to_thread(_embedder, settings, tier)
    vectors: VectorIndex | None = None
    try:
        hybrid: HybridSearcher | None = None
        if embedder is not None:
            hybrid, vectors = _hybrid(tier, embedder, settings)
            await asyncio.to_thread(vectors.refresh)
        flags = RememberedFlags(root, scope)
        service = SearchService(tier, crew_tier=tier if scope == "crew" else None, hybrid=hybrid, flags=flags)
        req = SearchRequest.from_json({"query": query, "limit": limit, "scope": scope})
        answer = await service.search(req)
        answer["engine"] = _engine(answer, embedder, vectors, settings)
        await asyncio.to_thread(flags.save)
        return answer
    finally:
        if vectors is not None:
            vectors.close()
        if embedder is not None:
            await embedder.aclose()
        await tier.close()


def _embedder(settings: Settings, tier: Tier) -> Embedder | None:
    if settings.embedder == "none":
        return None
    from sidecar.heap import tune_malloc
    from sidecar.retrieval.embed import OnnxEmbedder, make_embedder

    tune_malloc()  # as the server does, before the model's threads start
    if settings.embedder in ("auto", "onnx") and OnnxEmbedder.available() and not _stored(tier):
        return LoadedOnUse(lambda: make_embedder(settings))
    return make_embedder(settings)


def _stored(tier: Tier) -> bool:
    """Whether any chunk of the tier's index has a vector of the in-process model (when none has,
    the vectors' matrix is empty)."""
    from sidecar.index.db import connect_reader
    from sidecar.retrieval.embed.onnx import DIM, MODEL_ID

    conn = connect_reader(tier.index.path)
    try:
        sql = "SELECT 1 FROM embeddings WHERE model = ? AND dim = ? AND hash IN (SELECT hash FROM chunks) LIMIT 1"
        return conn.execute(sql, (MODEL_ID, DIM)).fetchone() is not None
    finally:
        conn.close()


class LoadedOnUse:
    """The in-process embedder, loaded (off the event loop) on its first use rather than up front:
    a search over a tier with no vector may need no model run at all."""

    def __init__(self, load: Callable[[], Embedder | None]) -> None:
        from sidecar.retrieval.embed.onnx import DIM, MODEL_ID

        self._load = load
        self._inner: Embedder | None = None
        self._model_id, self._dim = MODEL_ID, DIM

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._inner is not None

    async def load(self) -> None:
        """Load the model now, if it is not loaded yet."""
        if self._inner is None:
            inner = await asyncio.to_thread(self._load)
            if inner is None:
                from sidecar.retrieval.embed.base import EmbedderError

                raise EmbedderError("the in-process model is not installed")
            self._inner = inner

    async def embed(self, texts: Sequence[str]) -> Vectors:
        await self.load()
        assert self._inner is not None
        return await self._inner.embed(texts)

    async def aclose(self) -> None:
        if self._inner is not None:
            await self._inner.aclose()


def _hybrid(tier: Tier, embedder: Embedder, settings: Settings) -> tuple[HybridSearcher, VectorIndex]:
    """The server's hybrid searcher over ``tier``, and the tier's vectors it reads."""
    from sidecar.retrieval.embed import OnnxEmbedder
    from sidecar.retrieval.embed.availability import EmbedderHealth
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.retrieval.vectors import VectorIndex

    vectors = VectorIndex(tier.index.path, embedder.model_id, embedder.dim)
    health = EmbedderHealth(embedder, confirmed=isinstance(embedder, OnnxEmbedder))
    return HybridSearcher(embedder, health, {tier.name: vectors}, fusion=settings.fusion), vectors


def _engine(
    answer: dict[str, Any], embedder: Embedder | None, vectors: VectorIndex | None, settings: Settings
) -> dict[str, Any]:
    if embedder is None or vectors is None:
        why = "the embedder setting is none" if settings.embedder == "none" else "no embedding model is installed"
        return {"search": "bm25", "why": why}
    with_vector, backlog = vectors.counts()
    engine: dict[str, Any] = {"search": "hybrid", "fusion": settings.fusion, "model": embedder.model_id}
    if "dense" in answer.get("degraded", []):
        engine.update(search="bm25", why="the embedder failed or was too slow")
    engine["vectors"] = {"chunks": with_vector, "backlog": backlog}
    return engine


class RememberedFlags(FlagCache):
    """The flag cache of a search in this process, remembering across commands which files the
    injection scanner found clean (``CLEAN_FILES`` in the tier dir: each file by a digest of its
    bytes, all of them under a digest of the scanner's code). A search whose shown files are all
    remembered clean and unchanged does not load the scanner, whose rules take most of a command's
    start to compile; any other file is scanned as a server scans it. Files with a finding are not
    remembered: their verdicts are scanned again each time."""

    def __init__(self, root: Path, tier: str) -> None:
        super().__init__()
        self.root, self.tier = root, tier
        self.clean, self.changed = self._load(), False

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        shown = {h["path"] for h in results if h["source"] == self.tier and roots.get(self.tier) == self.root}
        before = await asyncio.to_thread(lambda: {rel: _digest(self.root, rel) for rel in shown})
        for rel, digest in before.items():
            if digest is not None and self.clean.get(rel) == digest:
                self._known.setdefault((self.tier, rel), [])
        marked = await super().mark(results, roots)
        for rel in [rel for rel in before if rel in self.clean and self._known.get((self.tier, rel))]:
            del self.clean[rel]  # found with a finding now: forgotten
            self.changed = True
        fresh = [
            rel
            for rel, d in before.items()
            if d and self.clean.get(rel) != d and self._known.get((self.tier, rel)) == []
        ]
        if fresh:  # remembered only when the bytes scanned are the bytes digested (unchanged since)
            after = await asyncio.to_thread(lambda: {rel: _digest(self.root, rel) for rel in fresh})
            for rel in fresh:
                if after[rel] == before[rel]:
                    self.clean[rel], self.changed = before[rel] or "", True
        return marked

    def _load(self) -> dict[str, str]:
        return load_clean(self.root)

    def save(self) -> None:
        """Write what is remembered, if it grew (``save_clean``)."""
        if self.changed:
            save_clean(self.root, self.clean)


def _digest(root: Path, rel: str) -> str | None:
    """The file's digest as ``CLEAN_FILES`` keeps it (the server's flag cache digests it the same way)."""
    data = read_tier_file(root, rel)
    return None if data is None else file_digest(data).hex()
