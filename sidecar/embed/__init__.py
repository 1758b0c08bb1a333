"""Embedders: turn texts into L2-normalised float32 vectors for dense retrieval.

In-process ONNX (default when installed), Ollama or any OpenAI-compatible endpoint, chosen by
``make_embedder(settings)``. Importing this package never imports onnxruntime.
"""

from __future__ import annotations

from sidecar.embed.base import Embedder, EmbedderError, EmbedderUnavailable, Vectors
from sidecar.embed.factory import make_embedder
from sidecar.embed.ollama import OllamaEmbedder
from sidecar.embed.onnx import OnnxEmbedder
from sidecar.embed.openai import OpenAIEmbedder
from sidecar.embed.retry import Backoff

__all__ = [
    "Backoff",
    "Embedder",
    "EmbedderError",
    "EmbedderUnavailable",
    "OllamaEmbedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "Vectors",
    "make_embedder",
]
