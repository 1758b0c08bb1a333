"""The semantic layer for a caller that may have no model at hand.

``semantic.layer_for`` lives with the layer, which needs numpy. A BM25-only sidecar has no
in-process model, so its writes and its memory block are judged by the rules alone: asking for
the layer through ``semantic_layer`` imports neither the layer nor numpy there (some 10 MB of an
idle process that would otherwise stay after its first write or block).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.scanner.semantic import SemanticLayer

__all__ = ["semantic_layer"]


def semantic_layer(embedder: object | None) -> SemanticLayer | None:
    """``semantic.layer_for(embedder)``; None, with nothing imported, when ``embedder`` is not the
    in-process model (it has no ``embed_sync``: no embedder, or a remote one)."""
    if not callable(getattr(embedder, "embed_sync", None)):
        return None
    from sidecar.scanner.semantic import layer_for

    return layer_for(embedder)
