"""Embedders: turn texts into L2-normalised float32 vectors for dense retrieval.

In-process ONNX (default when installed), Ollama or any OpenAI-compatible endpoint, chosen by
``make_embedder(settings)``. Importing this package never imports onnxruntime.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sidecar.retrieval.embed.base import (
    BackgroundEmbedder,
    Embedder,
    EmbedderError,
    EmbedderUnavailable,
    Vectors,
    embed_in_background,
)
from sidecar.retrieval.embed.factory import make_embedder
from sidecar.retrieval.embed.retry import Backoff

if TYPE_CHECKING:
    from sidecar.retrieval.embed.ollama import OllamaEmbedder
    from sidecar.retrieval.embed.onnx import OnnxEmbedder
    from sidecar.retrieval.embed.openai import OpenAIEmbedder

__all__ = [
    "BackgroundEmbedder",
    "Backoff",
    "Embedder",
    "EmbedderError",
    "EmbedderUnavailable",
    "OllamaEmbedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "Vectors",
    "embed_in_background",
    "make_embedder",
]


def __getattr__(name: str) -> Any:
    """The embedders load on first use (the HTTP ones with httpx, the in-process one with numpy):
    a sidecar without them never pays."""
    if name == "OnnxEmbedder":
        from sidecar.retrieval.embed.onnx import OnnxEmbedder

        return OnnxEmbedder
    if name == "OllamaEmbedder":
        from sidecar.retrieval.embed.ollama import OllamaEmbedder

        return OllamaEmbedder
    if name == "OpenAIEmbedder":
        from sidecar.retrieval.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
