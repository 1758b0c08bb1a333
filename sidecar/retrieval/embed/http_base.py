"""What the HTTP embedders (Ollama, OpenAI-compatible) share: the client they own or borrow, the
width learned from the first answer, batching, and closing. Each subclass only says how one
batch is asked for and read back (``_embed_batch``)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from sidecar.retrieval.embed.base import Vectors

__all__ = ["DEFAULT_TIMEOUT", "HttpEmbedder"]

#: Connect fails fast; reads allow for a server loading its model on the first call.
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=2.0)


class HttpEmbedder:
    """Base of the HTTP embedders; outputs L2-normalised float32 rows."""

    prefix = "http"

    def __init__(
        self,
        model: str,
        client: httpx.AsyncClient | None,
        *,
        timeout: httpx.Timeout,
        dim: int | None,
        batch_size: int,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"{type(self).__name__}: batch_size must be >= 1")
        self._model = model
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)
        self._timeout = timeout
        self._dim = dim
        self._batch_size = batch_size

    @property
    def model_id(self) -> str:
        return f"{self.prefix}:{self._model}"

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
        raise NotImplementedError
