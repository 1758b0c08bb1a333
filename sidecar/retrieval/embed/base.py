"""The embedder interface every implementation (in-process ONNX, Ollama, OpenAI-compatible) meets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    # numpy is imported where vectors are made: a sidecar without an embedder never loads it.
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BackgroundEmbedder",
    "Embedder",
    "EmbedderError",
    "EmbedderUnavailable",
    "EmbedsHere",
    "LoadsOnUse",
    "Vectors",
    "embed_in_background",
    "from_blob",
    "to_blob",
]

Vectors: TypeAlias = "npt.NDArray[np.float32]"


class EmbedderError(Exception):
    """An embedding call failed; callers degrade to BM25 and retry later."""


class EmbedderUnavailable(EmbedderError):
    """The embedder is down, hung, or rate limited (``retry_after`` seconds, if it said)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@runtime_checkable
class Embedder(Protocol):
    """Embeds a batch of texts into L2-normalised float32 rows of width ``dim``."""

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """Return an (len(texts), dim) float32 array, each row L2-normalised."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class LoadsOnUse(Protocol):
    """An embedder that loads its model on first use; ``load`` does it now (a caller that times
    its calls loads first)."""

    async def load(self) -> None: ...


@runtime_checkable
class EmbedsHere(Protocol):
    """An embedder whose model runs in this process: ``embed_here`` is ``embed``'s work done on
    the calling thread, for a caller already off the event loop that has more to do there after
    it (a search ranks with its query's vector in the same worker call)."""

    def embed_here(self, texts: Sequence[str]) -> Vectors:
        """As ``embed``, on the calling thread."""
        ...


@runtime_checkable
class BackgroundEmbedder(Embedder, Protocol):
    """An embedder with a low-priority path for backlogs, so queries (``embed``) never wait behind one."""

    async def embed_background(self, texts: Sequence[str]) -> Vectors:
        """As ``embed``, after the backlog calls before it and after whatever is more urgent."""
        ...


async def embed_in_background(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """Embed a backlog's ``texts``: the embedder's background path where it has one (in-process
    compute), else ``embed`` (a remote embedder computes elsewhere and serves calls side by side)."""
    if isinstance(embedder, BackgroundEmbedder):
        return await embedder.embed_background(texts)
    return await embedder.embed(texts)


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    """Little-endian float32 bytes: how every vector is stored (chunk vectors, journal embeddings)."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dim: int) -> npt.NDArray[np.float32] | None:
    """The stored vector, or None when the blob does not hold ``dim`` floats."""
    if len(blob) != 4 * dim:
        return None
    import numpy as np

    return np.frombuffer(blob, dtype="<f4").astype(np.float32)
