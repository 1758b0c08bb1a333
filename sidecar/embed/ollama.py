"""Ollama embedder: ``POST {base}/api/embed`` with a batch of inputs (e.g. ``nomic-embed-text``).

The width is learned from the first answer unless a ``dim`` hint is given; after that every answer
must match it, so a model swapped under the same name cannot mix widths in one index.
"""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from sidecar.embed.base import EmbedderError, Vectors
from sidecar.embed.retry import post_json, unit_rows

__all__ = ["DEFAULT_TIMEOUT", "OllamaEmbedder"]

#: Connect fails fast; reads allow for Ollama loading the model on its first call.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=2.0)


class OllamaEmbedder:
    """Embeds through a local or remote Ollama server; outputs L2-normalised float32 rows."""

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
        if batch_size < 1:
            raise ValueError("OllamaEmbedder: batch_size must be >= 1")
        self._url = base_url.rstrip("/") + "/api/embed"
        self._model = model
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)
        self._timeout = timeout
        self._dim = dim
        self._batch_size = batch_size

    @property
    def model_id(self) -> str:
        return f"ollama:{self._model}"

    @property
    def dim(self) -> int:
        """Vector width: the hint, else learned from the first answer; 0 until then."""
        return self._dim or 0

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in batches of ``batch_size``; raises EmbedderUnavailable / EmbedderError."""
        texts = list(texts)
        parts = [
            await self._embed_batch(texts[i : i + self._batch_size]) for i in range(0, len(texts), self._batch_size)
        ]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    async def aclose(self) -> None:
        """Close the HTTP client if this embedder created it."""
        if self._owns_client:
            await self._client.aclose()

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        what = f"ollama embed ({self._model})"
        payload = {"model": self._model, "input": texts, "truncate": True}
        answer = await post_json(self._client, self._url, payload, timeouts=self._timeout, what=what)
        if not isinstance(answer, dict) or "embeddings" not in answer:
            raise EmbedderError(f"{what}: answer has no 'embeddings'")
        vectors = unit_rows(answer["embeddings"], len(texts), self._dim, what)
        self._dim = vectors.shape[1]
        return vectors
