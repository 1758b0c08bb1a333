"""Ollama embedder: ``POST {base}/api/embed`` with a batch of inputs (e.g. ``nomic-embed-text``).

The width is learned from the first answer unless a ``dim`` hint is given; after that every answer
must match it, so a model swapped under the same name cannot mix widths in one index.
"""

from __future__ import annotations

import httpx

from sidecar.retrieval.embed.base import EmbedderError, Vectors
from sidecar.retrieval.embed.http_base import DEFAULT_TIMEOUT, HttpEmbedder
from sidecar.retrieval.embed.retry import post_json, unit_rows

__all__ = ["DEFAULT_TIMEOUT", "OllamaEmbedder"]


class OllamaEmbedder(HttpEmbedder):
    """Embeds through a local or remote Ollama server; outputs L2-normalised float32 rows."""

    prefix = "ollama"

    def __init__(
        self,
        base_url: str,
        model: str,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        dim: int | None = None,
        batch_size: int = 64,
    ) -> None:
        self._url = base_url.rstrip("/") + "/api/embed"
        super().__init__(model, client, timeout=timeout, dim=dim, batch_size=batch_size)

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        what = f"ollama embed ({self._model})"
        payload = {"model": self._model, "input": texts, "truncate": True}
        answer = await post_json(self._client, self._url, payload, timeouts=self._timeout, what=what)
        if not isinstance(answer, dict) or "embeddings" not in answer:
            raise EmbedderError(f"{what}: answer has no 'embeddings'")
        vectors = unit_rows(answer["embeddings"], len(texts), self._dim, what)
        self._dim = vectors.shape[1]
        return vectors
