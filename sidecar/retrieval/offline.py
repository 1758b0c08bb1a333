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
import bisect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sidecar.contract import SearchRequest
from sidecar.index.files import read_tier_file
from sidecar.index.tier import Tier
from sidecar.retrieval.flags import CLEAN_FILES, FlagCache, load_remembered, save_clean
from sidecar.retrieval.search import SearchService
from sidecar.write.scan_tail import file_digest

# The embedders' modules (numpy among them) are imported when an embedder is configured, so a BM25
# search (embedder none) starts without them.
if TYPE_CHECKING:
    from sidecar.retrieval.embed import Embedder
    from sidecar.retrieval.embed.base import Vectors
    from sidecar.retrieval.hybrid import HybridSearcher
    from sidecar.retrieval.vectors import VectorIndex
    from sidecar.scanner.scan import SectionFinding
    from sidecar.scanner.sections import Section
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
    """The flag cache of a search in this process, remembering across commands what the injection
    scanner found clean (``CLEAN_FILES`` in the tier dir, all of it under a digest of the scanner's
    code): whole files, and the sections of others (their lines), each by a digest of the file's bytes. A
    search whose hits are all in files or sections remembered clean and unchanged does not load the
    scanner, whose rules take most of a command's start. Of the other files shown, the sections the
    hits are in are judged, each as a server judges it: a section's verdict reads that section and
    the one before it, never the rest of the file, so a hit is marked as the server marks it, and a
    file whose every section has been found clean, one search after another, is remembered whole. A
    flagged section is never remembered: it is judged again each time."""

    def __init__(self, root: Path, tier: str) -> None:
        super().__init__()
        self.root, self.tier = root, tier
        self.clean, self.parts = load_remembered(root)
        self.changed = False

    async def mark(self, results: list[dict[str, Any]], roots: dict[str, Path]) -> list[dict[str, Any]]:
        if roots.get(self.tier) != self.root:
            return await super().mark(results, roots)
        lines: dict[str, set[int]] = {}
        for hit in results:
            if hit["source"] == self.tier and "flagged" not in hit:
                lines.setdefault(hit["path"], set()).add(int(hit["line_start"]))
        found = await asyncio.to_thread(self._judge, lines) if lines else {}
        if not any(found.values()):
            return results  # the common case: nothing flagged where the hits are
        from sidecar.scanner.scan import finding_at

        out = []
        for hit in results:
            sections = found.get(hit["path"]) if hit["source"] == self.tier else None
            at = finding_at(sections, int(hit["line_start"])) if sections else None
            out.append({**hit, "flagged": at.as_json()} if at is not None else hit)
        return out

    def _judge(self, lines: dict[str, set[int]]) -> dict[str, list[SectionFinding]]:
        """The flagged sections of each file ``lines`` names, among those holding its lines; what was
        found clean is remembered."""
        unknown: dict[str, tuple[bytes, str, frozenset[tuple[int, int]]]] = {}
        for rel, shown in lines.items():
            data = read_tier_file(self.root, rel)
            if data is None:
                continue  # gone since it was indexed: no section of it to mark
            digest = file_digest(data).hex()
            if self.clean.get(rel) == digest:
                continue
            known, spans = self.parts.get(rel, ("", frozenset()))
            if known != digest:
                spans = frozenset()  # remembered of other bytes: none holds
            elif all(any(first <= line <= last for first, last in spans) for line in shown):
                continue  # every hit's section is remembered clean: the file is not even split
            unknown[rel] = (data, digest, spans)
        if not unknown:
            return {}
        from sidecar.scanner.sections import split_sections

        found: dict[str, list[SectionFinding]] = {}
        for rel, (data, digest, spans) in unknown.items():
            text = data.decode("utf-8", errors="replace")
            sections = split_sections(text)
            starts = [section.line_start for section in sections]
            wanted = {bisect.bisect_right(starts, line) - 1 for line in lines[rel]} - {-1}
            clean = {i for i, section in enumerate(sections) if (section.line_start, section.line_end) in spans}
            judged = _judged(text, sections, sorted(wanted - clean))
            found[rel] = [finding for _, finding in judged]
            clean |= wanted - {index for index, _ in judged}
            before = (self.clean.get(rel), self.parts.get(rel))
            if len(clean) == len(sections) and not judged:
                self.clean[rel] = digest  # the bytes judged are the bytes digested
                self.parts.pop(rel, None)
            else:
                self.clean.pop(rel, None)
                if clean:
                    self.parts[rel] = (digest, frozenset((sections[i].line_start, sections[i].line_end) for i in clean))
                else:
                    self.parts.pop(rel, None)
            self.changed = self.changed or before != (self.clean.get(rel), self.parts.get(rel))
        return found

    def save(self) -> None:
        """Write what is remembered, if it changed (``save_clean``)."""
        if self.changed:
            save_clean(self.root, self.clean, self.parts)


def _judged(text: str, sections: list[Section], indexes: list[int]) -> list[tuple[int, SectionFinding]]:
    """``judged_sections`` with the server's verdicts (``VERDICTS``); the scanner is not loaded for
    no section."""
    if not indexes:
        return []
    from sidecar.prompt.verdicts import VERDICTS
    from sidecar.scanner.scan import judged_sections

    return judged_sections(text, sections, indexes, VERDICTS.section)
