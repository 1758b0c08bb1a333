"""OpenAI-compatible embedder: ``POST {base}/v1/embeddings`` (OpenAI, vLLM, llama.cpp, LiteLLM ...).

Rows come back as ``data[i].embedding`` and are put in input order by ``data[i].index``. A base
URL that already ends in ``/v1`` (the usual ``OPENAI_BASE_URL`` form) is not doubled.
"""

from __future__ import annotations

import httpx

from sidecar.retrieval.embed.base import EmbedderError, Vectors
from sidecar.retrieval.embed.http_base import DEFAULT_TIMEOUT, HttpEmbedder
from sidecar.retrieval.embed.retry import post_json, unit_rows

__all__ = ["DEFAULT_TIMEOUT", "OpenAIEmbedder", "embeddings_url"]


def embeddings_url(base_url: str) -> str:
    """``{base}/v1/embeddings``, accepting a base with or without the trailing ``/v1``."""
    base = base_url.rstrip("/")
    return base + ("/embeddings" if base.endswith("/v1") else "/v1/embeddings")


class OpenAIEmbedder(HttpEmbedder):
    """Embeds through an OpenAI-compatible endpoint; outputs L2-normalised float32 rows."""

    prefix = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        dim: int | None = None,
        batch_size: int = 256,
    ) -> None:
        self._url = embeddings_url(base_url)
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        super().__init__(model, client, timeout=timeout, dim=dim, batch_size=batch_size)

    async def _embed_batch(self, texts: list[str]) -> Vectors:
        what = f"openai embeddings ({self._model})"
        payload = {"input": texts, "model": self._model}
        answer = await post_json(
            self._client, self._url, payload, timeouts=self._timeout, what=what, headers=self._headers
        )
        rows = _rows_in_order(answer, len(texts), what)
        vectors = unit_rows(rows, len(texts), self._dim, what)
        self._dim = vectors.shape[1]
        return vectors


def _rows_in_order(answer: object, n: int, what: str) -> list[object]:
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise EmbedderError(f"{what}: answer has no 'data' list")
    if len(data) != n:
        raise EmbedderError(f"{what}: asked for {n} embeddings, got {len(data)}")
    by_index: dict[int, object] = {}
    for item in data:
        index = item.get("index")
        if type(index) is not int or not 0 <= index < n or index in by_index or "embedding" not in item:
            raise EmbedderError(f"{what}: bad or repeated 'index' / missing 'embedding' in data")
        by_index[index] = item["embedding"]
    return [by_index[i] for i in range(n)]
