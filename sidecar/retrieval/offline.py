"""The server's search over a tier dir in this process, for ``memory-sidecar search``: the same
``SearchService`` and ``HybridSearcher`` a server builds (hybrid with the configured embedder,
BM25 without one, the archive's standing applied, injection flags marked), so a hit has the same
rank and score on the command line as over HTTP. Dense scores come from the vectors stored in the
tier's index (a sidecar or ``reindex --embed`` stores them); chunks without one are ranked by BM25
alone, and the answer says how many that is."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.contract import SearchRequest
from sidecar.index.tier import Tier
from sidecar.retrieval.search import SearchService

if TYPE_CHECKING:
    from sidecar.retrieval.embed import Embedder
    from sidecar.retrieval.vectors import VectorIndex
    from sidecar.settings import Settings

__all__ = ["search_dir"]


async def search_dir(root: Path, scope: str, query: str, limit: int, settings: Settings) -> dict[str, Any]:
    """The search answer a sidecar serving ``root`` as ``scope`` would give, plus ``engine``: which
    search answered (``hybrid`` or ``bm25``), the model, why dense was left out, and how many
    chunks have a vector (``backlog``: texts still without one, ranked by BM25 alone)."""
    tier = Tier(scope, root)
    await tier.open(postings=False)
    embedder = await asyncio.to_thread(_embedder, settings)
    vectors: VectorIndex | None = None
    try:
        service = SearchService(tier, crew_tier=tier if scope == "crew" else None)
        if embedder is not None:
            vectors = _hybrid(service, tier, embedder, settings)
            await asyncio.to_thread(vectors.refresh)
        req = SearchRequest.from_json({"query": query, "limit": limit, "scope": scope})
        answer = await service.search(req)
        answer["engine"] = _engine(answer, embedder, vectors, settings)
        return answer
    finally:
        if vectors is not None:
            vectors.close()
        if embedder is not None:
            await embedder.aclose()
        await tier.close()


def _embedder(settings: Settings) -> Embedder | None:
    from sidecar.heap import tune_malloc
    from sidecar.retrieval.embed import make_embedder

    tune_malloc()  # as the server does, before the model's threads start
    return make_embedder(settings)


def _hybrid(service: SearchService, tier: Tier, embedder: Embedder, settings: Settings) -> VectorIndex:
    """Give ``service`` the server's hybrid searcher over ``tier``; return the tier's vectors."""
    from sidecar.retrieval.embed import OnnxEmbedder
    from sidecar.retrieval.embed.availability import EmbedderHealth
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.retrieval.vectors import VectorIndex

    vectors = VectorIndex(tier.index.path, embedder.model_id, embedder.dim)
    health = EmbedderHealth(embedder, confirmed=isinstance(embedder, OnnxEmbedder))
    service.hybrid = HybridSearcher(embedder, health, {tier.name: vectors}, fusion=settings.fusion)
    return vectors


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
